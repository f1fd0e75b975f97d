// The batch gate (issue 14 finding 2). A plan with topology rules is realisable only as a
// whole: a zone spread's owner passes kube-scheduler's check only against the zone counts
// the plan expects, and a self-affinity group must start in the zone the plan chose. When
// a batch's nodes open one by one as each registers, the pods planned on nodes not up yet
// are tried against the nodes that are ("floaters"), bind into their slack, and move the
// counts: measured on Karpenter's benchmark input at 1,000 pods, 18–41 pods stayed Pending
// on the plan's own nodes and needed another round of nodes (test/bench/realise.ts).
//
// So when a batch's plan carries such rules, each of its nodes registers cordoned (the
// DaemonSet gate's cordon, daemonset-gate.ts) and stays so, once initialized in every other
// respect, until every other claim of the batch has got as far or is gone. The last one to
// arrive nominates every waiting sibling's planned pods, then opens all their nodes and its
// own: kube-scheduler then meets every planned pod with its nominated node open. Measured
// with the realisability harness (`npm run bench:realise -- --modes product`): 8 and 10
// Pending on Karpenter's input, 1 and 3 on topology-heavy (nodes opened one by one: 18–41
// and 2–4). A sibling that never comes holds a node at most BATCH_GATE_MAX_MS from its
// registration; the node then opens on its own.
import { type PendingPod } from '../packing/input';

/** On a NodeClaim: its batch's plan has topology rules, and its node waits for the batch's other nodes. */
export const BATCH_GATE_ANNOTATION = 'autonode.io/batch-gate';
/**
 * The longest a node waits for its batch's other nodes, from its registration: EC2
 * instances launched by one batch usually register within seconds of one another, and a
 * node that waits longer delays its own pods more than a follow-up round would.
 */
export const BATCH_GATE_MAX_MS = 45_000;
/** The Initialized condition's reason while a node waits at the batch gate. */
export const AWAITING_BATCH_REASON = 'AwaitingBatch';

/** Whether a pod carries a rule kube-scheduler checks against other pods' placements. */
function hasInterPodRule(pod: PendingPod): boolean {
  return pod.topologySpread.some((c) => c.whenUnsatisfiable === 'DoNotSchedule')
    || pod.podAffinity.required.length > 0
    || pod.podAntiAffinity.required.length > 0;
}

/**
 * Whether a batch's new claims open together: more than one claim, and some pod planned on
 * them owns a DoNotSchedule spread or a required pod (anti-)affinity term.
 */
export function batchGateNeeded(claims: readonly { readonly pods: readonly string[] }[], pods: readonly PendingPod[]): boolean {
  if (claims.length < 2) return false;
  const planned = new Set(claims.flatMap((c) => c.pods));
  return pods.some((pod) => hasInterPodRule(pod) && planned.has(`${pod.namespace}/${pod.name}`));
}

/** Whether a claim's node waits for its batch (its batch's plan has topology rules). */
export function batchGated(claim: { readonly metadata: { readonly annotations?: Readonly<Record<string, string>> | undefined } }): boolean {
  return claim.metadata.annotations?.[BATCH_GATE_ANNOTATION] === 'true';
}

/** What the gate reads of a sibling claim. */
export interface BatchSibling {
  readonly metadata: { readonly name: string; readonly deletionTimestamp?: string | undefined; readonly annotations?: Readonly<Record<string, string>> | undefined };
  readonly status?: { readonly nodeName?: string | undefined; readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string | undefined }[] | undefined } | undefined;
}

/** A sibling waiting at the gate: its node registered and up, held only for the batch. */
export function atBatchGate(claim: BatchSibling): boolean {
  return claim.status?.conditions?.some((c) => c.type === 'Initialized' && c.status === 'Unknown' && c.reason === AWAITING_BATCH_REASON) === true
    && (claim.status.nodeName ?? '') !== '';
}

/**
 * The batch's other gated claims that have not reached the gate (names, sorted): not being
 * deleted, not Initialized, not waiting at the gate. Claims without the gate annotation
 * (none in a gated batch, unless an admin made one by hand) are not waited for.
 */
export function siblingsNotAtGate(siblings: readonly BatchSibling[], self: string): string[] {
  return siblings
    .filter((c) => c.metadata.name !== self && batchGated(c) && c.metadata.deletionTimestamp === undefined)
    .filter((c) => !atBatchGate(c) && !c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True'))
    .map((c) => c.metadata.name)
    .sort();
}
