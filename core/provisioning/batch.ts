import type { ConditionUpdate } from '../lifecycle';
import type { ClaimTemplate, CompactClaim, HeldOffering } from './nodeclaims';

// What one provisioner batch carries between its steps and into the provisioner's
// history: plain data, shared by the activities and the (sandboxed) workflow.

/** A batch's counts: compact on purpose (it is a payload in the provisioner's history). */
export interface BatchResult {
  batchId: string;
  pending: number;
  /** pods an earlier batch planned onto claims still coming up: held there, not planned again */
  awaiting?: number;
  created: string[];
  /** claims of this batch that already existed (a retried batch) */
  resumed: string[];
  /** claims the API server refused (name: why); the batch goes on without them */
  refused?: string[];
  nominated: number;
  onExistingNodes: number;
  unschedulable: number;
  pricePerHour: number;
  solveMs: number;
  /** NodePools / EC2NodeClasses skipped, each with why */
  skipped: string[];
}

/**
 * What a batch decided, before anything is created: the claims to make, compact (pool
 * templates and instance-type option lists once each). It is the checkpoint between
 * planning and creating: a worker killed while creating is replaced by one that creates
 * exactly these claims, by name, and nothing else.
 */
export interface PlannedBatch extends Omit<BatchResult, 'created' | 'resumed' | 'refused'> {
  templates: ClaimTemplate[];
  optionLists: string[][];
  claims: CompactClaim[];
  /** each NodePool's status after this batch: its conditions, and resources counting the planned claims */
  poolStatus: PoolStatus[];
  /**
   * The offerings planning held unavailable (the insufficient-capacity memory, an interrupted
   * spot offering) among the claims' instance types: each claim carries its own to the launch.
   */
  unavailable?: HeldOffering[];
  /** the claims' nodes open together (batch-gate.ts): the plan has topology rules */
  batchGate?: true;
}

export interface CreatedClaims {
  created: string[];
  resumed: string[];
  refused: string[];
}

/** What a NodePool's status says after a batch: its conditions, and the resources its claims use. */
export interface PoolStatus {
  name: string;
  conditions: ConditionUpdate[];
  resources: Record<string, string>;
}

/** The create step's input from the plan step's result. */
export function batchToCreate(planned: PlannedBatch): Pick<PlannedBatch, 'batchId' | 'templates' | 'optionLists' | 'claims' | 'poolStatus' | 'unavailable' | 'batchGate'> {
  return {
    batchId: planned.batchId,
    templates: planned.templates,
    optionLists: planned.optionLists,
    claims: planned.claims,
    poolStatus: planned.poolStatus,
    ...(planned.unavailable && planned.unavailable.length > 0 ? { unavailable: planned.unavailable } : {}),
    ...(planned.batchGate === true ? { batchGate: true as const } : {}),
  };
}
/** A batch's counts from its two steps (what the provisioner's status shows). */
export function batchResult(planned: PlannedBatch, made: CreatedClaims): BatchResult {
  return {
    batchId: planned.batchId,
    pending: planned.pending,
    created: made.created,
    resumed: made.resumed,
    ...(made.refused.length > 0 ? { refused: made.refused } : {}),
    nominated: planned.nominated,
    onExistingNodes: planned.onExistingNodes,
    unschedulable: planned.unschedulable,
    pricePerHour: planned.pricePerHour,
    solveMs: planned.solveMs,
    skipped: planned.skipped,
  };
}

