// Riders (core/packing/riders.ts, issue 14 finding 3): a lighter pool that must open nodes
// for pods of its own carries pods a heavier pool would otherwise open nodes for —
// Karpenter-legal, since only the opener decides the pool — and keeps its own pods to
// open its next nodes while riders still wait. Weights hold: every node of the lighter
// pool has a pod no heavier pool admits.
import { solve, type LinearSolver, type PackingInput, type Plan } from '../../../core/packing';
import { loadLinearSolver } from '../../../activities/packing/highs';
import { aNodePool, anInput, anInstanceType, aPod } from './builders';
import { checkPlan } from './checker';

let linearSolver: LinearSolver;
beforeAll(async () => {
  linearSolver = await loadLinearSolver();
});

/**
 * `spot` (weight 40, amd64 spot) and `arm` (weight 10, arm64, cheaper per cpu); every pod
 * 500m/512Mi, plain ones named first so neither name nor size puts the arm64 pods first.
 */
function armAndSpot(plain: number, arm64: number, extraPools: PackingInput['nodePools'] = []): PackingInput {
  return anInput({
    pods: [
      ...Array.from({ length: plain }, (_, i) => aPod({ name: `a-plain-${i}` })),
      ...Array.from({ length: arm64 }, (_, i) => aPod({ name: `b-arm-${i}`, nodeSelector: { 'kubernetes.io/arch': 'arm64' } })),
    ],
    nodePools: [
      ...extraPools,
      aNodePool({ name: 'spot', weight: 40, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }], instanceTypes: ['m5.large', 'm5.xlarge'].map((n) => anInstanceType(n)) }),
      aNodePool({ name: 'arm', weight: 10, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], instanceTypes: ['m6g.large', 'm6g.xlarge'].map((n) => anInstanceType(n)) }),
    ],
  });
}

const armPod = (pod: string): boolean => pod.startsWith('default/b-arm-');

function expectWeightsKept(plan: Plan): void {
  // No arm node exists without an arm64 pod (the only pods spot cannot take).
  expect(plan.nodeClaims.filter((c) => c.nodePool === 'arm' && !c.pods.some(armPod)).map((c) => c.name)).toEqual([]);
}

describe('riders on a lighter pool', () => {
  it.each([
    ['greedy', undefined],
    ['guided', 'lp'],
  ] as const)('%s: plain pods ride on the node an arm64 pod opens instead of opening a spot node', (_, lp) => {
    // 5 plain + 2 arm64 pods of 500m: one m6g.xlarge (3,930m) holds all seven for less
    // than an m5.xlarge for the plain pods plus an m6g.large for the arm64 ones.
    const input = armAndSpot(5, 2);
    const plan = solve(input, lp === undefined ? {} : { linearSolver });
    expect(checkPlan(input, plan)).toEqual([]);
    expect(plan.unschedulable).toEqual([]);
    expectWeightsKept(plan);
    expect(plan.nodeClaims.map((c) => [c.nodePool, c.instanceType, c.pods.length])).toEqual([['arm', 'm6g.xlarge', 7]]);
  });

  it('each arm64 pod opens a node of its own while plain pods still wait, so none of them opens a spot node', () => {
    // 12 plain + 2 arm64 pods: two m6g.xlarge, one arm64 pod and six plain pods each. Had
    // the first arm node taken both arm64 pods, the plain pods left over would open spot.
    const input = armAndSpot(12, 2);
    const plan = solve(input, { linearSolver });
    expect(checkPlan(input, plan)).toEqual([]);
    expectWeightsKept(plan);
    expect(plan.nodeClaims.filter((c) => c.nodePool === 'spot')).toEqual([]);
    expect(plan.nodeClaims.map((c) => c.pods.filter(armPod).length)).toEqual([1, 1]);
  });

  it('no rider goes to the lighter pool while a heavier pool that admits the arm64 pods still has room', () => {
    // `od` (weight 80, on-demand, any arch) has 4 cpu: its node(s) open first, for
    // whatever pods fill them; only then may an arm64 pod open an arm node.
    const od = aNodePool({ name: 'od', weight: 80, limits: { cpu: '4' }, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], instanceTypes: ['m5.large', 'm5.xlarge', 'm6g.large', 'm6g.xlarge'].map((n) => anInstanceType(n)) });
    const input = armAndSpot(12, 10, [od]);
    for (const plan of [solve(input), solve(input, { linearSolver })]) {
      expect(checkPlan(input, plan)).toEqual([]);
      expectWeightsKept(plan);
      const odCpu = plan.nodeClaims.filter((c) => c.nodePool === 'od').reduce((sum, c) => sum + (c.instanceType.endsWith('.xlarge') ? 4 : 2), 0);
      if (plan.nodeClaims.some((c) => c.nodePool !== 'od')) expect(odCpu).toBeGreaterThan(2);
    }
  });
});
