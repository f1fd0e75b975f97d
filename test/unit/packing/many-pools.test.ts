// The LP guide over many pools (issue 14, finding 3): pattern columns keep per-node
// rules (patterns.ts PatternRule), rounding stops at a limit, and the guided solve of a
// many-pool input passes the independent checker, is deterministic, stays within the
// pools' limits and is cheaper than the greedy solve.
import { solve, type LinearSolver, type PackingInput, type PendingPod } from '../../../core/packing';
import { configurationBound } from '../../../core/packing/configuration-bound';
import { PatternGenerator, type PatternRule } from '../../../core/packing/patterns';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { manyPools } from '../../bench/generators';
import { aNodePool, anInput, anInstanceType, aPod } from './builders';
import { checkPlan, quantityValue } from './checker';
import { mulberry32, pick } from './random-inputs';

let linearSolver: LinearSolver;
beforeAll(async () => {
  linearSolver = await loadLinearSolver();
});

/** Whether a pattern keeps a rule: a node with an owner holds at most `cap` matchers. */
function keeps(counts: ArrayLike<number>, rule: PatternRule): boolean {
  const owners = rule.owners.reduce((sum, k) => sum + (counts[k] ?? 0), 0);
  const matching = rule.matchers.reduce((sum, k) => sum + (counts[k] ?? 0), 0);
  return owners === 0 || matching <= rule.cap;
}

describe('pattern rules', () => {
  // Items: [cpu milli, memory MiB, pods]. Types: one small, one large.
  const types = [
    { capacity: Float64Array.from([2000, 4096, 20]), price: 0.1 },
    { capacity: Float64Array.from([16000, 32768, 100]), price: 0.75 },
  ];

  it.each(Array.from({ length: 12 }, (_, i) => i + 1))('seed %i: every node rounding returns keeps every rule and the demand is met', (seed) => {
    const random = mulberry32(seed);
    const items = Array.from({ length: 6 }, () => ({
      requests: Float64Array.from([250 * (1 + Math.floor(random() * 6)), 256 * (1 + Math.floor(random() * 8)), 1]),
      count: 1 + Math.floor(random() * 12),
    }));
    // Item 0 is an anti-affinity owner matching itself and item 1 (a deployment's other
    // pods); items 2 and 3 a hostname spread (maxSkew 2) whose owner is item 2.
    const rules: PatternRule[] = [
      { owners: [0], matchers: [0, 1], cap: 1 },
      { owners: [2], matchers: [2, 3], cap: 2 },
    ];
    const generator = new PatternGenerator({ items, types, rules }, linearSolver, { mode: 'fast', maxIterations: 30, dpBudget: 0, fastBudget: 3_000_000, searchNodes: 0 });
    try {
      generator.generate();
      const { nodes, left } = generator.round(500, 2);
      expect(left.every((n) => n === 0)).toBe(true);
      const placed = items.map(() => 0);
      for (const node of nodes) {
        for (const rule of rules) expect(keeps(node.counts, rule)).toBe(true);
        node.counts.forEach((c, k) => { placed[k] = (placed[k] ?? 0) + c; });
      }
      expect(placed).toEqual(items.map((item) => item.count));
    } finally {
      generator.dispose();
    }
  });

  it('an owner matching its own anti-affinity rule gets a node of its own kind each', () => {
    // Four tiny owners would share one small node without the rule.
    const items = [{ requests: Float64Array.from([100, 128, 1]), count: 4 }];
    const generator = new PatternGenerator({ items, types, rules: [{ owners: [0], matchers: [0], cap: 1 }] }, linearSolver, { mode: 'fast', maxIterations: 10, dpBudget: 0, fastBudget: 3_000_000, searchNodes: 0 });
    try {
      generator.generate();
      const { nodes } = generator.round(50, 1);
      expect(nodes.map((n) => [n.type, n.counts[0]])).toEqual([[0, 1], [0, 1], [0, 1], [0, 1]]);
    } finally {
      generator.dispose();
    }
  });

  it('rounding stops at a limit and leaves the rest of the demand', () => {
    const items = [{ requests: Float64Array.from([1000, 1024, 1]), count: 20 }];
    const generator = new PatternGenerator({ items, types }, linearSolver, { mode: 'fast', maxIterations: 10, dpBudget: 0, fastBudget: 3_000_000, searchNodes: 0 });
    let nodesLeft = 1;
    try {
      generator.generate();
      const { nodes, left } = generator.round(50, 1, Infinity, { fits: () => nodesLeft > 0, take: () => { nodesLeft -= 1; } });
      expect(nodes).toHaveLength(1);
      expect((left[0] ?? 0) + nodes.reduce((sum, n) => sum + (n.counts[0] ?? 0), 0)).toBe(20);
      expect(left[0]).toBeGreaterThan(0);
    } finally {
      generator.dispose();
    }
  });
});

describe('guided solve over many pools', () => {
  const base = manyPools();
  const input = { ...base, pods: base.pods.slice(0, 600) };

  it('many pools (600 pods): valid, deterministic, cheaper than the greedy solve, within every limit', () => {
    const guided = solve(input, { linearSolver });
    expect(checkPlan(input, guided)).toEqual([]);
    expect(guided.unschedulable).toEqual([]);
    expect(guided.totalPrice).toBeLessThan(solve(input).totalPrice);
    expect(JSON.stringify(solve(structuredClone(input), { linearSolver }))).toBe(JSON.stringify(guided));
    // The on-demand pool's 200 cpu limit holds however the guide rounds.
    const types = new Map(input.nodePools.flatMap((p) => p.instanceTypes).map((t) => [t.name, t]));
    const odCpu = guided.nodeClaims.filter((c) => c.nodePool === 'od').reduce((sum, c) => sum + Number(types.get(c.instanceType)?.capacity.cpu ?? 0), 0);
    expect(odCpu).toBeLessThanOrEqual(200);
  });

  it('a lighter pool opens a node only for pods a heavier pool cannot host (Karpenter weights)', () => {
    // Weights say which pool makes new nodes first, not price: an arm64 node (weight 10)
    // exists only for pods that select arm64; plain pods may still top it up, as
    // Karpenter's scheduler fills in-flight claims of any pool before making new ones.
    const guided = solve(input, { linearSolver });
    const armPods = new Set(input.pods.filter((p) => p.nodeSelector['kubernetes.io/arch'] === 'arm64').map((p) => `${p.namespace}/${p.name}`));
    const armClaims = guided.nodeClaims.filter((c) => c.nodePool === 'arm');
    expect(armClaims.filter((c) => !c.pods.some((pod) => armPods.has(pod))).map((c) => c.name)).toEqual([]);
    expect(guided.nodeClaims.some((c) => c.nodePool === 'od')).toBe(true);
  });
});

describe('configuration-LP bound with pool requirements', () => {
  // Two pools: a spot arm64 pool and a tainted, labelled on-demand amd64 pool; pods select
  // arm64, select (and tolerate) the dedicated pool, or neither. The brute force below checks compatibility by
  // hand (arch label, taint), independently of the solver's requirement algebra.
  const arm = ['m6g.large', 'm6g.xlarge'];
  const amd = ['c5.large', 'm5.large', 'r5.large', 'm5.xlarge'];
  function poolsInput(seed: number): PackingInput {
    const random = mulberry32(seed);
    const count = 2 + Math.floor(random() * 4);
    return anInput({
      pods: Array.from({ length: count }, (_, i) => {
        const kind = pick(random, ['plain', 'arm', 'dedicated', 'dedicated']);
        return aPod({
          name: `p-${i}`, cpu: pick(random, ['250m', '500m', '1', '1500m']), memory: pick(random, ['512Mi', '1Gi', '3Gi', '6Gi']),
          ...(kind === 'arm' ? { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } : {}),
          ...(kind === 'dedicated' ? { nodeSelector: { team: 'x' }, tolerations: [{ key: 'dedicated', operator: 'Equal' as const, value: 'x', effect: 'NoSchedule' as const }] } : {}),
        });
      }),
      nodePools: [
        aNodePool({ name: 'graviton', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], instanceTypes: [...arm, ...amd].map((n) => anInstanceType(n)) }),
        aNodePool({ name: 'dedicated', labels: { team: 'x' }, taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }], instanceTypes: amd.map((n) => anInstanceType(n, { spot: false })) }),
      ],
    });
  }

  /** Cheapest partition into nodes, each block on a (pool, type) every pod of it may use. */
  function bruteForce(input: PackingInput): number {
    const need = input.pods.map((p) => ({ cpu: quantityValue(p.requests.cpu ?? '0'), memory: quantityValue(p.requests.memory ?? '0'), pod: p }));
    const options = input.nodePools.flatMap((pool) => pool.instanceTypes.map((type) => ({ pool, type, price: Math.min(...type.offerings.filter((o) => o.available).map((o) => o.price)) })))
      .filter((o) => o.pool.requirements.every((r) => r.values?.includes(o.type.labels[r.key] ?? '') ?? true));
    const admits = (o: (typeof options)[number], pod: PendingPod): boolean => {
      const arch = pod.nodeSelector['kubernetes.io/arch'];
      if (arch !== undefined && o.type.labels['kubernetes.io/arch'] !== arch) return false;
      const team = pod.nodeSelector.team;
      if (team !== undefined && o.pool.labels.team !== team) return false;
      return o.pool.taints.every((taint) => pod.tolerations.some((t) => t.key === taint.key && t.value === taint.value));
    };
    const blockCost = (block: number[]): number => {
      const cpu = block.reduce((s, i) => s + (need[i]?.cpu ?? 0), 0);
      const memory = block.reduce((s, i) => s + (need[i]?.memory ?? 0), 0);
      let best = Infinity;
      for (const o of options) {
        if (cpu > quantityValue(o.type.allocatable.cpu ?? '0') || memory > quantityValue(o.type.allocatable.memory ?? '0') || block.length > Number(o.type.allocatable.pods)) continue;
        if (block.every((i) => { const pod = need[i]?.pod; return pod !== undefined && admits(o, pod); })) best = Math.min(best, o.price);
      }
      return best;
    };
    let best = Infinity;
    const blocks: number[][] = [];
    const visit = (i: number): void => {
      if (i === need.length) {
        best = Math.min(best, blocks.reduce((sum, b) => sum + blockCost(b), 0));
        return;
      }
      for (const block of blocks) { block.push(i); visit(i + 1); block.pop(); }
      blocks.push([i]); visit(i + 1); blocks.pop();
    };
    visit(0);
    return best;
  }

  const seeds = Array.from({ length: 30 }, (_, i) => i + 700);

  it.each(seeds)('seed %i: ≤ the optimum that respects pool requirements and taints, ≥ the bound that ignores them', (seed) => {
    const input = poolsInput(seed);
    const optimum = bruteForce(input);
    const aware = configurationBound(input, linearSolver, { requirements: true })?.bound ?? Infinity;
    const blind = configurationBound(input, linearSolver)?.bound ?? Infinity;
    expect(Number.isFinite(optimum)).toBe(true);
    expect(aware).toBeLessThanOrEqual(optimum + 1e-9);
    expect(aware).toBeGreaterThanOrEqual(blind - 1e-9);
    // And every plan the solver makes costs at least the bound.
    expect(solve(input, { linearSolver }).totalPrice).toBeGreaterThanOrEqual(aware - 1e-9);
  });

  it('is stronger where requirements bind: the dedicated pool\'s pods cannot use the spot arm64 pool', () => {
    let aware = 0;
    let blind = 0;
    let optimum = 0;
    for (const seed of seeds) {
      const input = poolsInput(seed);
      aware += configurationBound(input, linearSolver, { requirements: true })?.bound ?? 0;
      blind += configurationBound(input, linearSolver)?.bound ?? 0;
      optimum += bruteForce(input);
    }
    expect(aware).toBeGreaterThan(blind * 1.2);
    expect(aware).toBeLessThanOrEqual(optimum);
  });
});
