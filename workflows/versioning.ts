import { type WorkflowDefinitionOptions } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';

/** ADR 0009: how a workflow type meets a new build of the workers. */
export type VersioningDecision = 'PINNED' | 'AUTO_UPGRADE';

/** Each workflow type's decision, by type name, as declared (read by test/unit/workflow-versioning.test.ts). */
export const declaredVersioningBehaviors = new Map<string, VersioningDecision>();

/**
 * The options a run reports its behaviour with: only on a versioned worker. Temporal refuses a
 * workflow task completion that names a behaviour from a worker without deployment
 * versioning (INVALID_ARGUMENT, the task retried for ever), and unversioned workers are the
 * default. An unversioned worker still reports a version: an empty deployment name and the
 * SDK's own build id.
 */
export function versioningOptionsFor(decision: VersioningDecision, current: { deploymentName: string } | undefined): WorkflowDefinitionOptions {
  return current?.deploymentName ? { versioningBehavior: decision } : {};
}

/** Declares `fn`'s worker-versioning behaviour (ADR 0009), taking effect on versioned workers only. */
export function declareVersioningBehavior<A extends unknown[], R>(decision: VersioningDecision, fn: (...args: A) => Promise<R>): void {
  declaredVersioningBehaviors.set(fn.name, decision);
  // read once, before the run's first activation: deterministic, and it changes no command
  setWorkflowOptions(() => versioningOptionsFor(decision, workflowInfo().currentDeploymentVersion), fn);
}
