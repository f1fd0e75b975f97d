import { type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { type temporal } from '@temporalio/proto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PlannedBatch } from '../../core/provisioning';

type History = temporal.api.history.v1.IHistory;

/** Where the histories test/unit/replay.test.ts replays are committed. */
export const HISTORY_FIXTURES_DIR = join(__dirname, '..', 'fixtures', 'histories');

/**
 * Whether this run refreshes the committed history `fixture` (a file name without `.json`):
 * AUTONODE_RECORD_HISTORY=1 refreshes every one a test writes, a comma-separated list only
 * those (scripts/record-histories.sh sets it). Refresh only after a deliberate, patched()
 * change: a fixture of an older shape must stay as it was recorded, or replay stops covering it.
 */
export function recordsHistory(fixture: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const wanted = env.AUTONODE_RECORD_HISTORY?.trim();
  if (!wanted) return false;
  if (wanted === '1' || wanted === 'all') return true;
  return wanted.split(',').map((n) => n.trim().replace(/\.json$/, '')).includes(fixture);
}

/** Writes `fixture`.json from `history()` when this run records it (recordsHistory); the history is fetched only then. */
export async function recordHistory(fixture: string, history: () => Promise<History>): Promise<void> {
  if (!recordsHistory(fixture)) return;
  const h = await history();
  if (!h.events?.length) throw new Error(`recording ${fixture}: the history has no events`);
  writeFileSync(join(HISTORY_FIXTURES_DIR, `${fixture}.json`), historyToJSON(h));
}

/** Every run of a workflow id (it continues as new), oldest first; the latest alone while visibility has none. */
export async function runsOf(client: Client, workflowId: string): Promise<(string | undefined)[]> {
  const runs: { runId: string | undefined; start: number }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  if (runs.length === 0) runs.push({ runId: undefined, start: 0 });
  runs.sort((a, b) => a.start - b.start);
  return runs.map((r) => r.runId);
}

const scheduledTypes = (history: History) =>
  new Set((history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : [])));

/**
 * The history of the latest run of `workflowId` that scheduled every activity in
 * `activityTypes` (e.g. the run of a disruption workflow that carried out a command): a
 * fixture of one path through the workflow, whichever run it fell in.
 */
export async function runHistoryWith(client: Client, workflowId: string, activityTypes: readonly string[]): Promise<History> {
  const runs = await runsOf(client, workflowId);
  for (const runId of runs.reverse()) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const types = scheduledTypes(history);
    if (activityTypes.every((t) => types.has(t))) return history;
  }
  throw new Error(`no run of ${workflowId} scheduled all of ${activityTypes.join(', ')} (${runs.length} run(s))`);
}

/**
 * Every `planBatch` result with claims that a provisioner recorded in its histories — each
 * run of the workflow id, oldest first (a provisioner continues as new) — decoded from the
 * payloads, as an operator would read them in the Temporal UI.
 */
export async function recordedPlans(client: Client, workflowId: string): Promise<PlannedBatch[]> {
  const plans: PlannedBatch[] = [];
  for (const runId of await runsOf(client, workflowId)) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const activityOf = new Map<string, string>();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) activityOf.set(String(event.eventId), scheduled.activityType?.name ?? '');
      const done = event.activityTaskCompletedEventAttributes;
      const payload = done?.result?.payloads?.[0];
      if (done && payload && activityOf.get(String(done.scheduledEventId)) === 'planBatch') {
        const planned = defaultPayloadConverter.fromPayload<PlannedBatch>(payload);
        if (planned.claims.length > 0) plans.push(planned);
      }
    }
  }
  return plans;
}

export interface ActivityCall {
  type: string;
  /** the first argument, decoded */
  input: unknown;
  /** the attempt that completed (or is running); retries write no events of their own, only this number */
  attempt?: number;
  completed: boolean;
}

/** Every activity a workflow id scheduled, over all its runs, oldest first, with its input and the attempt that ran it. */
export async function activityCalls(client: Client, workflowId: string): Promise<ActivityCall[]> {
  const calls: ActivityCall[] = [];
  for (const runId of await runsOf(client, workflowId)) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const byScheduled = new Map<string, ActivityCall>();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) {
        const payload = scheduled.input?.payloads?.[0];
        const call: ActivityCall = { type: scheduled.activityType?.name ?? '', input: payload ? defaultPayloadConverter.fromPayload(payload) : undefined, completed: false };
        byScheduled.set(String(event.eventId), call);
        calls.push(call);
      }
      const started = event.activityTaskStartedEventAttributes;
      const startedCall = started ? byScheduled.get(String(started.scheduledEventId)) : undefined;
      if (started && startedCall) startedCall.attempt = started.attempt ?? undefined;
      const done = event.activityTaskCompletedEventAttributes;
      const doneCall = done ? byScheduled.get(String(done.scheduledEventId)) : undefined;
      if (doneCall) doneCall.completed = true;
    }
  }
  return calls;
}
