// The LP guide's rider pass (core/packing/guide-riders.ts, issue 14 finding 3): once the
// first pass has closed a limited pool, a lighter pool's nodes are planned for its own
// pods and the pods that may ride on them, and every such node is opened by one of its
// own pods — so Karpenter's weights hold. The LP knows the openers (patterns.ts
// PatternProblem.openers): every rounded node names one, and no item opens more nodes
// than it has natives.
import { solve, type LinearSolver } from '../../../core/packing';
import { PatternGenerator, type Pattern } from '../../../core/packing/patterns';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { manyPools } from '../../bench/generators';
import { checkPlan } from './checker';
import { mulberry32 } from './random-inputs';

let linearSolver: LinearSolver;
beforeAll(async () => {
  linearSolver = await loadLinearSolver();
});

/** Per item, how many of the nodes name it as their opener. */
function openedBy(nodes: readonly Pattern[], items: number): number[] {
  const opened = Array.from({ length: items }, () => 0);
  for (const node of nodes) opened[node.opener ?? -1] = (opened[node.opener ?? -1] ?? 0) + 1;
  return opened;
}

describe('patterns with openers', () => {
  // [cpu milli, memory MiB]: a small type holds 4 one-cpu pods, a large one 12 for 3.3× the price.
  const types = [
    { capacity: Float64Array.from([4000, 8192]), price: 1 },
    { capacity: Float64Array.from([12000, 24576]), price: 3.3 },
  ];
  const options = { mode: 'fast', maxIterations: 20, dpBudget: 0, fastBudget: 3_000_000, searchNodes: 0 } as const;

  it('two natives open two nodes, which must hold all 22 pods: two large nodes, each opened by a native', () => {
    // Without openers six small nodes (cost 6) hold them, five of them with no native.
    const items = [{ requests: Float64Array.from([1000, 1024]), count: 2 }, { requests: Float64Array.from([1000, 1024]), count: 20 }];
    const generator = new PatternGenerator({ items, types, openers: [2, 0] }, linearSolver, options);
    try {
      generator.generate();
      const { nodes, left } = generator.round(50, 2);
      expect(left).toEqual([0, 0]);
      expect(nodes.map((n) => [n.type, n.opener, n.counts[0]])).toEqual([[1, 0, 1], [1, 0, 1]]);
      expect(nodes.reduce((sum, n) => sum + (n.counts[1] ?? 0), 0)).toBe(20);
    } finally {
      generator.dispose();
    }
  });

  it.each(Array.from({ length: 10 }, (_, i) => i + 1))('seed %i: every node names an opener it holds, no item opens more nodes than it has openers', (seed) => {
    const random = mulberry32(seed);
    const items = Array.from({ length: 6 }, () => ({
      requests: Float64Array.from([250 * (1 + Math.floor(random() * 8)), 512 * (1 + Math.floor(random() * 8))]),
      count: 1 + Math.floor(random() * 15),
    }));
    const openers = items.map((item, k) => (k % 2 === 0 ? Math.min(item.count, 1 + Math.floor(random() * 3)) : 0));
    const generator = new PatternGenerator({ items, types, openers }, linearSolver, options);
    try {
      generator.generate();
      const { nodes, left } = generator.round(200, 2);
      for (const node of nodes) {
        expect(node.opener).toBeGreaterThanOrEqual(0);
        expect(node.counts[node.opener ?? -1]).toBeGreaterThan(0);
      }
      openedBy(nodes, items.length).forEach((n, k) => expect(n).toBeLessThanOrEqual(openers[k] ?? 0));
      // Every pod is on a node or left over, once.
      const placed = items.map((_, k) => nodes.reduce((sum, n) => sum + (n.counts[k] ?? 0), 0) + (left[k] ?? 0));
      expect(placed).toEqual(items.map((item) => item.count));
    } finally {
      generator.dispose();
    }
  });
});

describe('rider pass on many pools', () => {
  const base = manyPools();
  const input = { ...base, pods: base.pods.slice(0, 600) };
  const armPods = new Set(input.pods.filter((p) => p.nodeSelector['kubernetes.io/arch'] === 'arm64').map((p) => `${p.namespace}/${p.name}`));

  it('plain pods ride on arm64 nodes opened by arm64-only pods: valid, within weights, cheaper than the first pass and greedy fill alone', () => {
    const plan = solve(input, { linearSolver });
    expect(checkPlan(input, plan)).toEqual([]);
    expect(plan.unschedulable).toEqual([]);
    // Weights: every arm node holds a pod no heavier pool admits (od is spent, spot is amd64).
    expect(plan.nodeClaims.filter((c) => c.nodePool === 'arm' && !c.pods.some((pod) => armPods.has(pod))).map((c) => c.name)).toEqual([]);
    // 22.87 $/h before the rider pass (first pass, then the greedy fill with riders); 21.68
    // with it; 21.37 with the first pass's independent blocks (od's, batch's) generated apart;
    // 21.12 with openers in the rider pass's LP and its top-up.
    expect(plan.totalPrice).toBeLessThan(21.25);
  });
});
