// Properties over seeded random inputs: every plan passes the independent checker, and
// the solver is deterministic (same input → same bytes; input order does not matter).
// The checker is itself shown to catch planted violations, so "no problems" means something.
import { solve, type PackingInput, type Plan } from '../../../core/packing';
import { checkPlan } from './checker';
import { aNodePool, anExistingNode, anInput, aPod, pods } from './builders';
import { randomInput } from './random-inputs';

const seeds = Array.from({ length: 60 }, (_, i) => i + 1);

function clone<T>(value: T): T {
  return structuredClone(value);
}

describe('solve on random inputs', () => {
  it.each(seeds)('seed %i: every placement is valid and every pod is accounted for', (seed) => {
    const input = randomInput(seed);
    const plan = solve(input);
    expect(checkPlan(input, plan)).toEqual([]);
    // Not vacuous: something was planned.
    expect(plan.nodeClaims.length + plan.existingNodes.length).toBeGreaterThan(0);
  });

  it.each(seeds.slice(0, 20))('seed %i: deterministic byte for byte, whatever the input order', (seed) => {
    const input = randomInput(seed);
    const first = JSON.stringify(solve(input));
    expect(JSON.stringify(solve(clone(input)))).toBe(first);
    const shuffled: PackingInput = { ...clone(input), pods: [...input.pods].reverse(), nodePools: [...input.nodePools].reverse() };
    expect(JSON.stringify(solve(shuffled))).toBe(first);
  });
});

describe('the checker catches planted violations', () => {
  const base = anInput({
    pods: [
      ...pods(4, 'web', { cpu: '1', memory: '1Gi', labels: { app: 'web' }, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }], preferred: [] } }),
      ...pods(3, 'spread', { cpu: '500m', labels: { app: 's' }, topologySpread: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 's' } } }] }),
      aPod({ name: 'arm', nodeSelector: { 'kubernetes.io/arch': 'arm64' } }),
    ],
    existingNodes: [anExistingNode({ name: 'full', allocatable: { cpu: '100m', memory: '100Mi', pods: '5' } })],
    nodePools: [aNodePool({ limits: { cpu: '40' } })],
  });
  const valid = solve(base);

  it('accepts the valid plan', () => {
    expect(checkPlan(base, valid)).toEqual([]);
  });

  const mutations: [string, (plan: Plan) => void, RegExp][] = [
    ['a pod listed twice', (p) => { p.nodeClaims[0]?.pods.push(p.nodeClaims[1]?.pods[0] ?? ''); }, /appears 2 times/],
    ['a pod dropped', (p) => { p.nodeClaims[0]?.pods.pop(); }, /appears 0 times/],
    ['anti-affinity pods together', (p) => {
      const [a, b] = p.nodeClaims.filter((c) => c.pods.some((n) => n.includes('web')));
      const moved = b?.pods.find((n) => n.includes('web'));
      if (a === undefined || b === undefined || moved === undefined) throw new Error('setup');
      b.pods = b.pods.filter((n) => n !== moved);
      a.pods.push(moved);
    }, /anti-affinity/],
    ['a pod on a full existing node', (p) => { p.existingNodes.push({ name: 'full', pods: [p.nodeClaims[0]?.pods.shift() ?? ''] }); }, /full: cpu used/],
    ['an instance type too small', (p) => {
      const claim = p.nodeClaims.find((c) => c.pods.length >= 2);
      if (claim === undefined) throw new Error('setup');
      claim.instanceType = 'c5.large';
      claim.price = 0.085;
      claim.capacityType = 'on-demand';
      for (let i = 0; i < 8; i++) claim.pods.push(...(p.nodeClaims.find((c) => c !== claim && c.pods.length > 0)?.pods.splice(0, 1) ?? []));
    }, /used .* > allocatable/],
    ['arm pod on amd64', (p) => {
      const arm = p.nodeClaims.find((c) => c.pods.includes('default/arm'));
      if (arm === undefined) throw new Error('setup');
      arm.instanceType = 'm5.4xlarge';
      arm.capacityType = 'on-demand';
      arm.price = 0.768;
    }, /arm node selector/],
    ['zone spread broken', (p) => {
      for (const claim of p.nodeClaims) if (claim.pods.some((n) => n.includes('spread'))) claim.zone = 'us-east-1a';
    }, /zone spread/],
    ['a price that is not the offering\'s', (p) => { if (p.nodeClaims[0]) p.nodeClaims[0].price = 0.001; }, /price/],
    ['limits exceeded', (p) => { for (const c of p.nodeClaims) { c.instanceType = 'm5.4xlarge'; c.capacityType = 'on-demand'; c.price = 0.768; } }, /exceeds limit/],
  ];

  it.each(mutations)('reports %s', (_, mutate, expected) => {
    const broken = clone(valid);
    mutate(broken);
    const problems = checkPlan(base, broken);
    expect(problems.join('\n')).toMatch(expected);
  });
});
