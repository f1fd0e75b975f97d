// The DaemonSet gate's reads (core/provisioning/daemonset-gate.ts says why the gate exists).
import { daemonSetsFor, daemonSetsInFlight, daemonSetsWaiting } from '../../core/provisioning/daemonset-gate';
import { taintSchema } from '../../core/scheduling/taints';
import { type KubeClients } from './clients';
import { isForbidden, isNotFound } from './errors';
import { listItems } from './lists';

/**
 * The DaemonSets whose pods belong on a node with these labels and the claim's taints. An
 * identity that may not list DaemonSets (an older guest RBAC) gets none: the node is not
 * gated, as before the gate existed.
 */
export async function daemonSetsForNode(kube: KubeClients, labels: Readonly<Record<string, string>>, taints: readonly { key: string; effect: string; value?: string }[]): Promise<string[]> {
  // (a stored taint of an effect Kubernetes does not know keeps no pod off the node)
  const known = taints.flatMap((t) => { const parsed = taintSchema.safeParse(t); return parsed.success ? [parsed.data] : []; });
  try {
    return daemonSetsFor(listItems(await kube.getJson('/apis/apps/v1/daemonsets')), labels, known);
  } catch (err) {
    if (isForbidden(err) || isNotFound(err)) return [];
    throw err;
  }
}

/** Which of `expected` have no pod bound to the node yet. */
export async function daemonSetsNotOnNode(kube: KubeClients, expected: readonly string[], nodeName: string): Promise<string[]> {
  if (expected.length === 0) return [];
  const pods = listItems(await kube.getJson('/api/v1/pods', { fieldSelector: `spec.nodeName=${nodeName}` }));
  return daemonSetsWaiting(expected, pods, nodeName);
}

/**
 * Which of `waiting` have no pod for the node that kube-scheduler judged unschedulable: not
 * created yet, or not yet tried (core/provisioning/daemonset-gate.ts daemonSetsInFlight).
 * Reads each namespace's pods not bound to any node.
 */
export async function daemonSetsInFlightTo(kube: KubeClients, waiting: readonly string[], nodeName: string): Promise<string[]> {
  if (waiting.length === 0) return [];
  const namespaces = [...new Set(waiting.map((key) => key.slice(0, key.indexOf('/'))))];
  const unbound = (await Promise.all(namespaces.map(async (ns) => listItems(await kube.getJson(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, { fieldSelector: 'spec.nodeName=' }))))).flat();
  return daemonSetsInFlight(waiting, unbound, nodeName);
}
