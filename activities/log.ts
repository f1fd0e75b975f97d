import { asyncLocalStorage } from '@temporalio/activity';

/**
 * A line in the running activity's log: the worker's logger (workers/logging.ts) adds the
 * activity's workflow id, run id and type, and `fields` say which cluster and NodeClaim.
 * Outside an activity (a test calling an activity body directly) it says nothing.
 * Fields must never carry credentials or whole objects: names and ids only.
 */
export function activityLog(level: 'debug' | 'info' | 'warn', message: string, fields: Record<string, string | number | boolean>): void {
  asyncLocalStorage.getStore()?.log[level](message, fields);
}
