// Drift rules, one failing case each, in Karpenter's order.
import { driftOf, NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION_ANNOTATION, type DriftFacts } from '../../../core/disruption';
import { NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION_ANNOTATION } from '../../../core/provisioning/nodeclaims';
import { requirements } from '../../../core/scheduling/requirements';

const facts = (o: { annotations?: Record<string, string>; labels?: Record<string, string>; claim?: Partial<DriftFacts['claim']>; pool?: Partial<DriftFacts['pool']>; nodeClass?: Partial<NonNullable<DriftFacts['nodeClass']>> | null } = {}): DriftFacts => ({
  claim: {
    annotations: { [NODEPOOL_HASH_ANNOTATION]: '111', [NODEPOOL_HASH_VERSION_ANNOTATION]: 'v3', [NODECLASS_HASH_ANNOTATION]: 'aaa', [NODECLASS_HASH_VERSION_ANNOTATION]: 'v4', ...o.annotations },
    labels: { 'karpenter.sh/capacity-type': 'spot', 'node.kubernetes.io/instance-type': 'm5.large', ...o.labels },
    imageId: 'ami-1',
    subnetId: 'subnet-a',
    securityGroupIds: ['sg-2', 'sg-1'],
    ...o.claim,
  },
  pool: { hash: '111', hashVersion: 'v3', requirements: requirements({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }), ...o.pool },
  ...(o.nodeClass === null ? {} : { nodeClass: { hash: 'aaa', hashVersion: 'v4', amis: ['ami-1'], subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-1', 'sg-2'], ...o.nodeClass } }),
});

it('an up-to-date claim has not drifted', () => {
  expect(driftOf(facts())).toBeUndefined();
});

it.each([
  ['the template hash moved', facts({ pool: { hash: '222' } }), 'NodePoolDrifted'],
  ['capacity type no longer allowed', facts({ pool: { requirements: requirements({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }) } }), 'RequirementsDrifted'],
  ['instance type excluded', facts({ pool: { requirements: requirements({ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5.large'] }) } }), 'RequirementsDrifted'],
  ['the release moved the AMI', facts({ nodeClass: { amis: ['ami-2'] } }), 'AMIDrift'],
  ['subnet left the class', facts({ nodeClass: { subnets: ['subnet-b'] } }), 'SubnetDrift'],
  ['security groups changed', facts({ nodeClass: { securityGroups: ['sg-1'] } }), 'SecurityGroupDrift'],
  ['class hash moved', facts({ nodeClass: { hash: 'bbb' } }), 'NodeClassDrift'],
])('%s → %s', (_name, f, reason) => {
  expect(driftOf(f)).toEqual({ reason, message: expect.any(String) });
});

it('the pool comes first: both template and AMI moved → NodePoolDrifted', () => {
  expect(driftOf(facts({ pool: { hash: '222' }, nodeClass: { amis: ['ami-2'] } }))?.reason).toBe('NodePoolDrifted');
});

it('a hash of another version is not drift', () => {
  expect(driftOf(facts({ annotations: { [NODEPOOL_HASH_VERSION_ANNOTATION]: 'v2' }, pool: { hash: '222' } }))).toBeUndefined();
  expect(driftOf(facts({ annotations: { [NODECLASS_HASH_VERSION_ANNOTATION]: 'v3' }, nodeClass: { hash: 'bbb' } }))).toBeUndefined();
});

it('security groups compare as sets, in any order', () => {
  expect(driftOf(facts({ nodeClass: { securityGroups: ['sg-2', 'sg-1'] } }))).toBeUndefined();
});

it('an unreadable node class (or one not resolved yet) decides nothing about cloud drift', () => {
  expect(driftOf(facts({ nodeClass: null, claim: { imageId: 'ami-9' } }))).toBeUndefined();
  expect(driftOf(facts({ nodeClass: { amis: [] }, claim: { imageId: 'ami-9' } }))).toBeUndefined();
});

it('the message says what moved', () => {
  expect(driftOf(facts({ nodeClass: { amis: ['ami-2'] } }))?.message).toBe('the node runs ami-1; its node class now resolves to ami-2');
});
