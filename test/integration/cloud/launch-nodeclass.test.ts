/**
 * A launch honours the whole EC2NodeClass (issue 13 step 4): what the launch template
 * says, read back from moto over HTTP, and what moto applies to the instance it launches.
 *
 * moto 5.2.5's CreateFleet builds each instance from the template's ImageId, InstanceType,
 * SubnetId, UserData and instance/volume tag specifications only (moto/ec2/models/
 * fleets.py): it does NOT apply the template's BlockDeviceMappings (the instance gets
 * moto's default 8 GiB root volume at /dev/sda1), MetadataOptions (moto's defaults),
 * Monitoring (always disabled), SecurityGroupIds or IamInstanceProfile, and it ignores
 * CreateFleet's own volume tags. The assertions below pin both halves, so a moto that
 * starts applying a field fails here and the test can be tightened.
 */
import {
  DescribeInstancesCommand,
  DescribeLaunchTemplateVersionsCommand,
  DescribeVolumesCommand,
  type Instance,
  type ResponseLaunchTemplateData,
  type Tag,
} from '@aws-sdk/client-ec2';
import { startCloudHarness, aLaunchRequest, type CloudHarness } from '../../support/cloud';
import { LAUNCH_TEMPLATE_TAG } from '../../../activities/cloud/launch-template';
import { type LaunchRequest } from '../../../activities/cloud';
import { bootstrapFromTags } from '../../../core/instancetypes';

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});

const tagMap = (tags: Tag[] | undefined) => Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));

/** Seed 000's node class, as a launch request sees it after normalisation. */
const seed000Class: Partial<LaunchRequest['nodeClass']> = {
  blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '120Gi', volumeType: 'gp3', encrypted: true, deleteOnTermination: true } }],
  metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'required' },
  detailedMonitoring: true,
  tags: { team: 'autonode', 'cost-center': 'ocp-42' },
  kubelet: { maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' } },
};

async function launchWith(nodeClass: Partial<LaunchRequest['nodeClass']>) {
  const request = await aLaunchRequest(h, { capacityTypes: ['on-demand'] });
  const result = await h.provider.launch({ ...request, nodeClass: { ...request.nodeClass, ...nodeClass } });
  const described = await h.direct.send(new DescribeInstancesCommand({ InstanceIds: [result.instance.instanceId] }));
  const instance: Instance | undefined = described.Reservations?.[0]?.Instances?.[0];
  if (!instance) throw new Error(`moto does not describe ${result.instance.instanceId}`);
  const templateName = tagMap(instance.Tags)[LAUNCH_TEMPLATE_TAG];
  if (!templateName) throw new Error(`instance ${result.instance.instanceId} names no launch template`);
  const versions = await h.direct.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateName: templateName, Versions: ['$Default'] }));
  const template: ResponseLaunchTemplateData | undefined = versions.LaunchTemplateVersions?.[0]?.LaunchTemplateData;
  if (!template) throw new Error(`no launch template ${templateName}`);
  return { request, result, instance, templateName, template };
}

describe('a launch from seed 000’s EC2NodeClass (120Gi gp3 root, IMDSv2 with two hops, tags, detailed monitoring)', () => {
  let launched: Awaited<ReturnType<typeof launchWith>>;
  beforeAll(async () => {
    launched = await launchWith(seed000Class);
  });

  it('creates a launch template that says all of it', () => {
    const { template } = launched;
    expect(template.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 120, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: true } },
    ]);
    expect(template.MetadataOptions).toEqual(expect.objectContaining({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 2, HttpTokens: 'required' }));
    expect(template.Monitoring).toEqual({ Enabled: true });
    expect(template.SecurityGroupIds).toEqual([h.fixtures.securityGroupId]);
    const specs = Object.fromEntries((template.TagSpecifications ?? []).map((s) => [s.ResourceType, tagMap(s.Tags)]));
    for (const resource of ['instance', 'volume', 'network-interface']) {
      expect(specs[resource]).toEqual(expect.objectContaining({ team: 'autonode', 'cost-center': 'ocp-42', [`kubernetes.io/cluster/${h.cluster.name}`]: 'owned' }));
    }
    expect(bootstrapFromTags(specs.instance ?? {})).toEqual({
      ok: true,
      bootstrap: { amiFamily: 'Custom', rootVolumeSize: '120Gi', kubelet: { maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' } } },
    });
  });

  it('tags the instance with the class’s tags, the claim’s keys and the kubelet settings it boots with', () => {
    const { instance, request, templateName } = launched;
    expect(tagMap(instance.Tags)).toEqual(expect.objectContaining({
      team: 'autonode',
      'cost-center': 'ocp-42',
      'karpenter.sh/nodeclaim': request.nodeClaim.name,
      'autonode.io/kubelet-max-pods': '110',
      'autonode.io/root-volume-size': '120Gi',
      [LAUNCH_TEMPLATE_TAG]: templateName,
    }));
    expect(instance.ImageId).toBe(h.fixtures.imageId);
  });

  it('moto tags the instance’s volume from the template, but gives it moto’s default root volume, metadata options, monitoring and no security group', async () => {
    const { instance } = launched;
    const volumeIds = (instance.BlockDeviceMappings ?? []).flatMap((m) => (m.Ebs?.VolumeId ? [m.Ebs.VolumeId] : []));
    expect(volumeIds).toHaveLength(1);
    const volumes = (await h.direct.send(new DescribeVolumesCommand({ VolumeIds: volumeIds }))).Volumes ?? [];
    expect(tagMap(volumes[0]?.Tags)).toEqual(expect.objectContaining({ team: 'autonode', 'cost-center': 'ocp-42' }));
    // What moto does not apply (real EC2 would: a 120 GiB gp3 encrypted /dev/xvda, hop limit 2, monitoring enabled, the class's security group).
    expect(instance.BlockDeviceMappings?.map((m) => m.DeviceName)).toEqual(['/dev/sda1']);
    expect(volumes[0]).toEqual(expect.objectContaining({ Size: 8 }));
    expect(instance.MetadataOptions?.HttpPutResponseHopLimit).toBe(1);
    expect(instance.Monitoring?.State).toBe('disabled');
    expect(instance.SecurityGroups ?? []).toEqual([]);
  });
});

describe('launch template identity', () => {
  it('an edited class launches from a new template, and an unchanged one reuses it', async () => {
    const first = await launchWith(seed000Class);
    const same = await launchWith(seed000Class);
    const edited = await launchWith({ ...seed000Class, blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '200Gi', volumeType: 'gp3', encrypted: true } }] });
    expect(same.templateName).toBe(first.templateName);
    expect(edited.templateName).not.toBe(first.templateName);
    expect(edited.template.BlockDeviceMappings?.[0]?.Ebs?.VolumeSize).toBe(200);
  });

  it('a class without blockDeviceMappings gets the Custom family’s 120Gi gp3 encrypted root volume and Karpenter’s metadata defaults', async () => {
    const { template } = await launchWith({});
    expect(template.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 120, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: true } },
    ]);
    expect(template.MetadataOptions).toEqual(expect.objectContaining({ HttpPutResponseHopLimit: 1, HttpTokens: 'required' }));
    expect(template.Monitoring).toEqual({ Enabled: false });
  });
});
