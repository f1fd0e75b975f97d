import { type Client } from '@temporalio/client';
import { nodeClaimWorkflowId, type ClusterRef, type NodeClaimWorkflowInput, type TaskQueues } from '../../core/lifecycle';

/**
 * Starts a NodeClaim's lifecycle workflow, or finds the one running (USE_EXISTING): the
 * watcher (claims made with kubectl) and the provisioner (claims it made) both call this,
 * so a claim never gets two lives.
 */
export async function startNodeClaimLifecycle(
  temporal: Client,
  o: { cluster: ClusterRef; taskQueues: TaskQueues; nodeClaim: { name: string; uid: string }; defaults?: Pick<NodeClaimWorkflowInput, 'timeouts' | 'csrPolicy'> | undefined },
): Promise<void> {
  const input: NodeClaimWorkflowInput = { cluster: o.cluster, taskQueues: o.taskQueues, nodeClaim: o.nodeClaim, ...o.defaults };
  await temporal.workflow.start('nodeClaimWorkflow', {
    taskQueue: o.taskQueues.control,
    workflowId: nodeClaimWorkflowId(o.cluster.name, o.nodeClaim.name),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
  });
}
