import { eniLimitedPods, extendedResources } from '../../../core/instancetypes/capacity';
import { buildInstanceType, type InstanceTypeOptions } from '../../../core/instancetypes/instancetype';
import { kubeReservedCpuMillis } from '../../../core/instancetypes/karpenter-overhead';
import { autosizeCpuMillis, autosizeMemoryGiB } from '../../../core/instancetypes/openshift';
import { formatResourceList } from '../../../core/scheduling/resources';
import { anInstanceType, ec2Facts, options } from './builders';

// m5.large facts: 2 vCPU, 7577Mi memory capacity, ENI-limited 29 pods (see allocatable.test.ts).
describe('kubelet settings override the defaults', () => {
  it.each<[string, Partial<InstanceTypeOptions>, Record<string, string>]>([
    // AL2023 counts the real pod count for kube-reserved: 11 × 110 + 255 = 1465Mi.
    ['AL2023 maxPods 110', { kubelet: { maxPods: 110 } }, { cpu: '1930m', memory: '6012Mi', 'ephemeral-storage': '17Gi', pods: '110' }],
    // AL2 keeps the ENI-limited count (29) for kube-reserved memory.
    ['AL2 maxPods 110', { amiFamily: 'AL2', kubelet: { maxPods: 110 } }, { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '110' }],
    // podsPerCore 10 × 2 vCPU = 20 < 29; 11 × 20 + 255 = 475Mi.
    ['AL2023 podsPerCore 10', { kubelet: { podsPerCore: 10 } }, { cpu: '1930m', memory: '7002Mi', 'ephemeral-storage': '17Gi', pods: '20' }],
    // Bottlerocket ignores podsPerCore.
    ['Bottlerocket podsPerCore 10', { amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 10 } }, { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    ['AL2023 systemReserved', { kubelet: { systemReserved: { cpu: '100m', memory: '200Mi' } } }, { cpu: '1830m', memory: '6703Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    // kubeReserved cpu replaces the computed 70m; memory keeps 574Mi.
    ['AL2023 kubeReserved cpu', { kubelet: { kubeReserved: { cpu: '200m' } } }, { cpu: '1800m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    ['AL2023 evictionHard 500Mi', { kubelet: { evictionHard: { 'memory.available': '500Mi' } } }, { cpu: '1930m', memory: '6503Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    // 10% of 7945060352 bytes = 794506035.2 → 794506036; 7945060352 − 601882624 − 794506036.
    ['AL2023 evictionHard 10%', { kubelet: { evictionHard: { 'memory.available': '10%' } } }, { cpu: '1930m', memory: '6548671692', 'ephemeral-storage': '17Gi', pods: '29' }],
    // The larger of hard and soft counts where the family honours soft eviction.
    ['AL2023 evictionSoft', { kubelet: { evictionHard: { 'memory.available': '150Mi' }, evictionSoft: { 'memory.available': '200Mi' } } }, { cpu: '1930m', memory: '6803Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    ['Bottlerocket evictionSoft ignored', { amiFamily: 'Bottlerocket', kubelet: { evictionHard: { 'memory.available': '150Mi' }, evictionSoft: { 'memory.available': '200Mi' } } }, { cpu: '1930m', memory: '6853Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
    // 20Gi × 5% = 1Gi: 20 − 1 − 1 = 18Gi.
    ['AL2023 nodefs 5%', { kubelet: { evictionHard: { 'nodefs.available': '5%' } } }, { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '18Gi', pods: '29' }],
    ['OpenShift maxPods 500', { amiFamily: 'Custom', kubelet: { maxPods: 500 } }, { cpu: '1500m', memory: '6453Mi', 'ephemeral-storage': '107Gi', pods: '500' }],
    ['OpenShift podsPerCore 10', { amiFamily: 'Custom', kubelet: { podsPerCore: 10 } }, { cpu: '1500m', memory: '6453Mi', 'ephemeral-storage': '107Gi', pods: '20' }],
    ['OpenShift static systemReserved memory', { amiFamily: 'Custom', kubelet: { systemReserved: { memory: '2Gi' } } }, { cpu: '1500m', memory: '5429Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
    ['OpenShift autosize kubeReserved cpu', { amiFamily: 'Custom', kubeletProfile: 'openshift-autosize', kubelet: { kubeReserved: { cpu: '100m' } } }, { cpu: '1400m', memory: '5429Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
    // 120Gi × 5% = 6Gi: 120 − 1 − 6 = 113Gi; memory.available 1Gi: 7577 − 1024 − 1024.
    ['OpenShift evictionHard', { amiFamily: 'Custom', kubelet: { evictionHard: { 'nodefs.available': '5%', 'memory.available': '1Gi' } } }, { cpu: '1500m', memory: '5529Mi', 'ephemeral-storage': '113Gi', pods: '250' }],
  ])('%s', (_name, overrides, allocatable) => {
    expect(anInstanceType('m5.large', { amiFamily: 'AL2023', ...overrides }).allocatable).toEqual(allocatable);
  });

  it('names the kubelet field with a malformed quantity', () => {
    const built = buildInstanceType(ec2Facts('m5.large'), ['us-east-1a'], options({ kubelet: { systemReserved: { memory: 'lots' } } }));
    expect(built).toEqual({ ok: false, reason: expect.stringContaining('kubelet.systemReserved.memory: quantity "lots"') });
    const percent = buildInstanceType(ec2Facts('m5.large'), ['us-east-1a'], options({ kubelet: { evictionHard: { 'memory.available': '150%' } } }));
    expect(percent).toEqual({ ok: false, reason: 'kubelet.evictionHard.memory.available: "150%" is not a percentage between 0% and 100%' });
  });
});

describe('formulas', () => {
  it.each([[1, 60], [2, 70], [4, 80], [8, 90], [16, 110], [32, 150], [48, 190], [96, 310], [192, 550]])(
    'Karpenter kube-reserved cpu for %i vCPUs is %im', (vcpus, millis) => {
      expect(kubeReservedCpuMillis(vcpus)).toBe(millis);
    });

  // 60 + 12(n−1) millicores, two decimals of a core, at least 500m.
  it.each([[1, 500], [2, 500], [8, 500], [37, 500], [38, 500], [39, 520], [64, 820], [96, 1200], [128, 1580]])(
    'OpenShift auto-sized cpu for %i vCPUs is %im', (vcpus, millis) => {
      expect(autosizeCpuMillis(vcpus)).toBe(millis);
    });

  // 25% of 4, 20% of 4, 10% of 8, 6% of 112, 2% above; rounded half up.
  it.each([[0, 0], [1, 0], [2, 1], [4, 1], [7, 2], [8, 2], [14, 2], [16, 3], [32, 4], [64, 5], [128, 9], [355, 14], [1000, 27]])(
    'OpenShift auto-sized memory for %i GiB is %iGi', (gib, reserved) => {
      expect(autosizeMemoryGiB(gib)).toBe(reserved);
    });

  it.each([['t3.nano', 4], ['t3.medium', 17], ['m5.large', 29], ['m5.metal', 737], ['p4d.24xlarge', 737]])(
    'ENI-limited pods of %s: %i (default network card only)', (name, pods) => {
      expect(eniLimitedPods(ec2Facts(name))).toBe(pods);
    });

  it.each<[string, Record<string, string>]>([
    ['g4dn.xlarge', { 'nvidia.com/gpu': '1' }],
    ['p4d.24xlarge', { 'nvidia.com/gpu': '8', 'vpc.amazonaws.com/efa': '4' }],
    ['inf2.xlarge', { 'aws.amazon.com/neuron': '1', 'aws.amazon.com/neuroncore': '2' }],
    ['m5.large', {}],
  ])('extended resources of %s', (name, resources) => {
    expect(formatResourceList(extendedResources(ec2Facts(name)))).toEqual(resources);
  });
});
