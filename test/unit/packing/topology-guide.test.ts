// The LP guide over many pools (issue 14, finding 3): pattern columns keep per-node
// rules (patterns.ts PatternRule), rounding stops at a limit, and the guided solve of a
// many-pool input passes the independent checker, is deterministic, stays within the
// pools' limits and is cheaper than the greedy solve.
import { solve, type LinearSolver } from '../../../core/packing';
import { PatternGenerator, type PatternRule } from '../../../core/packing/patterns';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { manyPools } from '../../bench/generators';
import { checkPlan } from './checker';
import { mulberry32 } from './random-inputs';

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

  it('a class without an arch selector may be planned on more than one pool', () => {
    // Plain pods (no selector, no toleration) fit od, spot, arm and memory: the joint
    // generation puts them where the mix is cheapest, not all in one pool.
    const guided = solve(input, { linearSolver });
    const plainPods = new Set(input.pods.filter((p) => Object.keys(p.nodeSelector).length === 0).map((p) => `${p.namespace}/${p.name}`));
    const pools = new Set(guided.nodeClaims.filter((c) => c.pods.some((pod) => plainPods.has(pod))).map((c) => c.nodePool));
    expect(pools.size).toBeGreaterThan(1);
  });
});
