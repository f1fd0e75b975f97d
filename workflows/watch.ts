import {
  ActivityCancellationType,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { GcActivities, GcSummary } from '../activities/gc/activity';
import type { WatchActivities } from '../activities/watch/activity';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

const watchActivities = (taskQueue: string) =>
  proxyActivities<WatchActivities>({
    taskQueue,
    // The watcher runs for as long as the cluster is enabled; the heartbeat is its liveness.
    startToCloseTimeout: '3650 days',
    heartbeatTimeout: '30 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  }).watchCluster;

const gcActivities = (taskQueue: string) =>
  proxyActivities<GcActivities>({
    taskQueue,
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
  }).collectGarbage;

export interface WatchStatus {
  cluster: string;
  watching: boolean;
  lastGc?: GcSummary & { at: string };
  instancesCollected: number;
}

export const watchStatusQuery = defineQuery<WatchStatus>('status');

export const watchWorkflowId = (cluster: string) => `autonode/${cluster}/watch`;

export interface WatchWorkflowInput {
  cluster: ClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** how often leaked instances are collected (Karpenter: 2 minutes); `Never` turns it off */
  gcInterval?: string;
  /** instances younger than this are never collected (default 30s: a launch may not be recorded yet) */
  gcMinAge?: string;
  /** carried across continue-as-new */
  instancesCollected?: number;
}

/**
 * One per cluster: keeps the cluster watcher activity running (restarted with backoff when
 * it fails or its heartbeat stops) and collects leaked instances on a timer. The GC loop
 * grows history, so the workflow continues as new when suggested — stopping the watcher
 * cleanly first. Cancelling the workflow stops both.
 */
export async function watchWorkflow(input: WatchWorkflowInput): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse(input.taskQueues ?? defaultTaskQueues);
  const watchCluster = watchActivities(taskQueues.control);
  const collectGarbage = gcActivities(taskQueues.cloud);
  const gcMs = durationToMs(input.gcInterval ?? '2m');
  const status: WatchStatus = { cluster: cluster.name, watching: true, instancesCollected: input.instancesCollected ?? 0 };
  setHandler(watchStatusQuery, () => status);
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Watching' },
  ]);

  const watcher = new CancellationScope();
  const watching = watcher.run(() => watchCluster(cluster, taskQueues)).catch((err: unknown) => {
    if (!isCancellation(err)) throw err;
  });
  let rollOver = false;
  try {
    if (gcMs === undefined) {
      await watching;
      return;
    }
    const gcLoop = (async () => {
      while (!workflowInfo().continueAsNewSuggested) {
        await sleep(gcMs);
        const summary = await collectGarbage(cluster, { minAgeMs: durationToMs(input.gcMinAge ?? '30s') }).catch(() => undefined); // next round retries
        if (summary) {
          status.lastGc = { ...summary, at: new Date().toISOString() };
          status.instancesCollected += summary.terminated.length;
        }
      }
      rollOver = true;
    })().catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
    });
    await Promise.race([watching, gcLoop]);
  } catch (err) {
    if (!isCancellation(err)) throw err;
  } finally {
    status.watching = false;
    watcher.cancel();
    await CancellationScope.nonCancellable(async () => {
      await watching.catch(() => undefined);
      upsertSearchAttributes([{ key: AutoNodePhase, value: rollOver ? 'Watching' : 'Stopped' }]);
    });
  }
  if (rollOver) {
    await condition(allHandlersFinished);
    await continueAsNew<typeof watchWorkflow>({ ...input, instancesCollected: status.instancesCollected });
  }
}
