import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from './activity-options';
import { declareVersioningBehavior } from './versioning';
import type { GcActivities, GcSummary } from '../activities/gc/activity';
import type { WatchActivities } from '../activities/watch/activity';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { GcFailureSchema, gcRoundFailed, gcRoundSucceeded, type GcFailure } from './gc-failures';
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
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
  }).collectGarbage;

const gcEventActivities = (taskQueue: string) =>
  proxyActivities<WatchActivities>({
    taskQueue,
    startToCloseTimeout: '30 seconds',
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
  }).recordGcFailure;

export interface WatchStatus {
  cluster: string;
  watching: boolean;
  lastGc?: GcSummary & { at: string };
  /** the latest failed GC round (workflows/gc-failures.ts); kept after GC works again */
  lastGcError?: GcFailure;
  instancesCollected: number;
}

export const watchStatusQuery = defineQuery<WatchStatus>('status');

export { watchWorkflowId } from '../core/lifecycle';

export interface WatchWorkflowInput {
  cluster: ClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** how often leaked instances are collected (Karpenter: 2 minutes); `Never` turns it off */
  gcInterval?: string;
  /** instances younger than this are never collected (default 30s: a launch may not be recorded yet) */
  gcMinAge?: string;
  /** carried across continue-as-new */
  instancesCollected?: number;
  /** carried across continue-as-new */
  lastGcError?: GcFailure;
}

/** What a failed activity reports: its cause (ActivityFailure's own message only says that it failed). */
function failureMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * One per cluster: keeps the cluster watcher activity running (restarted with backoff when
 * it fails or its heartbeat stops) and collects leaked instances on a timer. The GC loop
 * grows history, so the workflow continues as new when suggested — stopping the watcher
 * cleanly first. Cancelling the workflow stops both. A failed GC round is retried by the
 * next one and surfaced: in the `status` query, and as one Warning Event per run of
 * failures.
 */
export async function watchWorkflow(input: WatchWorkflowInput): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse(input.taskQueues ?? defaultTaskQueues);
  const watchCluster = watchActivities(taskQueues.control);
  const collectGarbage = gcActivities(taskQueues.cloud);
  const recordGcFailure = gcEventActivities(taskQueues.control);
  const gcMs = durationToMs(input.gcInterval ?? '2m');
  const gcMinAgeMs = durationToMs(input.gcMinAge ?? '30s');
  const lastGcError = input.lastGcError === undefined ? undefined : GcFailureSchema.parse(input.lastGcError);
  const status: WatchStatus = {
    cluster: cluster.name,
    watching: true,
    instancesCollected: input.instancesCollected ?? 0,
    ...(lastGcError ? { lastGcError } : {}),
  };
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
    const gcRound = async (): Promise<void> => {
      let summary: GcSummary;
      try {
        summary = await collectGarbage(cluster, { minAgeMs: gcMinAgeMs });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // Not fatal (the next round retries), but surfaced.
        const failure = gcRoundFailed(status.lastGcError, { message: failureMessage(err), at: new Date().toISOString() });
        status.lastGcError = failure;
        // Older runs replay their failed rounds without this activity.
        if (!failure.warningEventRecorded && patched('surface-gc-failures')) {
          const recorded = await recordGcFailure(cluster, { message: failure.message }).then(
            () => true,
            (eventErr: unknown) => {
              if (isCancellation(eventErr)) throw eventErr;
              log.warn('could not record the GarbageCollectionFailed Event; the next failed round tries again', {
                cluster: cluster.name,
                error: failureMessage(eventErr),
              });
              return false;
            },
          );
          status.lastGcError = { ...failure, warningEventRecorded: recorded };
        }
        return;
      }
      status.lastGc = { ...summary, at: new Date().toISOString() };
      status.instancesCollected += summary.terminated.length;
      const recovered = gcRoundSucceeded(status.lastGcError);
      if (recovered) status.lastGcError = recovered;
    };
    const gcLoop = (async () => {
      while (!workflowInfo().continueAsNewSuggested) {
        await sleep(gcMs);
        await gcRound();
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
    await continueAsNew<typeof watchWorkflow>({
      ...input,
      instancesCollected: status.instancesCollected,
      ...(status.lastGcError ? { lastGcError: status.lastGcError } : {}),
    });
  }
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (patched() and the committed histories
// keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', watchWorkflow);
