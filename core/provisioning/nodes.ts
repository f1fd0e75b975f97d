import { z } from 'zod';
import { DAEMONSET_GATE_ANNOTATION } from './daemonset-gate';

/** What the node lifecycle controller taints a cordoned node with. */
const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';

/** Taints a node carries while it comes up (Karpenter's known ephemeral taints). */
const EPHEMERAL_TAINT_KEYS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'node.cloudprovider.kubernetes.io/uninitialized', 'karpenter.sh/unregistered']);

const NodeShape = z.object({
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).nullish(), annotations: z.record(z.string(), z.string()).nullish() }).passthrough(),
  spec: z.object({ taints: z.array(z.object({ key: z.string(), effect: z.string() }).passthrough()).nullish() }).passthrough().optional(),
}).passthrough();

/**
 * A node autonode launched that is not initialized yet is capacity on its way, as
 * Karpenter treats it: the taints it carries only while coming up (ephemeral ones and its
 * claim's startup taints) would otherwise make every pending pod look like it needs a
 * new node. So is the cordon of the DaemonSet gate (daemonset-gate.ts): it opens as the
 * node initializes. Other nodes are returned as they are.
 */
export function asPlannedCapacity(node: unknown, startupTaints: readonly { key: string; effect: string }[]): unknown {
  const parsed = NodeShape.safeParse(node);
  if (!parsed.success) return node;
  const labels = parsed.data.metadata.labels ?? {};
  if (labels['karpenter.sh/nodepool'] === undefined || labels['karpenter.sh/initialized'] === 'true') return node;
  const gated = parsed.data.metadata.annotations?.[DAEMONSET_GATE_ANNOTATION] !== undefined;
  const taints = (parsed.data.spec?.taints ?? []).filter(
    (t) => !EPHEMERAL_TAINT_KEYS.has(t.key) && !t.key.startsWith('readiness.k8s.io/') && !startupTaints.some((s) => s.key === t.key && s.effect === t.effect)
      && !(gated && t.key === UNSCHEDULABLE_TAINT_KEY),
  );
  return { ...parsed.data, spec: { ...parsed.data.spec, taints } };
}
