// Seeded clusters for `npm run bench:disruption`. Every distribution is written down here so
// the figures can be reproduced exactly.
import { solve, type LinearSolver, type PackingInput } from '../../core/packing';
import { packingInputSchema } from '../../core/packing';
import { mulberry32 } from '../support/random';
import { BENCH_NOW, benchCatalog, POOL, priceOf, podKey, roomOf, type BenchPool, type SimCluster, type SimNode, type SimPod } from './disruption-cluster';

const SIZES = ['large', 'xlarge', '2xlarge', '4xlarge'] as const;
/** c5, m5, r5 in four sizes: 2–16 vCPU at 2, 4 and 8 GiB per vCPU (us-east-1 on-demand $0.085–$1.008/h). */
export const BENCH_TYPES = ['c5', 'm5', 'r5'].flatMap((family) => SIZES.map((size) => `${family}.${size}`));
export const BENCH_ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

function lognormal(random: () => number, mu: number, sigma: number): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

/** A deployment's pod shape: cpu ~ lognormal around `medianCpu` m (50m steps, 50m–4000m); memory = cpu × lognormal(ln 3, 0.6) MiB per millicore (64 MiB steps, 64 MiB–16 GiB): c-, m- and r-shaped pods mixed. */
export interface PodShape {
  cpu: number;
  memory: number;
}

export function podShape(random: () => number, medianCpu: number): PodShape {
  const cpu = Math.min(4000, Math.max(50, Math.round(lognormal(random, Math.log(medianCpu), 0.8) / 50) * 50));
  const memory = Math.min(16384, Math.max(64, Math.round((cpu * lognormal(random, Math.log(3), 0.6)) / 64) * 64));
  return { cpu, memory };
}

/**
 * Decision time: `nodes` nodes of the pool (a random type each, zones in turn), already
 * running pods bound to them. 30 % of nodes are underused — filled to 10–45 % of their cpu —
 * the rest to 60–95 %, each at least one pod; memory and pod slots are never exceeded. Pods come from 400
 * deployments (median 400m cpu), drawn at random per node. Budget 10 %.
 */
export function underusedCluster(nodes: number, seed = 23): SimCluster {
  const random = mulberry32(seed);
  const pool: BenchPool = { types: BENCH_TYPES, zones: BENCH_ZONES, budget: '10%' };
  const catalog = benchCatalog(pool);
  const deployments = Array.from({ length: 400 }, () => podShape(random, 400));
  const simNodes = new Map<string, SimNode>();
  const pods = new Map<string, SimPod & { node: string }>();
  const replicas = new Array<number>(deployments.length).fill(0);
  for (let i = 0; i < nodes; i++) {
    const name = `${POOL}-${String(i).padStart(5, '0')}`;
    const instanceType = BENCH_TYPES[Math.floor(random() * BENCH_TYPES.length)]!;
    const zone = BENCH_ZONES[i % BENCH_ZONES.length]!;
    simNodes.set(name, { name, nodeClaim: name, instanceType, zone, capacityType: 'on-demand', price: priceOf(catalog, instanceType, zone, 'on-demand') });
    const room = roomOf(catalog, instanceType);
    const fill = random() < 0.3 ? 0.1 + random() * 0.35 : 0.6 + random() * 0.35;
    let cpu = 0;
    let memory = 0;
    let count = 0;
    // draw until ten draws in a row do not fit
    for (let misses = 0; misses < 10 && count < room.pods; ) {
      const d = Math.floor(random() * deployments.length);
      const shape = deployments[d]!;
      // every node runs at least one pod (an empty one would be emptiness's, not consolidation's)
      const over = count > 0 ? cpu + shape.cpu > fill * room.cpu : shape.cpu > room.cpu;
      if (over || memory + shape.memory > room.memory) {
        misses++;
        continue;
      }
      misses = 0;
      cpu += shape.cpu;
      memory += shape.memory;
      count++;
      const pod = { namespace: 'default', name: `d${d}-${replicas[d]!++}`, app: `d${d}`, ...shape, node: name };
      pods.set(podKey(pod), pod);
    }
  }
  return { pool, catalog, nodes: simNodes, pods, launched: 0 };
}

/** All these pods waiting on the pool's types (no nodes yet): what a fresh plan, or a lower bound, starts from. */
export function pendingInputOf(pods: readonly SimPod[], catalog: SimCluster['catalog']): PackingInput {
  return packingInputSchema.parse({
    now: BENCH_NOW,
    pods: pods.map((p) => ({ namespace: p.namespace, name: p.name, labels: { app: p.app }, requests: { cpu: `${p.cpu}m`, memory: `${p.memory}Mi` } })),
    nodePools: [
      {
        name: POOL,
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        instanceTypes: catalog.instanceTypes.map((t) => ({ name: t.name, labels: { ...t.labels }, capacity: { ...t.capacity }, allocatable: { ...t.allocatable }, offerings: t.offerings.map((o) => ({ ...o })) })),
      },
    ],
  });
}

/** packed onto 498 nodes by autonode's solver (measured) */
export const FRAGMENTED_PODS = 4200;

export interface Fragmented {
  /** the pods packed by autonode's solver, before the scale-down */
  packed: SimCluster;
  /** half of the pods gone (at random), every node still there */
  fragmented: SimCluster;
}

/**
 * The fragmented cluster: `pods` (FRAGMENTED_PODS) pods from deployments of 10 replicas (median 1000m cpu)
 * packed by autonode's solver (LP guide on) onto the pool's types — 498 nodes with the
 * default count — then `removed` of the pods deleted at random. Budget 100 % (the bench runs
 * consolidation to a fixed point; budgets would only spread it over more rounds).
 */
export function fragmentedCluster(linearSolver: LinearSolver, options: { pods?: number; removed?: number; seed?: number } = {}): Fragmented {
  const random = mulberry32(options.seed ?? 31);
  const pool: BenchPool = { types: BENCH_TYPES, zones: BENCH_ZONES, budget: '100%' };
  const catalog = benchCatalog(pool);
  const count = options.pods ?? FRAGMENTED_PODS;
  const all: SimPod[] = [];
  for (let d = 0; all.length < count; d++) {
    const shape = podShape(random, 1000);
    for (let r = 0; r < 10 && all.length < count; r++) all.push({ namespace: 'default', name: `d${d}-${r}`, app: `d${d}`, ...shape });
  }
  const plan = solve(pendingInputOf(all, catalog), { linearSolver });
  if (plan.unschedulable.length > 0) throw new Error(`${plan.unschedulable.length} pods do not fit the pool's types`);
  const byKey = new Map(all.map((p) => [podKey(p), p]));
  const nodes = new Map<string, SimNode>();
  const pods = new Map<string, SimPod & { node: string }>();
  plan.nodeClaims.forEach((claim, i) => {
    const name = `${POOL}-${String(i).padStart(5, '0')}`;
    nodes.set(name, { name, nodeClaim: name, instanceType: claim.instanceType, zone: claim.zone, capacityType: 'on-demand', price: claim.price });
    for (const key of claim.pods) pods.set(key, { ...byKey.get(key)!, node: name });
  });
  const packed: SimCluster = { pool, catalog, nodes, pods, launched: 0 };
  // a seeded shuffle (Fisher–Yates); the first `removed` share goes
  const keys = [...pods.keys()].sort();
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const gone = new Set(keys.slice(0, Math.round(keys.length * (options.removed ?? 0.5))));
  const fragmented: SimCluster = { ...packed, pods: new Map([...pods].filter(([key]) => !gone.has(key))) };
  return { packed, fragmented };
}
