import { ActivityCancellationType, CancellationScope, defineQuery, isCancellation, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { WatchActivities } from '../activities/watch/activity';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

const watchActivities = (taskQueue: string) => proxyActivities<WatchActivities>({
  taskQueue,
  // The watcher runs for as long as the cluster is enabled; the heartbeat is its liveness.
  startToCloseTimeout: '3650 days',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
}).watchCluster;

export const watchStatusQuery = defineQuery<{ cluster: string; watching: boolean }>('status');

export const watchWorkflowId = (cluster: string) => `autonode/${cluster}/watch`;

/**
 * One per cluster: keeps the cluster watcher activity running (restarted with backoff when
 * it fails or its heartbeat stops). History stays tiny — one long activity — so there is
 * nothing to continue-as-new. Cancelling the workflow stops the watcher.
 */
export async function watchWorkflow(input: { cluster: ClusterRef; taskQueues?: Partial<TaskQueues> }): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse(input.taskQueues ?? defaultTaskQueues);
  const watchCluster = watchActivities(taskQueues.control);
  let watching = true;
  setHandler(watchStatusQuery, () => ({ cluster: cluster.name, watching }));
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Watching' },
  ]);
  try {
    await watchCluster(cluster, taskQueues);
  } catch (err) {
    if (!isCancellation(err)) throw err;
  } finally {
    watching = false;
    await CancellationScope.nonCancellable(async () => upsertSearchAttributes([{ key: AutoNodePhase, value: 'Stopped' }]));
  }
}
