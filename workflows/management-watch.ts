import {
  ActivityCancellationType,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { declareVersioningBehavior } from './versioning';
import type { ManagementWatchActivities, ManagementWatchInput } from '../activities/enablement/management-watch';
import { TaskQueuesSchema, defaultTaskQueues } from '../core/lifecycle';
import { AutoNodePhase } from './search-attributes';

export { MANAGEMENT_WATCH_WORKFLOW_ID } from '../core/enablement/management-watch';

/** A worker started with these feature gates: the latest word wins (workers of one deployment share their flags). */
export const featureGatesSignal = defineSignal<[{ autoprovision: boolean }]>('featureGates');

export interface ManagementWatchStatus {
  autoprovision: boolean;
  namespace?: string;
  /** times the watch activity was (re)started in this run: gate changes and failures */
  starts: number;
}
export const managementWatchStatusQuery = defineQuery<ManagementWatchStatus>('status');

export type ManagementWatchWorkflowInput = ManagementWatchInput;

/**
 * Keeps the HostedCluster watch activity running, in the mode the feature gate asks for:
 * with Autoprovision on, `spec.autoNode` starts enablement; off, the watch only reports that
 * on the HostedCluster. A gate change cancels the activity and starts it in the new mode.
 * History grows only by gate changes and restarts; it continues as new when suggested.
 */
export async function managementWatchWorkflow(input: ManagementWatchWorkflowInput): Promise<void> {
  const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
  const { watchHostedClusters } = proxyActivities<ManagementWatchActivities>({
    taskQueue: taskQueues.control,
    startToCloseTimeout: '3650 days',
    heartbeatTimeout: '30 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const status: ManagementWatchStatus = { autoprovision: input.autoprovision, ...(input.namespace ? { namespace: input.namespace } : {}), starts: 0 };
  let gateChanged = false;
  setHandler(featureGatesSignal, (gates) => {
    if (gates.autoprovision === status.autoprovision) return;
    status.autoprovision = gates.autoprovision;
    gateChanged = true;
  });
  setHandler(managementWatchStatusQuery, () => status);

  for (;;) {
    gateChanged = false;
    upsertSearchAttributes([{ key: AutoNodePhase, value: status.autoprovision ? 'Autoprovision' : 'ReportOnly' }]);
    const scope = new CancellationScope();
    let ended = false;
    status.starts += 1;
    const watching = scope
      .run(() => watchHostedClusters({ autoprovision: status.autoprovision, ...(input.namespace ? { namespace: input.namespace } : {}), taskQueues }))
      .catch((err: unknown) => {
        if (!isCancellation(err)) throw err;
      })
      .finally(() => void (ended = true));
    await condition(() => gateChanged || ended || workflowInfo().continueAsNewSuggested);
    scope.cancel();
    await CancellationScope.nonCancellable(() => watching);
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof managementWatchWorkflow>({ ...input, autoprovision: status.autoprovision });
    }
  }
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (patched() and the committed histories
// keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', managementWatchWorkflow);
