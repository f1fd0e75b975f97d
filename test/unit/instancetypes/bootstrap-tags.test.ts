import { BootstrapTagKeys, bootstrapFromTags, bootstrapTags, type NodeBootstrap } from '../../../core/instancetypes';

describe('node bootstrap tags', () => {
  it.each<[string, NodeBootstrap]>([
    ['a class without kubelet settings', { amiFamily: 'Custom', kubelet: {} }],
    ['every setting that changes allocatable', {
      amiFamily: 'Custom',
      kubeletProfile: 'openshift-autosize',
      rootVolumeSize: '200Gi',
      kubelet: {
        maxPods: 110,
        podsPerCore: 10,
        systemReserved: { cpu: '500m', memory: '1Gi', 'ephemeral-storage': '1Gi', pid: '100' },
        kubeReserved: { cpu: '200m', memory: '512Mi' },
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
        evictionSoft: { 'memory.available': '500Mi' },
      },
    }],
    ['a Karpenter family', { amiFamily: 'AL2023', kubelet: { maxPods: 0 } }],
  ])('round-trip %s', (_, bootstrap) => {
    expect(bootstrapFromTags(bootstrapTags(bootstrap))).toEqual({ ok: true, bootstrap });
  });

  it('write the kubelet’s flag syntax, keys sorted, within EC2’s 256-character tag values', () => {
    const tags = bootstrapTags({
      amiFamily: 'Custom',
      kubelet: {
        systemReserved: { memory: '1Gi', cpu: '500m' },
        evictionHard: { 'nodefs.available': '10%', 'memory.available': '100Mi', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%', 'pid.available': '10%' },
      },
    });
    expect(tags[BootstrapTagKeys.systemReserved]).toBe('cpu=500m,memory=1Gi');
    expect(tags[BootstrapTagKeys.evictionHard]).toBe('imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<10%');
    for (const value of Object.values(tags)) expect(value.length).toBeLessThanOrEqual(256);
  });

  it.each([
    ['no AMI family', {}, /ami-family/],
    ['an unknown AMI family', { [BootstrapTagKeys.amiFamily]: 'Windows2022' }, /not one of/],
    ['an unknown profile', { [BootstrapTagKeys.amiFamily]: 'Custom', [BootstrapTagKeys.kubeletProfile]: 'rhel' }, /unknown profile/],
    ['a fractional max pods', { [BootstrapTagKeys.amiFamily]: 'Custom', [BootstrapTagKeys.maxPods]: '1.5' }, /not a whole number/],
    ['a reservation without a value', { [BootstrapTagKeys.amiFamily]: 'Custom', [BootstrapTagKeys.systemReserved]: 'cpu=' }, /not name=value/],
  ])('refuse %s, saying which tag', (_, tags, reason) => {
    const result = bootstrapFromTags(tags);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
