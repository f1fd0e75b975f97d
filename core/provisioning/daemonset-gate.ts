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
// first. Initialization waits until each of them is bound to the node, or DAEMONSET_GATE_MAX_MS
// at most (a DaemonSet pod that cannot fit must not hold the node back), then nominates the
// planned pods and lifts the gate. The annotation marks the cordon as autonode's: a node an
// admin cordoned is never uncordoned by autonode.
import { z } from 'zod';
import { daemonSetRunsOn } from '../packing/pools';
import type { Taint } from '../scheduling/taints';
import { expandWorkload } from '../workloads/expand';

/** On a Node autonode cordoned for its DaemonSet pods: when (ISO time). */
export const DAEMONSET_GATE_ANNOTATION = 'autonode.io/daemonset-gate';
/** How long initialization waits for the DaemonSet pods before lifting the gate anyway. */
export const DAEMONSET_GATE_MAX_MS = 30_000;

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

const PodOnNode = z.object({
  metadata: z.object({ namespace: z.string().optional(), ownerReferences: z.array(z.object({ kind: z.string(), name: z.string() })).nullish() }),
  spec: z.object({ nodeName: z.string().optional() }).optional(),
});

/** Which of `expected` (`namespace/name`) have no pod bound to `nodeName` among `pods`. */
export function daemonSetsWaiting(expected: readonly string[], pods: readonly unknown[], nodeName: string): string[] {
  const placed = new Set<string>();
  for (const item of pods) {
    const pod = PodOnNode.safeParse(item);
    if (!pod.success || pod.data.spec?.nodeName !== nodeName) continue;
    for (const owner of pod.data.metadata.ownerReferences ?? []) if (owner.kind === 'DaemonSet') placed.add(`${pod.data.metadata.namespace ?? ''}/${owner.name}`);
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
