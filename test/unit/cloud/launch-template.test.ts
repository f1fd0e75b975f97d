import { canonicalJson, launchTemplateName, type LaunchTemplateContent } from '../../../activities/cloud/launch-template';
import { createLaunchTemplateInput, LAUNCH_TEMPLATE_TAG } from '../../../activities/cloud/launch-template-data';
import { launchTemplateContent, type LaunchRequest } from '../../../activities/cloud/launch';
import { bootstrapFromTags } from '../../../core/instancetypes';

type NodeClass = LaunchRequest['nodeClass'];

const aNodeClass = (overrides: Partial<NodeClass> = {}): NodeClass => ({
  name: 'default',
  amiFamily: 'Custom',
  userData: '#!/bin/bash\necho hi\n',
  securityGroupIds: ['sg-2', 'sg-1'],
  subnets: [],
  tags: { team: 'a' },
  ...overrides,
});

const aTemplate = (overrides: Partial<NodeClass> = {}, imageId = 'ami-0abc'): LaunchTemplateContent => launchTemplateContent(aNodeClass(overrides), imageId);

/** What EC2 is sent for a node class. */
const dataFor = (overrides: Partial<NodeClass> = {}) => {
  const content = aTemplate(overrides);
  const input = createLaunchTemplateInput({ name: launchTemplateName('c1', content), content, ownership: { 'kubernetes.io/cluster/c1': 'owned' } });
  const data = input.LaunchTemplateData;
  if (!data) throw new Error('no LaunchTemplateData');
  const tagsOf = (resourceType: string) =>
    Object.fromEntries((data.TagSpecifications?.find((t) => t.ResourceType === resourceType)?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
  return { input, data, tagsOf };
};

describe('launch template names', () => {
  it('are deterministic and readable', () => {
    const name = launchTemplateName('c1', aTemplate());
    expect(name).toMatch(/^autonode\/c1\/default\/[0-9a-f]{16}$/);
    expect(launchTemplateName('c1', aTemplate())).toBe(name);
  });

  it('do not depend on security-group or tag order', () => {
    expect(launchTemplateName('c1', aTemplate({ securityGroupIds: ['sg-1', 'sg-2'] }))).toBe(launchTemplateName('c1', aTemplate()));
    expect(launchTemplateName('c1', aTemplate({ tags: { b: '2', a: '1' } }))).toBe(launchTemplateName('c1', aTemplate({ tags: { a: '1', b: '2' } })));
  });

  it.each<[string, Partial<NodeClass>]>([
    ['userData', { userData: '#!/bin/bash\necho bye\n' }],
    ['node class', { name: 'gpu' }],
    ['security groups', { securityGroupIds: ['sg-3'] }],
    ['instance profile', { instanceProfile: 'worker' }],
    ['tags', { tags: { team: 'b' } }],
    ['root volume size', { blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '200Gi', volumeType: 'gp3', encrypted: true, deleteOnTermination: true } }] }],
    ['volume type', { blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '120Gi', volumeType: 'io2', encrypted: true, deleteOnTermination: true } }] }],
    ['hop limit', { metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'required' } }],
    ['IMDS tokens', { metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'optional' } }],
    ['detailed monitoring', { detailedMonitoring: true }],
    ['public IP choice', { associatePublicIPAddress: false }],
    ['kubelet maxPods', { kubelet: { maxPods: 110 } }],
    ['kubelet systemReserved', { kubelet: { systemReserved: { cpu: '1' } } }],
  ])('change with the %s', (_, change) => {
    expect(launchTemplateName('c1', aTemplate(change))).not.toBe(launchTemplateName('c1', aTemplate()));
  });

  it('change with the AMI', () => {
    expect(launchTemplateName('c1', aTemplate({}, 'ami-0def'))).not.toBe(launchTemplateName('c1', aTemplate()));
  });

  it('differ between clusters', () => {
    expect(launchTemplateName('c1', aTemplate()).slice(-16)).not.toBe(launchTemplateName('c2', aTemplate()).slice(-16));
  });

  it('fall back to the bare hash when the readable name would be too long', () => {
    expect(launchTemplateName('c'.repeat(120), aTemplate())).toMatch(/^autonode\/[0-9a-f]{32}$/);
  });
});

describe('launch template data: the EC2NodeClass fields, as Karpenter maps them', () => {
  it('sends a class without blockDeviceMappings HyperShift’s root volume: 120Gi gp3, encrypted, deleted with the instance', () => {
    expect(dataFor().data.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 120, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: true } },
    ]);
  });

  it.each<[NodeClass['amiFamily'], unknown[]]>([
    ['AL2023', [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }]],
    ['Bottlerocket', [
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 4, VolumeType: 'gp3', Encrypted: true } },
      { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } },
    ]],
  ])('sends Karpenter’s %s default mappings', (amiFamily, expected) => {
    expect(dataFor({ amiFamily }).data.BlockDeviceMappings).toEqual(expected);
  });

  it('maps every EBS field, sizes in whole GiB rounded up, and leaves out zero iops and throughput', () => {
    const { data } = dataFor({
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100G', volumeType: 'io2', iops: 4000, encrypted: true, kmsKeyID: 'arn:aws:kms:us-east-1:1:key/k', deleteOnTermination: false, snapshotID: 'snap-1' } },
        { deviceName: '/dev/xvdb', ebs: { volumeSize: '1Ti', volumeType: 'gp3', iops: 0, throughput: 0, volumeInitializationRate: 200 } },
      ],
    });
    expect(data.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 94, VolumeType: 'io2', Iops: 4000, Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:1:key/k', DeleteOnTermination: false, SnapshotId: 'snap-1' } },
      { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 1024, VolumeType: 'gp3', VolumeInitializationRate: 200 } },
    ]);
  });

  it('sends the metadata options, with instance-metadata tags off, and Karpenter’s defaults when the class has none', () => {
    expect(dataFor({ metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'enabled', httpPutResponseHopLimit: 2, httpTokens: 'optional' } }).data.MetadataOptions).toEqual({
      HttpEndpoint: 'enabled', HttpProtocolIpv6: 'enabled', HttpPutResponseHopLimit: 2, HttpTokens: 'optional', InstanceMetadataTags: 'disabled',
    });
    expect(dataFor().data.MetadataOptions).toEqual({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 1, HttpTokens: 'required', InstanceMetadataTags: 'disabled' });
  });

  it.each([[true], [false]])('sends detailedMonitoring %s as Monitoring.Enabled', (enabled) => {
    expect(dataFor({ detailedMonitoring: enabled }).data.Monitoring).toEqual({ Enabled: enabled });
  });

  it('puts the security groups on a network interface when associatePublicIPAddress is set, and in SecurityGroupIds otherwise', () => {
    const withChoice = dataFor({ associatePublicIPAddress: true }).data;
    expect(withChoice.NetworkInterfaces).toEqual([{ DeviceIndex: 0, AssociatePublicIpAddress: true, Groups: ['sg-1', 'sg-2'] }]);
    expect(withChoice.SecurityGroupIds).toBeUndefined();
    const without = dataFor().data;
    expect(without.SecurityGroupIds).toEqual(['sg-1', 'sg-2']);
    expect(without.NetworkInterfaces).toBeUndefined();
  });

  it('tags the template, instances, volumes and network interfaces with the class’s tags, never with a restricted key it sets', () => {
    const { input, tagsOf } = dataFor({ tags: { team: 'a', 'karpenter.sh/nodepool': 'evil' } });
    const expected = { team: 'a', 'kubernetes.io/cluster/c1': 'owned' };
    expect(Object.fromEntries((input.TagSpecifications?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual(expected);
    expect(tagsOf('volume')).toEqual(expected);
    expect(tagsOf('network-interface')).toEqual(expected);
    expect(tagsOf('instance')).toEqual(expect.objectContaining(expected));
    expect(tagsOf('instance')).not.toHaveProperty(['karpenter.sh/nodepool']);
  });

  it('tags instances with the kubelet settings they boot with and the template they came from', () => {
    const { input, tagsOf } = dataFor({ kubelet: { maxPods: 110, systemReserved: { memory: '2Gi', cpu: '1' }, evictionHard: { 'memory.available': '200Mi' } } });
    const instanceTags = tagsOf('instance');
    expect(instanceTags[LAUNCH_TEMPLATE_TAG]).toBe(input.LaunchTemplateName);
    expect(bootstrapFromTags(instanceTags)).toEqual({
      ok: true,
      bootstrap: { amiFamily: 'Custom', kubelet: { maxPods: 110, systemReserved: { cpu: '1', memory: '2Gi' }, evictionHard: { 'memory.available': '200Mi' } } },
    });
  });

  it.each<[string, Partial<NodeClass>, string | undefined]>([
    ['a Custom class without mappings: the family default the prediction uses', {}, undefined],
    ['a Bottlerocket class without mappings: the family default (its data volume), not the 4Gi OS volume', { amiFamily: 'Bottlerocket' }, undefined],
    ['the mapping marked rootVolume', { blockDeviceMappings: [{ deviceName: '/dev/xvdb', ebs: { volumeSize: '50Gi' } }, { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '300Gi' } }] }, '300Gi'],
  ])('tells the kubelet its ephemeral-storage volume for %s', (_, change, expected) => {
    const tags = dataFor(change).tagsOf('instance');
    expect(tags['autonode.io/root-volume-size']).toBe(expected);
  });

  it('lets no node class tag pose as a kubelet setting', () => {
    const { tagsOf } = dataFor({ tags: { 'autonode.io/kubelet-max-pods': '999' }, kubelet: { maxPods: 110 } });
    expect(tagsOf('instance')['autonode.io/kubelet-max-pods']).toBe('110');
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: undefined } })).toBe('{"a":{"d":[2,{"x":0,"y":1}]},"b":1}');
  });
});
