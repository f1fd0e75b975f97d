// Rule-level specification of the solver. Each rule has a case that would fail without it.
import { solve, type Plan, type PlannedNodeClaim } from '../../../core/packing';
import { checkPlan } from './checker';
import {
  aDaemonSet, aNodePool, anExistingNode, anInFlightClaim, anInput, anInstanceType, aPod, allTypes, pods, type PodOptions,
} from './builders';

function claimOf(plan: Plan, pod: string): PlannedNodeClaim {
  const claim = plan.nodeClaims.find((c) => c.pods.includes(`default/${pod}`));
  if (claim === undefined) throw new Error(`${pod} is not on a new NodeClaim: ${JSON.stringify(plan.unschedulable)}`);
  return claim;
}

function reasonFor(plan: Plan, pod: string): string {
  const entry = plan.unschedulable.find((u) => u.pod === `default/${pod}`);
  if (entry === undefined) throw new Error(`${pod} was scheduled`);
  return entry.reason;
}

const spreadZone = (maxSkew = 1, extra: Partial<PodOptions['topologySpread'] extends (infer T)[] | undefined ? T : never> = {}): PodOptions['topologySpread'] =>
  [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra }];

describe('resources', () => {
  it.each([
    ['cpu', { cpu: '3' }, (c: PlannedNodeClaim) => Number(c.allocatable.cpu?.replace('m', '')) >= 3000],
    ['memory', { memory: '20Gi' }, (c: PlannedNodeClaim) => c.instanceType.startsWith('r5') || c.instanceType.endsWith('2xlarge') || c.instanceType.endsWith('4xlarge')],
    ['extended resources', { requests: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' } }, (c: PlannedNodeClaim) => c.instanceType === 'g4dn.xlarge'],
  ] as const)('a pod requesting %s gets a type that has it', (_, options, check) => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', ...options })] }));
    expect(check(claimOf(plan, 'p'))).toBe(true);
    expect(checkPlan(anInput({ pods: [aPod({ name: 'p', ...options })] }), plan)).toEqual([]);
  });

  it('packs several pods on one node when they fit, and the node is the cheapest that holds them', () => {
    const plan = solve(anInput({ pods: pods(3, 'web', { cpu: '1', memory: '1Gi' }) }));
    expect(plan.nodeClaims).toHaveLength(1);
    expect(plan.nodeClaims[0]?.instanceType).toBe('m6g.xlarge');
    expect(plan.nodeClaims[0]?.instanceTypeOptions[0]).toBe('m6g.xlarge');
  });

  it('names the closest miss when nothing is big enough', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'huge', cpu: '3', nodeSelector: { 'kubernetes.io/arch': 'arm64' } })], nodePools: [aNodePool({ instanceTypes: [anInstanceType('m6g.large'), anInstanceType('m5.xlarge')] })] }));
    expect(reasonFor(plan, 'huge')).toMatch(/requires 3 cpu with kubernetes.io\/arch In \[arm64\]; the largest compatible type \(m6g.large\) allows 1930m/);
  });
});

describe('node selection', () => {
  it.each([
    ['nodeSelector', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }, 'kubernetes.io/arch', 'arm64'],
    ['a deprecated alias in nodeSelector', { nodeSelector: { 'beta.kubernetes.io/arch': 'arm64' } }, 'kubernetes.io/arch', 'arm64'],
    ['required node affinity', { requiredNodeAffinity: [[{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['r5'] }]] }, 'karpenter.k8s.aws/instance-family', 'r5'],
    ['Gt on instance-cpu', { requiredNodeAffinity: [[{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['4'] }]] }, 'karpenter.k8s.aws/instance-cpu', '8'],
    ['Gte on instance-cpu', { requiredNodeAffinity: [[{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['4'] }]] }, 'karpenter.k8s.aws/instance-cpu', '4'],
    ['zone requirement', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1c' } }, 'topology.kubernetes.io/zone', 'us-east-1c'],
    ['the second of two ORed terms when the first is impossible', { requiredNodeAffinity: [[{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['x9'] }], [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5'] }]] }, 'karpenter.k8s.aws/instance-family', 'c5'],
    ['a preferred node affinity when possible', { preferredNodeAffinity: [{ weight: 10, requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }] }, 'topology.kubernetes.io/zone', 'us-east-1b'],
  ] as [string, PodOptions, string, string][])('honours %s', (_, options, label, value) => {
    const input = anInput({ pods: [aPod({ name: 'p', ...options })] });
    const plan = solve(input);
    expect(claimOf(plan, 'p').labels[label]).toBe(value);
    expect(checkPlan(input, plan)).toEqual([]);
  });

  it('relaxes a preferred node affinity that cannot be met', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', preferredNodeAffinity: [{ weight: 10, requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eu-west-1a'] }] }] })] }));
    expect(claimOf(plan, 'p').zone).toMatch(/^us-east-1/);
  });

  it('reports an unsatisfiable requirement with the key and both sides', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', nodeSelector: { 'kubernetes.io/arch': 's390x' } })], nodePools: [aNodePool({ requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] })] }));
    expect(reasonFor(plan, 'p')).toMatch(/kubernetes.io\/arch In \[s390x\] is incompatible with kubernetes.io\/arch In \[amd64\]/);
  });

  it('honours NodePool requirements (NotIn) and template labels', () => {
    const input = anInput({ pods: [aPod({ name: 'p', nodeSelector: { team: 'a' } })], nodePools: [aNodePool({ labels: { team: 'a' }, requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'NotIn', values: ['m6g', 'c5', 'm5'] }] })] });
    const claim = claimOf(solve(input), 'p');
    expect(claim.instanceType).toMatch(/^(r5|g4dn)/);
    expect(claim.labels.team).toBe('a');
  });

  it('keeps at least minValues distinct values among the options', () => {
    const input = anInput({
      pods: [aPod({ name: 'p' })],
      nodePools: [aNodePool({ requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 4 }] })],
      maxInstanceTypes: 2,
    });
    const claim = claimOf(solve(input), 'p');
    const families = new Set(claim.instanceTypeOptions.map((t) => t.split('.')[0]));
    expect(families.size).toBeGreaterThanOrEqual(4);
  });
});

describe('taints and tolerations', () => {
  const tainted = aNodePool({ name: 'gpu', weight: 50, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] });
  it.each([
    ['without a toleration the tainted pool is skipped', [], 'default'],
    ['with a toleration the heavier tainted pool is used', [{ key: 'nvidia.com/gpu', operator: 'Exists' as const }], 'gpu'],
  ])('%s', (_, tolerations, pool) => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', tolerations })], nodePools: [tainted, aNodePool()] }));
    expect(claimOf(plan, 'p').nodePool).toBe(pool);
  });

  it('reports the untolerated taint', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [tainted] }));
    expect(reasonFor(plan, 'p')).toMatch(/did not tolerate taint nvidia.com\/gpu=true:NoSchedule/);
  });

  it('startupTaints do not block', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [aNodePool({ startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }] })] }));
    expect(claimOf(plan, 'p').nodePool).toBe('default');
  });

  it('PreferNoSchedule pools are avoided while another pool works, and used when none does', () => {
    const soft = aNodePool({ name: 'soft', weight: 90, taints: [{ key: 'spotty', effect: 'PreferNoSchedule' }] });
    expect(claimOf(solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [soft, aNodePool()] })), 'p').nodePool).toBe('default');
    expect(claimOf(solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [soft] })), 'p').nodePool).toBe('soft');
  });
});

describe('pools, prices and limits', () => {
  it('prefers the heavier pool even when another is cheaper', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [aNodePool({ name: 'cheap', instanceTypes: allTypes() }), aNodePool({ name: 'heavy', weight: 10 })] }));
    expect(claimOf(plan, 'p').nodePool).toBe('heavy');
  });

  it.each([
    ['spot when allowed and cheaper', [], 'spot'],
    ['on-demand when the pool requires it', [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], 'on-demand'],
  ])('chooses %s', (_, requirements, capacityType) => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [aNodePool({ instanceTypes: allTypes(), requirements })] }));
    expect(claimOf(plan, 'p').capacityType).toBe(capacityType);
  });

  it('never uses an offering marked unavailable', () => {
    const unavailable = ['us-east-1a', 'us-east-1b'].map((zone) => ({ zone, capacityType: 'spot' }));
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [aNodePool({ instanceTypes: allTypes({ unavailable }) })] }));
    expect(claimOf(plan, 'p')).toMatchObject({ zone: 'us-east-1c', capacityType: 'spot' });
  });

  it('spills to the next pool when limits are reached, and reports limits when none is left', () => {
    const input = anInput({
      pods: pods(6, 'web', { cpu: '1500m', memory: '1Gi' }),
      nodePools: [aNodePool({ name: 'small', weight: 10, limits: { cpu: '4' }, instanceTypes: [anInstanceType('m5.large', { spot: false })] })],
    });
    const plan = solve(input);
    expect(plan.nodeClaims).toHaveLength(2);
    expect(plan.unschedulable).toHaveLength(4);
    expect(plan.unschedulable[0]?.reason).toMatch(/limits would be exceeded/);
    expect(checkPlan(input, plan)).toEqual([]);
    const withSpill = solve({ ...input, nodePools: [...input.nodePools, aNodePool({ name: 'big' })] });
    expect(withSpill.unschedulable).toEqual([]);
    expect(withSpill.nodeClaims.filter((c) => c.nodePool === 'small')).toHaveLength(2);
  });

  it('counts current usage against limits', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], nodePools: [aNodePool({ limits: { cpu: '10' }, usage: { cpu: '9' } })] }));
    expect(reasonFor(plan, 'p')).toMatch(/limits/);
  });

  it('packs balanced instead of growing one claim to the largest type', () => {
    // Karpenter's loop would put all 8 on one m5.4xlarge-sized claim; two m5.2xlarge cost the same,
    // and c5/m5 mixes are cheaper: what matters is the plan costs no more than the fluid bound allows.
    const input = anInput({ pods: [...pods(4, 'cpu', { cpu: '3', memory: '2Gi' }), ...pods(4, 'mem', { cpu: '500m', memory: '14Gi' })] });
    const plan = solve(input);
    const largest = Math.max(...plan.nodeClaims.map((c) => Number(c.allocatable.cpu?.replace('m', '')) / 1000));
    expect(largest).toBeLessThan(16);
    // Best known by hand: m5.4xlarge (4 cpu-heavy + 3 memory-heavy) + r5.large = 0.894.
    expect(plan.totalPrice).toBeLessThanOrEqual(0.894);
  });
});

describe('existing capacity', () => {
  it('uses existing nodes first and lists only the pending pods placed there', () => {
    const input = anInput({ pods: [aPod({ name: 'p' })], existingNodes: [anExistingNode({ pods: [{ namespace: 'default', name: 'running', labels: {}, requests: { cpu: '500m' }, hostPorts: [], antiAffinity: [] }] })] });
    const plan = solve(input);
    expect(plan.nodeClaims).toEqual([]);
    expect(plan.existingNodes).toEqual([{ name: 'ip-10-0-0-1.ec2.internal', pods: ['default/p'] }]);
  });

  it('counts running pods against the existing node', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', cpu: '1' })], existingNodes: [anExistingNode({ pods: [{ namespace: 'default', name: 'running', labels: {}, requests: { cpu: '1500m' }, hostPorts: [], antiAffinity: [] }] })] }));
    expect(plan.existingNodes).toEqual([]);
    expect(plan.nodeClaims).toHaveLength(1);
  });

  it('uses in-flight NodeClaims before new ones and reports them as inFlightNodeClaims', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], inFlightClaims: [anInFlightClaim()] }));
    expect(plan.inFlightNodeClaims).toEqual([{ name: 'default-x7k2p', pods: ['default/p'] }]);
    expect(plan.nodeClaims).toEqual([]);
  });

  it('does not put a pod on an existing node it does not tolerate', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })], existingNodes: [anExistingNode({ taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] })] }));
    expect(plan.existingNodes).toEqual([]);
  });
});

describe('DaemonSets and host ports', () => {
  it('counts DaemonSet overhead on each new node', () => {
    // 1930m allocatable − 1500m daemon leaves too little for a 1-cpu pod on a .large.
    const input = anInput({ pods: [aPod({ name: 'p', cpu: '1' })], daemonSets: [aDaemonSet({ requests: { cpu: '1500m' } })], nodePools: [aNodePool({ instanceTypes: [anInstanceType('m5.large'), anInstanceType('m5.xlarge')] })] });
    const plan = solve(input);
    expect(claimOf(plan, 'p').instanceType).toBe('m5.xlarge');
    expect(checkPlan(input, plan)).toEqual([]);
  });

  it('ignores DaemonSets that would not run on the node', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p', cpu: '1' })], daemonSets: [aDaemonSet({ requests: { cpu: '1500m' }, nodeSelector: { 'kubernetes.io/arch': 'arm64' } })], nodePools: [aNodePool({ instanceTypes: [anInstanceType('m5.large'), anInstanceType('m5.xlarge')] })] }));
    expect(claimOf(plan, 'p').instanceType).toBe('m5.large');
  });

  it('never puts two pods with the same host port on one node', () => {
    const plan = solve(anInput({ pods: pods(2, 'p', { hostPorts: [{ port: 80, protocol: 'TCP', hostIP: '' }] }) }));
    expect(plan.nodeClaims).toHaveLength(2);
  });
});

describe('topology', () => {
  it('spreads across zones within maxSkew', () => {
    const input = anInput({ pods: pods(6, 'web', { labels: { app: 'web' }, topologySpread: spreadZone() }) });
    const plan = solve(input);
    const zones = plan.nodeClaims.flatMap((c) => c.pods.map(() => c.zone));
    expect(new Set(zones).size).toBe(3);
    expect(checkPlan(input, plan)).toEqual([]);
  });

  it('keeps hostname anti-affinity pods on separate nodes', () => {
    const anti = { labels: { app: 'web' }, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }], preferred: [] } };
    const plan = solve(anInput({ pods: pods(3, 'web', anti) }));
    expect(plan.nodeClaims).toHaveLength(3);
  });

  it('keeps zone pod affinity pods in one zone', () => {
    const affinity = { labels: { app: 'web' }, podAffinity: { required: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: { app: 'web' } } }], preferred: [] }, cpu: '1500m' };
    const plan = solve(anInput({ pods: pods(4, 'web', affinity) }));
    expect(new Set(plan.nodeClaims.map((c) => c.zone)).size).toBe(1);
    expect(plan.nodeClaims.length).toBeGreaterThan(1);
  });

  it('limits hostname spread to maxSkew pods per node', () => {
    const spread = { labels: { app: 'web' }, topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } }] };
    const plan = solve(anInput({ pods: pods(6, 'web', spread) }));
    expect(plan.nodeClaims.map((c) => c.pods.length)).toEqual([2, 2, 2]);
  });

  it('relaxes a ScheduleAnyway spread that cannot be met', () => {
    const input = anInput({ pods: pods(4, 'web', { labels: { app: 'web' }, nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1a' }, topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }] }), nodePools: [aNodePool({ limits: { nodes: '1' } })] });
    const plan = solve(input);
    expect(plan.unschedulable).toEqual([]);
    expect(plan.nodeClaims).toHaveLength(1);
  });

  it('explains a DoNotSchedule spread it cannot meet', () => {
    const input = anInput({ pods: pods(3, 'web', { labels: { app: 'web' }, topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } }] }), nodePools: [aNodePool({ limits: { nodes: '2' } })] });
    const plan = solve(input);
    expect(plan.unschedulable).toHaveLength(1);
    expect(plan.unschedulable[0]?.reason).toMatch(/limits/);
  });
});

describe('determinism and naming', () => {
  it('derives claim names from the pool and pods, in Karpenter style', () => {
    const plan = solve(anInput({ pods: [aPod({ name: 'p' })] }));
    expect(plan.nodeClaims[0]?.name).toMatch(/^default-[0-9a-z]{5}$/);
    expect(solve(anInput({ pods: [aPod({ name: 'p' })] })).nodeClaims[0]?.name).toBe(plan.nodeClaims[0]?.name);
  });
});
