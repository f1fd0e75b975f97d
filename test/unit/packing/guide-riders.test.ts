// The LP guide's rider pass (core/packing/guide-riders.ts, issue 14 finding 3): once the
// first pass has closed a limited pool, a lighter pool's nodes are planned for its own
// pods and the pods that may ride on them, and every such node is opened by one of its
// own pods — so Karpenter's weights hold.
import { solve, type LinearSolver } from '../../../core/packing';
import { assignOpeners } from '../../../core/packing/guide-riders';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { manyPools } from '../../bench/generators';
import { checkPlan } from './checker';

let linearSolver: LinearSolver;
beforeAll(async () => {
  linearSolver = await loadLinearSolver();
});

const node = (type: number, counts: number[]): { type: number; counts: Int32Array } => ({ type, counts: Int32Array.from(counts) });

describe('assignOpeners', () => {
  it.each([
    ['each node takes a native of an item it holds', [node(0, [2, 0]), node(0, [0, 3])], [1, 1], [0, 1]],
    ['a node holding no item with natives gets none', [node(0, [0, 4]), node(0, [1, 0])], [1, 0], [-1, 0]],
    // Node 1 has only item 0; node 0 could use either: item 0's single native goes to node 1.
    ['the scarce native goes to the node with no other choice', [node(0, [1, 1]), node(0, [1, 0])], [1, 5], [1, 0]],
    ['natives run out: later nodes of the item get none', [node(0, [3]), node(0, [3]), node(0, [3])], [2], [0, 0, -1]],
  ] as const)('%s', (_, nodes, natives, expected) => {
    expect(assignOpeners(nodes, natives)).toEqual(expected);
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
    // with it; 21.37 with the first pass's independent blocks (od's, batch's) generated apart.
    expect(plan.totalPrice).toBeLessThan(21.5);
  });
});
