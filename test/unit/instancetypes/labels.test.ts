import { instanceTypeLabels } from '../../../core/instancetypes/labels';
import { anInstanceTypeInfo, ec2Facts } from './builders';

const aws = (name: string): string => `karpenter.k8s.aws/${name}`;

// Expected labels are read off each type's EC2 facts by hand (see builders.ts), through
// the rules in karpenter-provider-aws computeRequirements (reference §2.2).
describe('instance-type labels', () => {
  it.each<[string, Record<string, string>]>([
    ['m5.large', {
      [aws('instance-category')]: 'm', [aws('instance-generation')]: '5', [aws('instance-family')]: 'm5', [aws('instance-size')]: 'large',
      [aws('instance-cpu')]: '2', [aws('instance-cpu-manufacturer')]: 'intel', [aws('instance-cpu-sustained-clock-speed-mhz')]: '3100',
      [aws('instance-memory')]: '8192', [aws('instance-ebs-bandwidth')]: '4750', [aws('instance-network-bandwidth')]: '750',
      [aws('instance-hypervisor')]: 'nitro', [aws('instance-encryption-in-transit-supported')]: 'false',
      [aws('instance-capability-flex')]: 'false', [aws('instance-tenancy')]: 'default',
      'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm5.large', 'topology.kubernetes.io/region': 'us-east-1',
    }],
    ['g4dn.xlarge', {
      [aws('instance-category')]: 'g', [aws('instance-generation')]: '4', [aws('instance-family')]: 'g4dn', [aws('instance-size')]: 'xlarge',
      [aws('instance-cpu')]: '4', [aws('instance-cpu-manufacturer')]: 'intel', [aws('instance-cpu-sustained-clock-speed-mhz')]: '2500',
      [aws('instance-memory')]: '16384', [aws('instance-ebs-bandwidth')]: '3500', [aws('instance-network-bandwidth')]: '5000',
      [aws('instance-hypervisor')]: 'nitro', [aws('instance-encryption-in-transit-supported')]: 'true', [aws('instance-local-nvme')]: '125',
      [aws('instance-gpu-name')]: 't4', [aws('instance-gpu-manufacturer')]: 'nvidia', [aws('instance-gpu-count')]: '1', [aws('instance-gpu-memory')]: '16384',
      [aws('instance-capability-flex')]: 'false', [aws('instance-tenancy')]: 'default',
      'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'g4dn.xlarge', 'topology.kubernetes.io/region': 'us-east-1',
    }],
    ['m6g.large', {
      [aws('instance-category')]: 'm', [aws('instance-generation')]: '6', [aws('instance-family')]: 'm6g', [aws('instance-size')]: 'large',
      [aws('instance-cpu')]: '2', [aws('instance-cpu-manufacturer')]: 'aws', [aws('instance-cpu-sustained-clock-speed-mhz')]: '2500',
      [aws('instance-memory')]: '8192', [aws('instance-ebs-bandwidth')]: '4750', [aws('instance-network-bandwidth')]: '750',
      [aws('instance-hypervisor')]: 'nitro', [aws('instance-encryption-in-transit-supported')]: 'false',
      [aws('instance-capability-flex')]: 'false', [aws('instance-tenancy')]: 'default',
      'kubernetes.io/arch': 'arm64', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm6g.large', 'topology.kubernetes.io/region': 'us-east-1',
    }],
    // metal: no hypervisor, so no hypervisor label
    ['m5.metal', {
      [aws('instance-category')]: 'm', [aws('instance-generation')]: '5', [aws('instance-family')]: 'm5', [aws('instance-size')]: 'metal',
      [aws('instance-cpu')]: '96', [aws('instance-cpu-manufacturer')]: 'intel', [aws('instance-cpu-sustained-clock-speed-mhz')]: '3100',
      [aws('instance-memory')]: '393216', [aws('instance-ebs-bandwidth')]: '19000', [aws('instance-network-bandwidth')]: '25000',
      [aws('instance-encryption-in-transit-supported')]: 'false',
      [aws('instance-capability-flex')]: 'false', [aws('instance-tenancy')]: 'default',
      'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm5.metal', 'topology.kubernetes.io/region': 'us-east-1',
    }],
    ['i3.large', {
      [aws('instance-category')]: 'i', [aws('instance-generation')]: '3', [aws('instance-family')]: 'i3', [aws('instance-size')]: 'large',
      [aws('instance-cpu')]: '2', [aws('instance-cpu-manufacturer')]: 'intel', [aws('instance-cpu-sustained-clock-speed-mhz')]: '2300',
      [aws('instance-memory')]: '15616', [aws('instance-ebs-bandwidth')]: '425', [aws('instance-network-bandwidth')]: '750',
      [aws('instance-hypervisor')]: 'xen', [aws('instance-encryption-in-transit-supported')]: 'false', [aws('instance-local-nvme')]: '475',
      [aws('instance-capability-flex')]: 'false', [aws('instance-tenancy')]: 'default',
      'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'i3.large', 'topology.kubernetes.io/region': 'us-east-1',
    }],
  ])('%s', (name, labels) => {
    expect(instanceTypeLabels(ec2Facts(name), { region: 'us-east-1' })).toEqual(labels);
  });

  it.each<[string, Record<string, string>]>([
    ['t3.nano', { [aws('instance-network-bandwidth')]: '32', [aws('instance-size')]: 'nano' }],
    ['t3.medium', { [aws('instance-network-bandwidth')]: '256', [aws('instance-category')]: 't' }],
    ['p4d.24xlarge', { [aws('instance-network-bandwidth')]: '400000', [aws('instance-gpu-name')]: 'a100', [aws('instance-gpu-count')]: '8', [aws('instance-gpu-memory')]: '40960' }],
    ['inf2.xlarge', { [aws('instance-accelerator-name')]: 'inferentia2', [aws('instance-accelerator-manufacturer')]: 'aws', [aws('instance-accelerator-count')]: '1' }],
    ['m7i-flex.large', { [aws('instance-family')]: 'm7i-flex', [aws('instance-category')]: 'm', [aws('instance-generation')]: '7', [aws('instance-capability-flex')]: 'true' }],
    ['c7i-flex.large', { [aws('instance-capability-flex')]: 'true', [aws('instance-tenancy')]: 'default' }],
    ['c7i.large', { [aws('instance-capability-flex')]: 'false' }],
    // EC2 reports no sustained clock speed for the oldest types; Karpenter's label says 0
    ['m1.small', { [aws('instance-cpu-sustained-clock-speed-mhz')]: '0', [aws('instance-capability-flex')]: 'false' }],
    ['u-6tb1.112xlarge', { [aws('instance-category')]: 'u', [aws('instance-generation')]: '1', [aws('instance-family')]: 'u-6tb1' }],
  ])('%s carries %j', (name, subset) => {
    expect(instanceTypeLabels(ec2Facts(name), { region: 'us-east-1' })).toEqual(expect.objectContaining(subset));
  });

  it('leaves out network bandwidth described only in words, like Karpenter\'s table', () => {
    const labels = instanceTypeLabels(ec2Facts('m4.large'), { region: 'us-east-1' });
    expect(labels[aws('instance-network-bandwidth')]).toBeUndefined();
  });

  it('sets GPU labels only for exactly one kind of GPU', () => {
    const twoKinds = anInstanceTypeInfo({ GpuInfo: { Gpus: [{ Name: 'A', Manufacturer: 'NVIDIA', Count: 1 }, { Name: 'B', Manufacturer: 'NVIDIA', Count: 1 }] } });
    expect(Object.keys(instanceTypeLabels(twoKinds, { region: 'r' })).filter((key) => key.includes('gpu'))).toEqual([]);
  });
});
