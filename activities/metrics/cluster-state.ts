import { z } from 'zod';
import { parseQuantity, NANOS_PER_UNIT } from '../../core/scheduling/quantity';

/**
 * What the state gauges (`karpenter_nodes_allocatable`, `karpenter_pods_state`) show for one
 * cluster: summarised from lists an activity already read, at once, so no Kubernetes object
 * outlives the activity that listed it.
 */
export interface ClusterSnapshot {
  /** nodes autonode manages (they carry `karpenter.sh/nodepool`) */
  nodes: ManagedNode[];
  /** pods counted by the pool of the node they are bound to ('' when none) and phase */
  pods: PodCount[];
}

export interface ManagedNode {
  name: string;
  nodePool: string;
  instanceType: string;
  capacityType: string;
  zone: string;
  arch: string;
  /** status.allocatable in base units: cores, bytes, pods */
  allocatable: Record<string, number>;
}

export interface PodCount {
  nodePool: string;
  phase: string;
  count: number;
}

// Both the client's typed models and plain JSON from a list satisfy these (same field names).
const NodeSchema = z.object({
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).nullish() }),
  status: z.object({ allocatable: z.record(z.string(), z.string()).nullish() }).nullish(),
});
const PodSchema = z.object({
  spec: z.object({ nodeName: z.string().nullish() }).nullish(),
  status: z.object({ phase: z.string().nullish() }).nullish(),
});

const NODEPOOL = 'karpenter.sh/nodepool';

/** A quantity in base units (cpu "1930m" → 1.93); undefined for a value Kubernetes would not accept. */
function baseUnits(text: string): number | undefined {
  const parsed = parseQuantity(text);
  if (!parsed.ok) return undefined;
  // through the decimal text, so 1930m is the double nearest 1.93 (adding 0.93 to 1 is not)
  const { nanos } = parsed.quantity;
  const sign = nanos < 0n ? '-' : '';
  const magnitude = nanos < 0n ? -nanos : nanos;
  return Number(`${sign}${magnitude / NANOS_PER_UNIT}.${(magnitude % NANOS_PER_UNIT).toString().padStart(9, '0')}`);
}

export function summariseCluster(lists: { nodes: readonly unknown[]; pods: readonly unknown[] }): ClusterSnapshot {
  const poolOfNode = new Map<string, string>();
  const nodes: ManagedNode[] = [];
  for (const raw of lists.nodes) {
    const node = NodeSchema.safeParse(raw);
    if (!node.success) continue;
    const labels = node.data.metadata.labels ?? {};
    const nodePool = labels[NODEPOOL];
    if (nodePool === undefined) continue;
    poolOfNode.set(node.data.metadata.name, nodePool);
    const allocatable: Record<string, number> = {};
    for (const [resource, text] of Object.entries(node.data.status?.allocatable ?? {})) {
      const value = baseUnits(text);
      if (value !== undefined) allocatable[resource] = value;
    }
    nodes.push({
      name: node.data.metadata.name,
      nodePool,
      instanceType: labels['node.kubernetes.io/instance-type'] ?? '',
      capacityType: labels['karpenter.sh/capacity-type'] ?? '',
      zone: labels['topology.kubernetes.io/zone'] ?? '',
      arch: labels['kubernetes.io/arch'] ?? '',
      allocatable,
    });
  }
  const counts = new Map<string, PodCount>();
  for (const raw of lists.pods) {
    const pod = PodSchema.safeParse(raw);
    if (!pod.success) continue;
    const nodePool = poolOfNode.get(pod.data.spec?.nodeName ?? '') ?? '';
    const phase = pod.data.status?.phase ?? 'Unknown';
    const key = `${nodePool}\u0000${phase}`;
    const entry = counts.get(key) ?? { nodePool, phase, count: 0 };
    entry.count++;
    counts.set(key, entry);
  }
  nodes.sort((a, b) => a.name.localeCompare(b.name));
  const pods = [...counts.values()].sort((a, b) => a.nodePool.localeCompare(b.nodePool) || a.phase.localeCompare(b.phase));
  return { nodes, pods };
}
