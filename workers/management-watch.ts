import { type Client } from '@temporalio/client';
import { defaultTaskQueues, type TaskQueues } from '../core/lifecycle';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../core/enablement/management-watch';
import type { ManagementWatchWorkflowInput } from '../workflows/management-watch';

/**
 * Every worker with a management cluster runs this at start: the management watch workflow
 * is started if it is not running, and told this worker's Autoprovision gate. With the gate
 * off it still runs, in report-only mode: it is what tells a HostedCluster that
 * `spec.autoNode` alone does nothing here (someone has to, and only the workers know the gate).
 */
export async function startManagementWatch(client: Client, options: { autoprovision: boolean; namespace?: string; taskQueues?: TaskQueues }): Promise<void> {
  const taskQueues = options.taskQueues ?? defaultTaskQueues;
  const input: ManagementWatchWorkflowInput = { autoprovision: options.autoprovision, ...(options.namespace ? { namespace: options.namespace } : {}), taskQueues };
  await client.workflow.signalWithStart('managementWatchWorkflow', {
    taskQueue: taskQueues.control,
    workflowId: MANAGEMENT_WATCH_WORKFLOW_ID,
    args: [input],
    signal: 'featureGates',
    signalArgs: [{ autoprovision: options.autoprovision }],
  });
}
