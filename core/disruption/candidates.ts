import { type Disruption } from '../api/disruption';
import { durationToMs } from '../lifecycle';

// Which nodes a disruption method may consider, by Karpenter's rules (karpenter.md §1.5,
// "Candidate filtering"; disruption/types.go NewCandidate, state/statenode.go). Pure: the
// activity gathers the facts, these functions decide, and every refusal says why.

export const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
export const WELL_KNOWN_FOR_CONSOLIDATION = ['node.kubernetes.io/instance-type', 'karpenter.sh/capacity-type', 'topology.kubernetes.io/zone'] as const;

/** Emptiness and consolidation are graceful; drift is eventual (it may pass blocking pods by with a grace period). */
export type DisruptionMethod = 'emptiness' | 'drift' | 'consolidation';

export interface CandidatePod {
  namespace: string;
  name: string;
  /** the pod has `karpenter.sh/do-not-disrupt: "true"` and is not terminal */
  doNotDisrupt: boolean;
  /** a pod that must move if the node goes (not a DaemonSet or mirror pod, not finished) */
  reschedulable: boolean;
  /** the PDB(s) that forbid evicting it now, when any (more than one PDB always blocks) */
  blockingPdb?: string;
  /** `controller.kubernetes.io/pod-deletion-cost` */
  deletionCost?: number;
  priority?: number;
}

export interface CandidateNode {
  nodeClaim: string;
  /** the Node's name, once it registered */
  node?: string;
  /** `karpenter.sh/nodepool` on the claim */
  nodePool?: string;
  initialized: boolean;
  deleting: boolean;
  /**
   * The node carries `karpenter.sh/disrupted` when a round begins. The disruption workflow
   * runs one command at a time and takes its taints back when a command ends, so another
   * actor is moving the node (an interruption launching its replacement first).
   */
  disruptedElsewhere?: boolean;
  /** `karpenter.sh/do-not-disrupt: "true"` on the Node (or the NodeClaim) */
  doNotDisrupt: boolean;
  labels: Record<string, string>;
  /** the claim's terminationGracePeriod, when it has one */
  terminationGracePeriod?: string;
  /** epoch ms until which the provisioner counts on this node for pending pods */
  nominatedUntil?: number;
  /** epoch ms when the claim's Consolidatable condition became (or becomes) true; undefined: never */
  consolidatableAt?: number;
  /** set when the claim's Drifted condition is True */
  drifted?: { reason: string; since: number };
  pods: readonly CandidatePod[];
}

export interface CandidatePool {
  name: string;
  disruption: Disruption;
}

export type CandidateVerdict = { ok: true } | { ok: false; reason: string };

const refuse = (reason: string): CandidateVerdict => ({ ok: false, reason });

/**
 * The nomination window: a node the provisioner nominated pods to within
 * max(2 × batchMaxDuration, 10 s) is not a candidate (statenode.go nominationWindow).
 */
export function nominationWindowMs(batchMaxMs: number): number {
  return Math.max(2 * batchMaxMs, 10_000);
}

/**
 * When a claim becomes Consolidatable: consolidateAfter after the last pod event on its
 * node, or after it initialized when no pod event came since. Undefined: never
 * (consolidateAfter Never, or not initialized).
 */
export function consolidatableAt(o: { initializedAt?: number; lastPodEventAt?: number; consolidateAfter: string }): number | undefined {
  const after = durationToMs(o.consolidateAfter);
  if (after === undefined || o.initializedAt === undefined) return undefined;
  return Math.max(o.lastPodEventAt ?? 0, o.initializedAt) + after;
}

/** Whether a pod stands in a method's way; eventual disruption (drift, or a claim with a grace period) passes pods by. */
function podBlock(node: CandidateNode, method: DisruptionMethod): string | undefined {
  const eventual = method === 'drift' || node.terminationGracePeriod !== undefined;
  if (eventual) return undefined;
  for (const pod of node.pods) {
    if (pod.doNotDisrupt) return `pod ${pod.namespace}/${pod.name} has ${DO_NOT_DISRUPT}`;
    if (pod.blockingPdb !== undefined) return `pod ${pod.namespace}/${pod.name} is protected by ${pod.blockingPdb}`;
  }
  return undefined;
}

/** Whether a method may consider this node now, and if not, why. */
export function candidateVerdict(node: CandidateNode, pool: CandidatePool | undefined, method: DisruptionMethod, now: number): CandidateVerdict {
  if (node.node === undefined) return refuse('its node has not registered');
  if (!node.initialized) return refuse('it is not initialized');
  if (node.deleting) return refuse('it is being deleted');
  if (node.disruptedElsewhere) return refuse('it is tainted karpenter.sh/disrupted by another command (an interruption is replacing it)');
  if (node.nominatedUntil !== undefined && now < node.nominatedUntil) return refuse('pending pods were nominated to it');
  if (node.doNotDisrupt) return refuse(`it has ${DO_NOT_DISRUPT}`);
  if (node.nodePool === undefined) return refuse('it has no karpenter.sh/nodepool label');
  if (pool === undefined) return refuse(`its NodePool ${node.nodePool} does not exist`);
  const blocked = podBlock(node, method);
  if (blocked !== undefined) return refuse(blocked);
  const empty = !node.pods.some((p) => p.reschedulable);
  const consolidatable = node.consolidatableAt !== undefined && now >= node.consolidatableAt;
  switch (method) {
    case 'drift':
      return node.drifted ? { ok: true } : refuse('it has not drifted');
    case 'emptiness':
      if (!empty) return refuse('it runs pods that would have to move');
      if (durationToMs(pool.disruption.consolidateAfter) === undefined) return refuse(`NodePool ${pool.name} has consolidateAfter: Never`);
      return consolidatable ? { ok: true } : refuse('it is not consolidatable yet (consolidateAfter)');
    case 'consolidation': {
      const missing = WELL_KNOWN_FOR_CONSOLIDATION.filter((k) => node.labels[k] === undefined);
      if (missing.length > 0) return refuse(`it lacks the label(s) ${missing.join(', ')}`);
      if (durationToMs(pool.disruption.consolidateAfter) === undefined) return refuse(`NodePool ${pool.name} has consolidateAfter: Never`);
      if (empty) return refuse('it is empty (emptiness handles it)');
      if (pool.disruption.consolidationPolicy === 'WhenEmpty') return refuse(`NodePool ${pool.name} consolidates only empty nodes (consolidationPolicy: WhenEmpty)`);
      return consolidatable ? { ok: true } : refuse('it is not consolidatable yet (consolidateAfter)');
    }
  }
}

/** A pod's eviction cost (pkg/utils/disruption): 1 + deletion-cost/2^27 + priority/2^25, clamped to [-10, 10]. */
export function evictionCost(pod: Pick<CandidatePod, 'deletionCost' | 'priority'>): number {
  const cost = 1 + (pod.deletionCost ?? 0) / 2 ** 27 + (pod.priority ?? 0) / 2 ** 25;
  return Math.min(10, Math.max(-10, cost));
}

/** A node's disruption cost: 1 for the node, plus what its reschedulable pods cost to evict (never negative). */
export function disruptionCost(node: Pick<CandidateNode, 'pods'>): number {
  return node.pods.filter((p) => p.reschedulable).reduce((sum, p) => sum + Math.max(0, evictionCost(p)), 1);
}

/**
 * Drift order: oldest drifted first, empty nodes before the rest (disruption/drift.go).
 */
export function driftOrder(nodes: readonly CandidateNode[]): CandidateNode[] {
  const empty = (n: CandidateNode) => !n.pods.some((p) => p.reschedulable);
  return [...nodes].sort((a, b) => Number(empty(b)) - Number(empty(a)) || (a.drifted?.since ?? 0) - (b.drifted?.since ?? 0) || a.nodeClaim.localeCompare(b.nodeClaim));
}
