// The integration runs' workflow bundle: autonode's own workflows plus a smoke workflow
// that proves a round trip (workflow → activity → search attributes → query) on the real
// server. Bundled once per run by the global setup.
import { proxyActivities, upsertSearchAttributes, defineQuery, setHandler } from '@temporalio/workflow';
import { AutoNodeCluster, AutoNodePhase } from '../../workflows/search-attributes';
import type { GcActivities } from '../../activities/gc/activity';
import type { ClusterRef } from '../../core/lifecycle';

export * from '../../workflows/index';

export interface SmokeActivities {
  greet(name: string): Promise<string>;
}

const { greet } = proxyActivities<SmokeActivities>({ startToCloseTimeout: '10 seconds' });

export const phaseQuery = defineQuery<string>('phase');

export async function smokeWorkflow(input: { cluster: string; name: string }): Promise<string> {
  let phase = 'Starting';
  setHandler(phaseQuery, () => phase);
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: input.cluster },
    { key: AutoNodePhase, value: 'Greeting' },
  ]);
  const greeting = await greet(input.name);
  phase = 'Done';
  upsertSearchAttributes([{ key: AutoNodePhase, value: phase }]);
  return greeting;
}

/**
 * One garbage-collection pass of `cluster` on the cloud queue `taskQueue`, attempted once:
 * for worker-shutdown.test.ts, which stops the worker running it while it is in flight.
 */
export async function collectGarbageOnceWorkflow(input: { taskQueue: string; cluster: ClusterRef }): Promise<unknown> {
  const { collectGarbage } = proxyActivities<GcActivities>({ taskQueue: input.taskQueue, startToCloseTimeout: '45 seconds', retry: { maximumAttempts: 1 } });
  return collectGarbage(input.cluster);
}
