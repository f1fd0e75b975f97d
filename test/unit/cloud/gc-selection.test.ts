import { selectGcCandidates, type GcInstanceView } from '../../../activities/cloud/gc';

const now = new Date('2026-01-01T00:10:00Z');
const ownedTags = (nodeClaim: string) => ({
  'kubernetes.io/cluster/c1': 'owned',
  'karpenter.sh/nodepool': 'default',
  'karpenter.sh/nodeclaim': nodeClaim,
  'karpenter.k8s.aws/ec2nodeclass': 'default',
});
const anInstance = (overrides: Partial<GcInstanceView> = {}): GcInstanceView => ({
  instanceId: 'i-1',
  zone: 'us-east-1a',
  state: 'running',
  launchTime: '2026-01-01T00:00:00Z',
  tags: ownedTags('nc-1'),
  ...overrides,
});

describe('selectGcCandidates', () => {
  it('selects an old, live instance carrying the cluster tag and every provisioner tag', () => {
    expect(selectGcCandidates([anInstance()], { clusterName: 'c1', now })).toEqual({
      candidates: [{ providerId: 'aws:///us-east-1a/i-1', instanceId: 'i-1', nodeClaim: 'nc-1', nodePool: 'default' }],
      skipped: [],
    });
  });

  const { 'karpenter.k8s.aws/ec2nodeclass': _nc, ...withoutNodeClass } = ownedTags('nc-1');
  const { 'karpenter.sh/nodeclaim': _claim, ...withoutNodeClaim } = ownedTags('nc-1');
  it.each([
    ['another cluster’s', { tags: { ...ownedTags('nc-1'), 'kubernetes.io/cluster/c1': 'shared', 'kubernetes.io/cluster/c2': 'owned' } }, 'not-provisioned-by-us'],
    ['a HyperShift NodePool machine (cluster tag only)', { tags: { 'kubernetes.io/cluster/c1': 'owned' } }, 'not-provisioned-by-us'],
    ['an untagged', { tags: {} }, 'not-provisioned-by-us'],
    ['one without the node-class tag', { tags: withoutNodeClass }, 'not-provisioned-by-us'],
    ['one without the NodeClaim tag', { tags: withoutNodeClaim }, 'not-provisioned-by-us'],
    ['a shutting-down', { state: 'shutting-down' }, 'not-live'],
    ['a terminated', { state: 'terminated' }, 'not-live'],
    ['a 30-second-old', { launchTime: '2026-01-01T00:09:30Z' }, 'too-young'],
  ] as const)('never selects %s instance', (_, overrides, reason) => {
    expect(selectGcCandidates([anInstance(overrides)], { clusterName: 'c1', now })).toEqual({ candidates: [], skipped: [{ instanceId: 'i-1', reason }] });
  });

  it('orders candidates by instance id', () => {
    const result = selectGcCandidates([anInstance({ instanceId: 'i-b' }), anInstance({ instanceId: 'i-a' })], { clusterName: 'c1', now });
    expect(result.candidates.map((c) => c.instanceId)).toEqual(['i-a', 'i-b']);
  });
});
