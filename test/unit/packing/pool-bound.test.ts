// The weights- and limits-aware bound (core/packing/pool-bound.ts): on small random
// inputs with three weighted pools, one of them limited, it never exceeds the optimum
// that respects Karpenter's weights and limits (found here by brute force, by hand:
// arch labels, capacity types, limits, an opener per node) — with limits charged at the
// launched capacity (`limitsCountLaunched`) and at reservations (the default) — and it is
// never below the bound that ignores pools (bound.ts).
import { solve, type LinearSolver, type PackingInput, type PendingPod } from '../../../core/packing';
import { lowerBound } from '../../../core/packing/bound';
import { poolBound } from '../../../core/packing/pool-bound';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { aNodePool, anInput, anInstanceType, aPod } from './builders';
import { quantityValue } from './checker';
import { mulberry32, pick, randomInput } from './random-inputs';

let linearSolver: LinearSolver;
beforeAll(async () => {
  linearSolver = await loadLinearSolver();
});

const names = ['c5.large', 'm5.large', 'r5.large', 'm5.xlarge', 'm6g.large', 'm6g.xlarge'];

/**
 * Pools, heaviest first: `od` (on-demand, limited in cpu or in nodes), `spot` (amd64 spot),
 * `arm` (arm64, any capacity type). Pods select arm64 or nothing. The spot arm64 types are
 * the cheapest, so a bound blind to weights puts every pod there.
 */
function weightedInput(seed: number): PackingInput {
  const random = mulberry32(seed);
  const count = 2 + Math.floor(random() * 3);
  const limits: Record<string, string> = random() < 0.5 ? { cpu: pick(random, ['2', '4', '6']) } : { nodes: pick(random, ['1', '2']) };
  return anInput({
    pods: Array.from({ length: count }, (_, i) => aPod({
      name: `p-${i}`, cpu: pick(random, ['250m', '500m', '1', '1500m']), memory: pick(random, ['512Mi', '1Gi', '3Gi', '6Gi']),
      ...(random() < 0.4 ? { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } : {}),
    })),
    nodePools: [
      aNodePool({ name: 'od', weight: 80, limits, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], instanceTypes: names.map((n) => anInstanceType(n)) }),
      aNodePool({ name: 'spot', weight: 40, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }], instanceTypes: names.map((n) => anInstanceType(n)) }),
      aNodePool({ name: 'arm', weight: 10, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], instanceTypes: names.map((n) => anInstanceType(n)) }),
    ],
  });
}

interface Option { pool: string; weight: number; type: string; arch: string; price: number; cpu: number; memory: number; pods: number; capacityCpu: number }

/**
 * The cheapest plan under Karpenter's weights and limits, in its end-state form (limits
 * charged at the launched type's capacity; with `limitsCountLaunched` false, at
 * reservations, of which only "the pool has a node" or "its node limit is reached" is sure): every
 * partition of the pods into nodes, every (pool, type) for every node, kept when each node
 * admits its pods, every pool stays within its limits, and each node holds a pod (its
 * opener) for which every heavier pool admitting it is exhausted at the end (no type of it
 * that admits the pod fits the pool's remaining limit). Exhaustion at the time a node is
 * opened implies exhaustion at the end (usage only grows), so this is ≤ the sequential
 * optimum: the bound must be below it.
 */
function bruteForce(input: PackingInput, limitsCountLaunched = true): number {
  const pools = input.nodePools;
  const options: Option[] = pools.flatMap((pool) => pool.instanceTypes.flatMap((type) => {
    const arch = type.labels['kubernetes.io/arch'] ?? 'amd64';
    const archRule = pool.requirements.find((r) => r.key === 'kubernetes.io/arch');
    if (archRule !== undefined && !(archRule.values ?? []).includes(arch)) return [];
    const capacityRule = pool.requirements.find((r) => r.key === 'karpenter.sh/capacity-type');
    const prices = type.offerings.filter((o) => o.available && (capacityRule === undefined || (capacityRule.values ?? []).includes(o.capacityType))).map((o) => o.price);
    if (prices.length === 0) return [];
    return [{
      pool: pool.name, weight: pool.weight, type: type.name, arch, price: Math.min(...prices),
      cpu: quantityValue(type.allocatable.cpu ?? '0'), memory: quantityValue(type.allocatable.memory ?? '0'), pods: Number(type.allocatable.pods), capacityCpu: quantityValue(type.capacity.cpu ?? '0'),
    }];
  }));
  const need = input.pods.map((p) => ({ pod: p, cpu: quantityValue(p.requests.cpu ?? '0'), memory: quantityValue(p.requests.memory ?? '0') }));
  const admitsPod = (o: Option, pod: PendingPod): boolean => (pod.nodeSelector['kubernetes.io/arch'] ?? o.arch) === o.arch;
  const fitsOne = (o: Option, i: number): boolean => (need[i]?.cpu ?? 0) <= o.cpu && (need[i]?.memory ?? 0) <= o.memory && o.pods >= 1;
  const limitOf = (name: string): { cpu: number; nodes: number } => {
    const pool = pools.find((p) => p.name === name);
    return { cpu: pool?.limits.cpu === undefined ? Infinity : quantityValue(pool.limits.cpu), nodes: pool?.limits.nodes === undefined ? Infinity : Number(pool.limits.nodes) };
  };
  const evaluate = (blocks: number[][], chosen: Option[]): number => {
    const used = new Map<string, { cpu: number; nodes: number }>();
    for (const o of chosen) {
      const u = used.get(o.pool) ?? { cpu: 0, nodes: 0 };
      used.set(o.pool, { cpu: u.cpu + o.capacityCpu, nodes: u.nodes + 1 });
    }
    for (const [name, u] of used) {
      const limit = limitOf(name);
      if (u.cpu > limit.cpu + 1e-9 || u.nodes > limit.nodes) return Infinity;
    }
    // Pool q could ever open a node for pod i (a type admitting it within its full limit), and is exhausted for it at the end.
    const couldHost = (q: string, i: number): boolean => {
      const limit = limitOf(q);
      return limit.nodes >= 1 && options.some((o) => o.pool === q && admitsPod(o, need[i]?.pod ?? aPod()) && fitsOne(o, i) && o.capacityCpu <= limit.cpu + 1e-9);
    };
    const exhaustedFor = (q: string, i: number): boolean => {
      const limit = limitOf(q);
      const u = used.get(q) ?? { cpu: 0, nodes: 0 };
      // Charged at reservations (the largest option, shrinking later): all that is sure at the
      // end is a node in the pool, or the node limit reached.
      if (!limitsCountLaunched) return Number.isFinite(limit.cpu) ? u.nodes >= 1 : u.nodes >= limit.nodes;
      return options.every((o) => o.pool !== q || !admitsPod(o, need[i]?.pod ?? aPod()) || !fitsOne(o, i) || u.nodes + 1 > limit.nodes || u.cpu + o.capacityCpu > limit.cpu + 1e-9);
    };
    for (let b = 0; b < blocks.length; b++) {
      const o = chosen[b];
      const block = blocks[b] ?? [];
      if (o === undefined) return Infinity;
      const opener = block.some((i) => pools.every((q) => q.weight <= o.weight || !couldHost(q.name, i) || exhaustedFor(q.name, i)));
      if (!opener) return Infinity;
    }
    return chosen.reduce((sum, o) => sum + o.price, 0);
  };
  let best = Infinity;
  const blocks: number[][] = [];
  const assign = (b: number, chosen: Option[]): void => {
    if (b === blocks.length) {
      best = Math.min(best, evaluate(blocks, chosen));
      return;
    }
    const block = blocks[b] ?? [];
    const cpu = block.reduce((s, i) => s + (need[i]?.cpu ?? 0), 0);
    const memory = block.reduce((s, i) => s + (need[i]?.memory ?? 0), 0);
    for (const o of options) {
      if (cpu > o.cpu || memory > o.memory || block.length > o.pods) continue;
      if (!block.every((i) => admitsPod(o, need[i]?.pod ?? aPod()))) continue;
      chosen.push(o);
      assign(b + 1, chosen);
      chosen.pop();
    }
  };
  const partition = (i: number): void => {
    if (i === need.length) {
      assign(0, []);
      return;
    }
    for (const block of blocks) { block.push(i); partition(i + 1); block.pop(); }
    blocks.push([i]); partition(i + 1); blocks.pop();
  };
  partition(0);
  return best;
}

describe('pool bound: weights and limits', () => {
  const seeds = Array.from({ length: 30 }, (_, i) => i + 1400);

  it.each(seeds)('seed %i: ≤ the weight- and limit-respecting optimum, ≥ the bound blind to pools', (seed) => {
    const input = weightedInput(seed);
    const optimum = bruteForce(input);
    const bound = poolBound(input, linearSolver, { limitsCountLaunched: true })?.bound ?? NaN;
    const blind = lowerBound(input);
    expect(Number.isFinite(optimum)).toBe(true);
    expect(bound).toBeLessThanOrEqual(optimum + 1e-9);
    expect(bound).toBeGreaterThanOrEqual(blind * (1 - 1e-6));
    // Limits charged at reservations (the default): a weaker relaxation, a weaker bound.
    const reserved = poolBound(input, linearSolver)?.bound ?? NaN;
    expect(reserved).toBeLessThanOrEqual(bruteForce(input, false) + 1e-9);
    expect(reserved).toBeGreaterThanOrEqual(blind * (1 - 1e-6));
    expect(reserved).toBeLessThanOrEqual(bound + 1e-9);
    // autonode's own plan follows the same semantics, so it costs at least the bound too.
    const plan = solve(input, { linearSolver });
    if (plan.unschedulable.length === 0) expect(plan.totalPrice).toBeGreaterThanOrEqual(bound - 1e-9);
  });

  it('is stronger where weights bind: plain pods open nodes in the limited on-demand pool, then on amd64 spot', () => {
    let bound = 0;
    let reserved = 0;
    let blind = 0;
    let optimum = 0;
    for (const seed of seeds) {
      const input = weightedInput(seed);
      bound += poolBound(input, linearSolver, { limitsCountLaunched: true })?.bound ?? 0;
      reserved += poolBound(input, linearSolver)?.bound ?? 0;
      blind += lowerBound(input);
      optimum += bruteForce(input);
    }
    expect(bound).toBeGreaterThan(blind * 1.1);
    expect(reserved).toBeGreaterThan(blind * 1.1);
    expect(bound).toBeLessThanOrEqual(optimum);
  });

  it('huge limits (Karpenter benchmark pools: 10M cpu) neither bind nor break the LP', () => {
    const base = weightedInput(1401);
    const input = { ...base, nodePools: base.nodePools.map((pool) => (pool.name === 'od' ? { ...pool, limits: { cpu: '10000000', memory: '10000000Gi' } } : pool)) };
    const bound = poolBound(input, linearSolver, { limitsCountLaunched: true })?.bound ?? 0;
    expect(bound).toBeGreaterThan(0);
    expect(bound).toBeGreaterThanOrEqual(lowerBound(input) * (1 - 1e-6));
    expect(bound).toBeLessThanOrEqual(bruteForce(input) + 1e-9);
  });

  it.each(seeds.slice(0, 10))('seed %i: with preferred node affinity on half the pods (soft: the optimum is unchanged) the bound stays ≤ the optimum', (seed) => {
    // A preferred node affinity is soft: it changes no plan's validity, so the optimum is the
    // brute force's. (Those pods are not `exact`, so (W) is not applied to them.)
    const base = weightedInput(seed);
    const preferArm = [{ weight: 50, requirements: [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: ['arm64'] }] }];
    const input = { ...base, pods: base.pods.map((pod, i) => (i % 2 === 0 ? { ...pod, preferredNodeAffinity: preferArm } : pod)) };
    expect(poolBound(input, linearSolver, { limitsCountLaunched: true })?.bound ?? NaN).toBeLessThanOrEqual(bruteForce(input) + 1e-9);
    expect(poolBound(input, linearSolver)?.bound ?? NaN).toBeLessThanOrEqual(bruteForce(input, false) + 1e-9);
  });

  it('never exceeds autonode\'s own plan on the property tests\' random inputs (weighted tainted pool, limits, topology, DaemonSets)', () => {
    let checked = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const input = randomInput(seed);
      if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0) continue;
      const plan = solve(input, { linearSolver });
      if (plan.unschedulable.length > 0) continue;
      checked += 1;
      const bound = poolBound(input, linearSolver)?.bound ?? NaN;
      expect(bound).toBeLessThanOrEqual(plan.totalPrice + 1e-9);
      expect(bound).toBeGreaterThanOrEqual(lowerBound(input) * (1 - 1e-6));
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('declines inputs with existing nodes or in-flight claims', () => {
    const input = weightedInput(1400);
    expect(poolBound({ ...input, existingNodes: [{ name: 'n', labels: {}, taints: [], allocatable: { cpu: '2', memory: '4Gi', pods: '10' }, pods: [] }] } as PackingInput, linearSolver)).toBeUndefined();
  });
});
