// The DaemonSet gate. A plan counts each node's DaemonSet pods (their requests are the
// node's daemon overhead), but nothing in Kubernetes keeps that room for them: kube-scheduler
// binds whatever is pending, first come first served, and the DaemonSet controller creates
// its pods only once the node is there. When pending workload pods win the race, DaemonSet
// pods stay Pending on a full node for good ("Insufficient cpu"; Karpenter's open issue
// aws/karpenter-provider-aws#9269; seen here in seed 000 on a loaded machine: 7 of 14 nodes).
//
// So a node autonode registers is cordoned (spec.unschedulable) when some DaemonSet's pods
// belong on it. Every DaemonSet pod tolerates `node.kubernetes.io/unschedulable` (the
// DaemonSet controller adds the toleration), no ordinary pod does: the DaemonSet pods bind
// first. Initialization waits until each of them is bound to the node, then nominates the
// planned pods and lifts the gate. A DaemonSet pod that cannot fit must not hold the node
// back: past DAEMONSET_GATE_MAX_MS the gate opens once each waiting pod has been judged
// unschedulable by kube-scheduler; a pod not yet created or not yet judged (controller lag)
// holds it to DAEMONSET_GATE_LAG_MAX_MS. The annotation marks the cordon as autonode's: a node an
// admin cordoned is never uncordoned by autonode.
import { z } from 'zod';
import { daemonSetRunsOn } from '../packing/pools';
import type { Taint } from '../scheduling/taints';
import { expandWorkload } from '../workloads/expand';

/** On a Node autonode cordoned for its DaemonSet pods: when (ISO time). */
export const DAEMONSET_GATE_ANNOTATION = 'autonode.io/daemonset-gate';
/**
 * How long initialization waits for the DaemonSet pods before lifting the gate anyway, when
 * kube-scheduler has judged each waiting pod and found it does not fit.
 */
export const DAEMONSET_GATE_MAX_MS = 30_000;
/**
 * The longest the gate holds while a DaemonSet's pod for the node has not been created, or
 * not yet been judged by kube-scheduler: a loaded control plane (the DaemonSet controller and
 * kube-scheduler behind hundreds of pending pods) can take minutes, and opening the node
 * before its DaemonSet pod is bound is what the gate is for. `npm run scale` at 3 × 2,000
 * pods on 2 cores: 94 of 169 nodes without their agent when the gate opened at 30 s.
 */
export const DAEMONSET_GATE_LAG_MAX_MS = 300_000;

const ListedDaemonSet = z.object({ metadata: z.object({ deletionTimestamp: z.unknown().optional() }).passthrough() }).passthrough();

/**
 * The DaemonSets (`namespace/name`, sorted) whose pod would run on a node with these labels
 * and these taints (the claim's own: those it keeps once up), read from the DaemonSet list's
 * items as the API server sends them. A DaemonSet being deleted, or one that does not parse,
 * is not waited for.
 */
export function daemonSetsFor(items: readonly unknown[], labels: Readonly<Record<string, string>>, taints: readonly Taint[]): string[] {
  return items
    .flatMap((item) => {
      const listed = ListedDaemonSet.safeParse(item);
      if (!listed.success || listed.data.metadata.deletionTimestamp) return [];
      const workload = expandWorkload({ ...listed.data, apiVersion: 'apps/v1', kind: 'DaemonSet' });
      return workload.kind === 'daemonSet' && daemonSetRunsOn(workload.daemonSet, labels, taints) ? [`${workload.daemonSet.namespace}/${workload.daemonSet.name}`] : [];
    })
    .sort();
}

/** A pod's identity as the gate keys DaemonSets: its namespace and owners. */
const PodMetadata = z.object({ namespace: z.string().optional(), ownerReferences: z.array(z.object({ kind: z.string(), name: z.string() })).nullish() });

/** The DaemonSets (`namespace/name`) that own a pod. */
function daemonSetOwnerKeys(metadata: z.infer<typeof PodMetadata>): string[] {
  return (metadata.ownerReferences ?? []).filter((owner) => owner.kind === 'DaemonSet').map((owner) => `${metadata.namespace ?? ''}/${owner.name}`);
}

const PodOnNode = z.object({
  metadata: PodMetadata,
  spec: z.object({ nodeName: z.string().optional() }).optional(),
});

/** Which of `expected` (`namespace/name`) have no pod bound to `nodeName` among `pods`. */
export function daemonSetsWaiting(expected: readonly string[], pods: readonly unknown[], nodeName: string): string[] {
  const placed = new Set<string>();
  for (const item of pods) {
    const pod = PodOnNode.safeParse(item);
    if (!pod.success || pod.data.spec?.nodeName !== nodeName) continue;
    for (const key of daemonSetOwnerKeys(pod.data.metadata)) placed.add(key);
  }
  return expected.filter((key) => !placed.has(key));
}

/** How long the gate has held (ms), from the annotation's time; undefined when it is not autonode's gate. */
export function gateHeldMs(annotation: string | undefined, now: number): number | undefined {
  if (annotation === undefined) return undefined;
  const since = Date.parse(annotation);
  // an unreadable time: treat the gate as over (never keep a node cordoned on a bad value)
  return Number.isNaN(since) ? Number.POSITIVE_INFINITY : Math.max(0, now - since);
}

const UnboundPod = z.object({
  metadata: PodMetadata,
  spec: z.object({
    nodeName: z.string().optional(),
    affinity: z.object({
      nodeAffinity: z.object({
        requiredDuringSchedulingIgnoredDuringExecution: z.object({
          nodeSelectorTerms: z.array(z.object({ matchFields: z.array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).nullish() })).nullish() })),
        }).nullish(),
      }).nullish(),
    }).nullish(),
  }).optional(),
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string().nullish() })).nullish() }).optional(),
});

/**
 * Which of `waiting` (`namespace/name`) are still on their way to the node: no pod of the
 * DaemonSet for it among `unbound` (the namespaces' pods not bound to any node), or one that
 * kube-scheduler has not yet judged unschedulable. The DaemonSet controller pins each pod to
 * its node with a `metadata.name` field term in the pod's required node affinity.
 */
export function daemonSetsInFlight(waiting: readonly string[], unbound: readonly unknown[], nodeName: string): string[] {
  const judged = new Set<string>();
  for (const item of unbound) {
    const pod = UnboundPod.safeParse(item);
    if (!pod.success || (pod.data.spec?.nodeName ?? '') !== '') continue;
    const terms = pod.data.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const forNode = terms.some((t) => (t.matchFields ?? []).some((f) => f.key === 'metadata.name' && f.operator === 'In' && (f.values ?? []).includes(nodeName)));
    const unschedulable = (pod.data.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
    if (!forNode || !unschedulable) continue;
    for (const key of daemonSetOwnerKeys(pod.data.metadata)) judged.add(key);
  }
  return waiting.filter((key) => !judged.has(key));
}

/**
 * Whether the gate still holds, `heldMs` after it closed, for DaemonSets `unplaced` (no pod
 * bound) of which `inFlight` have no pod judged yet.
 */
export function gateHolds(heldMs: number, unplaced: readonly string[], inFlight: readonly string[]): boolean {
  if (unplaced.length === 0) return false;
  if (heldMs < DAEMONSET_GATE_MAX_MS) return true;
  return inFlight.length > 0 && heldMs < DAEMONSET_GATE_LAG_MAX_MS;
}
