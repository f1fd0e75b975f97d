// The cluster `npm run bench:disruption` consolidates, held in memory: nodes of one NodePool
// and the pods bound to them. It is shown to autonode's planning path as the Kubernetes
// objects the packing activity would read (worldOf → planningOf), to the disruption round as
// its snapshot (roundInputOf), and changed command by command as the disruption workflow
// would change the real one (applyCommand: the candidates gone, the replacements up, every
// moving pod where the plan put it).
import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import type { NodePool } from '../../core/api/nodepool';
import { normaliseDocument } from '../../core/api/normalise';
import { StoredNodeClaimSchema } from '../../core/api/nodeclaim';
import type { CandidateNode, CapacityType, RoundInput, RoundPool } from '../../core/disruption';
import { catalogInstanceTypes, type CatalogResult } from '../../core/instancetypes';
import { parseQuantity } from '../../core/scheduling/quantity';
import type { Planning } from '../../activities/provisioner/plan-view';
import type { World } from '../../activities/provisioner/world';

export const BENCH_NOW = Date.parse('2026-08-01T00:00:00Z');
export const POOL = 'default';
const NODE_CLASS = 'default';
const REGION = 'us-east-1';

export interface BenchPool {
  /** e.g. ['c5.large', 'm5.xlarge', …]: the pool's instance-type requirement */
  types: readonly string[];
  zones: readonly string[];
  /** the Underutilized/Empty budget, e.g. '10%' */
  budget: string;
}

export interface SimPod {
  namespace: string;
  name: string;
  app: string;
  /** millicores */
  cpu: number;
  /** MiB */
  memory: number;
}

export interface SimNode {
  name: string;
  nodeClaim: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  /** $/h of its offering */
  price: number;
}

export interface SimCluster {
  pool: BenchPool;
  /** the pool's catalog: its types, on-demand offerings in its zones (what the cloud catalog would return for the class) */
  catalog: CatalogResult & { ok: true };
  nodes: ReadonlyMap<string, SimNode>;
  /** by `namespace/name` */
  pods: ReadonlyMap<string, SimPod & { node: string }>;
  /** replacement nodes launched so far: names the next ones */
  launched: number;
}

/** One replacement: the offering it launched on and the pods planned onto it. */
export interface Launch {
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  price: number;
  pods: readonly string[];
}

/** A consolidation command as carried out: these nodes go, these come, every moving pod lands where planned. */
export interface ClusterCommand {
  remove: readonly string[];
  launch: readonly Launch[];
  /** pods moving onto nodes that stay, by node */
  moves: readonly { node: string; pods: readonly string[] }[];
}

export const podKey = (p: Pick<SimPod, 'namespace' | 'name'>): string => `${p.namespace}/${p.name}`;

/** The bundled us-east-1 catalog cut to the pool's types, on-demand in its zones (as a node class's subnets bound it). */
export function benchCatalog(pool: BenchPool): CatalogResult & { ok: true } {
  const all = catalogInstanceTypes({ region: REGION, amiFamily: 'AL2023', now: BENCH_NOW });
  if (!all.ok) throw new Error(all.reason);
  const wanted = new Set(pool.types);
  const instanceTypes = all.instanceTypes
    .filter((t) => wanted.has(t.name))
    .map((t) => ({ ...t, offerings: t.offerings.filter((o) => o.capacityType === 'on-demand' && pool.zones.includes(o.zone)) }));
  const missing = pool.types.filter((name) => !instanceTypes.some((t) => t.name === name));
  if (missing.length > 0) throw new Error(`not in the bundled catalog: ${missing.join(', ')}`);
  return { ok: true, warnings: [], skipped: [], instanceTypes };
}

/** What a node of this type can hold: millicores, MiB, pods. */
export interface Room {
  cpu: number;
  memory: number;
  pods: number;
}

const quantity = (text: string | undefined, scale: number): number => {
  const parsed = parseQuantity(text ?? '0');
  if (!parsed.ok) throw new Error(`bad quantity ${text}: ${parsed.reason}`);
  return Number(parsed.quantity.nanos) / scale;
};

export function roomOf(catalog: CatalogResult & { ok: true }, instanceType: string): Room {
  const type = catalog.instanceTypes.find((t) => t.name === instanceType);
  if (!type) throw new Error(`instance type ${instanceType} is not the pool's`);
  return { cpu: quantity(type.allocatable.cpu, 1e6), memory: quantity(type.allocatable.memory, 1e9 * 2 ** 20), pods: quantity(type.allocatable.pods, 1e9) };
}

export function priceOf(catalog: CatalogResult & { ok: true }, instanceType: string, zone: string, capacityType: CapacityType): number {
  const offering = catalog.instanceTypes.find((t) => t.name === instanceType)?.offerings.find((o) => o.zone === zone && o.capacityType === capacityType);
  if (!offering) throw new Error(`no ${capacityType} offering of ${instanceType} in ${zone}`);
  return offering.price;
}

export const costOf = (cluster: SimCluster): number => Math.round([...cluster.nodes.values()].reduce((sum, n) => sum + n.price, 0) * 1e6) / 1e6;

export function podsByNode(cluster: SimCluster): Map<string, string[]> {
  const out = new Map<string, string[]>([...cluster.nodes.keys()].map((n) => [n, []]));
  for (const [key, pod] of cluster.pods) out.get(pod.node)?.push(key);
  return out;
}

/** Pods that no node of the cluster holds: a command that strands one is refused. */
export function strandedPods(cluster: SimCluster): string[] {
  return [...cluster.pods].filter(([, p]) => !cluster.nodes.has(p.node)).map(([k]) => k);
}

/** How many pods a command makes move (evictions): every pod of the nodes it removes. */
export function movedBy(cluster: SimCluster, command: ClusterCommand): number {
  const removed = new Set(command.remove);
  return [...cluster.pods.values()].filter((p) => removed.has(p.node)).length;
}

export class CommandError extends Error {}

/**
 * The cluster after a command: the removed nodes gone with their claims, each launch a new
 * node named `<pool>-r<n>`, and every pod of a removed node on the node the command names.
 * Refused (CommandError) when a removed node is unknown, a pod would be left behind, moved
 * twice or onto a node that is not there, or a node would hold more than its allocatable
 * cpu, memory or pods. Pure: the cluster given is unchanged.
 */
export function applyCommand(cluster: SimCluster, command: ClusterCommand): SimCluster {
  const removed = new Set(command.remove);
  for (const name of removed) if (!cluster.nodes.has(name)) throw new CommandError(`node ${name} is not in the cluster`);
  const nodes = new Map([...cluster.nodes].filter(([name]) => !removed.has(name)));
  let launched = cluster.launched;
  const targets: { node: string; pods: readonly string[] }[] = [...command.moves];
  for (const launch of command.launch) {
    const name = `${POOL}-r${launched++}`;
    nodes.set(name, { name, nodeClaim: name, instanceType: launch.instanceType, zone: launch.zone, capacityType: launch.capacityType, price: launch.price });
    targets.push({ node: name, pods: launch.pods });
  }
  const pods = new Map(cluster.pods);
  const moved = new Set<string>();
  for (const { node, pods: keys } of targets) {
    if (!nodes.has(node)) throw new CommandError(`pods are planned onto ${node}, which ${removed.has(node) ? 'the command removes' : 'is not in the cluster'}`);
    for (const key of keys) {
      const pod = pods.get(key);
      if (!pod) throw new CommandError(`pod ${key} is not in the cluster`);
      if (moved.has(key)) throw new CommandError(`pod ${key} is planned onto two nodes`);
      if (!removed.has(pod.node)) throw new CommandError(`pod ${key} runs on ${pod.node}, which stays: only the removed nodes' pods move`);
      moved.add(key);
      pods.set(key, { ...pod, node });
    }
  }
  const after: SimCluster = { ...cluster, nodes, pods, launched };
  const stranded = strandedPods(after);
  if (stranded.length > 0) throw new CommandError(`${stranded.length} pod(s) would be left on removed nodes: ${stranded.slice(0, 3).join(', ')}`);
  const touched = new Set(targets.map((t) => t.node));
  const byNode = podsByNode(after);
  for (const name of touched) {
    const node = nodes.get(name)!;
    const room = roomOf(cluster.catalog, node.instanceType);
    const held = (byNode.get(name) ?? []).map((k) => pods.get(k)!);
    const cpu = held.reduce((s, p) => s + p.cpu, 0);
    const memory = held.reduce((s, p) => s + p.memory, 0);
    if (cpu > room.cpu + 1e-9 || memory > room.memory + 1e-9 || held.length > room.pods) {
      throw new CommandError(`node ${name} (${node.instanceType}) would hold ${cpu}m cpu, ${memory}Mi memory, ${held.length} pods against ${room.cpu}m, ${room.memory}Mi, ${room.pods}`);
    }
  }
  return after;
}

const nodeLabels = (cluster: SimCluster, node: SimNode): Record<string, string> => {
  const type = cluster.catalog.instanceTypes.find((t) => t.name === node.instanceType);
  return {
    ...(type?.labels ?? {}),
    'kubernetes.io/hostname': node.name,
    'topology.kubernetes.io/zone': node.zone,
    'karpenter.sh/capacity-type': node.capacityType,
    'karpenter.sh/nodepool': POOL,
    'karpenter.sh/initialized': 'true',
    'karpenter.sh/registered': 'true',
  };
};

const INITIALIZED_AT = new Date(BENCH_NOW - 3_600_000).toISOString();

/** The pool as its manifest, with the bench's requirements and budget. */
export function nodePoolObject(pool: BenchPool): Record<string, unknown> {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: POOL, uid: `uid-${POOL}` },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: NODE_CLASS },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [...pool.types] },
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: [...pool.zones] },
          ],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: pool.budget }] },
    },
  };
}

const nodeClassObject = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: NODE_CLASS, uid: `uid-${NODE_CLASS}` },
  spec: {
    role: 'KarpenterNodeRole-bench',
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
  },
};

/** The cluster as the packing activity reads it from the API server (readWorld's shape). */
export function worldOf(cluster: SimCluster): World {
  const nodes = [...cluster.nodes.values()].sort((a, b) => a.name.localeCompare(b.name));
  return {
    provisionable: [],
    awaiting: 0,
    bound: [...cluster.pods.values()].map((p) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: p.name, namespace: p.namespace, labels: { app: p.app } },
      spec: { nodeName: p.node, containers: [{ name: 'main', resources: { requests: { cpu: `${p.cpu}m`, memory: `${p.memory}Mi` } } }] },
      status: { phase: 'Running' },
    })),
    nodes: nodes.map((n) => {
      const type = cluster.catalog.instanceTypes.find((t) => t.name === n.instanceType);
      return {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: n.name, labels: nodeLabels(cluster, n) },
        spec: { taints: [] },
        status: { capacity: { ...type?.capacity }, allocatable: { ...type?.allocatable }, conditions: [{ type: 'Ready', status: 'True' }] },
      };
    }),
    daemonSets: [],
    nodeClaims: nodes.map((n) =>
      StoredNodeClaimSchema.parse({
        metadata: { name: n.nodeClaim, uid: `uid-${n.nodeClaim}`, resourceVersion: '1', labels: { 'karpenter.sh/nodepool': POOL, 'node.kubernetes.io/instance-type': n.instanceType, 'topology.kubernetes.io/zone': n.zone, 'karpenter.sh/capacity-type': n.capacityType } },
        spec: { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [n.instanceType] }], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: NODE_CLASS } },
        status: { nodeName: n.name, conditions: [{ type: 'Initialized', status: 'True', lastTransitionTime: INITIALIZED_AT, reason: 'Initialized', message: '' }] },
      }),
    ),
    nodePools: [nodePoolObject(cluster.pool)],
    nodeClasses: [nodeClassObject],
  };
}

/**
 * What readPlanning makes of a world: the pools and classes normalised as
 * validateKarpenterObjects does (without its status writes and Events), and the catalog
 * the cloud would return for the class.
 */
export function planningOf(cluster: SimCluster, world: World, batchId: string): Planning {
  const pools = new Map<string, { pool: NodePool; uid: string; raw: unknown }>();
  const classes = new Map<string, EC2NodeClass>();
  for (const raw of world.nodePools) {
    const normalised = normaliseDocument(raw);
    const pool = normalised.status === 'ok' ? normalised.objects.find((o): o is NodePool => o.kind === 'NodePool') : undefined;
    if (!pool) throw new Error(`the bench's NodePool does not validate: ${JSON.stringify(normalised)}`);
    pools.set(pool.metadata.name ?? '', { pool, uid: `uid-${pool.metadata.name}`, raw });
  }
  for (const raw of world.nodeClasses) {
    const normalised = normaliseDocument(raw);
    const nodeClass = normalised.status === 'ok' ? normalised.objects.find((o): o is EC2NodeClass => o.kind === 'EC2NodeClass') : undefined;
    if (!nodeClass) throw new Error(`the bench's EC2NodeClass does not validate: ${JSON.stringify(normalised)}`);
    classes.set(nodeClass.metadata.name ?? '', nodeClass);
  }
  return { batchId, region: REGION, world, pools, classes, skipped: [], invalid: [], typesByClass: new Map([[NODE_CLASS, cluster.catalog]]) };
}

/**
 * The disruption round's snapshot (what readRound builds from the API server): every node
 * initialized an hour ago, consolidatable (consolidateAfter 0s, no recent pod event), not
 * nominated; every pod reschedulable with default eviction cost.
 */
export function roundInputOf(cluster: SimCluster, planning: Planning): RoundInput {
  const entry = planning.pools.get(POOL);
  if (!entry) throw new Error('the bench pool is missing');
  const pool: RoundPool = { name: POOL, disruption: entry.pool.spec.disruption, budgets: entry.pool.spec.disruption.budgets, counts: { nodes: cluster.nodes.size, disrupting: 0 } };
  const byNode = podsByNode(cluster);
  const nodes: CandidateNode[] = [...cluster.nodes.values()].map((n) => ({
    nodeClaim: n.nodeClaim,
    node: n.name,
    nodePool: POOL,
    initialized: true,
    deleting: false,
    doNotDisrupt: false,
    labels: nodeLabels(cluster, n),
    nominatedUntil: Date.parse(INITIALIZED_AT) + 20_000,
    consolidatableAt: Date.parse(INITIALIZED_AT),
    pods: (byNode.get(n.name) ?? []).map((key) => {
      const [namespace = '', name = ''] = key.split('/');
      return { namespace, name, doNotDisrupt: false, reschedulable: true };
    }),
  }));
  return { now: BENCH_NOW, nodes, pools: new Map([[POOL, pool]]) };
}
