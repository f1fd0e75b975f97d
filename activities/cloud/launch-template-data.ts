/**
 * A launch template's content → CreateLaunchTemplate, mapping each EC2NodeClass field the
 * way Karpenter's launch template provider does (pkg/providers/launchtemplate: types.go
 * Build, launchtemplate.go blockDeviceMappings/volumeSize):
 *  - blockDeviceMappings: one mapping each; volume sizes in whole GiB rounded up; iops and
 *    throughput left out when 0; kmsKeyID/snapshotID/volumeInitializationRate as given;
 *  - metadataOptions: the four fields, plus InstanceMetadataTags disabled (Karpenter's
 *    instance tags contain `/`, which the IMDS tag view cannot serve);
 *  - detailedMonitoring: Monitoring.Enabled, always sent;
 *  - associatePublicIPAddress: set, it needs a network interface, which then carries the
 *    security groups; unset, the groups go in SecurityGroupIds and the subnet decides;
 *  - tags: on the template itself, and as tag specifications for the instances, volumes
 *    and network interfaces it launches. CreateFleet tags instances and volumes too
 *    (with the claim's own keys); the template's copy is what reaches network interfaces,
 *    and the volumes where a fleet's volume tags are not applied (moto);
 *  - userData: an Ignition config (HyperShift's) gets the class's kubelet settings as a
 *    kubelet drop-in, so the node boots with what its allocatable was predicted from
 *    (core/enablement/ignition.ts); any other userData is sent verbatim.
 * Pure, so a unit test can read exactly what EC2 is sent.
 */
import { type CreateLaunchTemplateCommandInput, type LaunchTemplateBlockDeviceMappingRequest, type VolumeType } from '@aws-sdk/client-ec2';
import { withKubeletConfig } from '../../core/enablement/ignition';
import { bootstrapTags, volumeSizeGiB, type BlockDeviceMapping } from '../../core/instancetypes';
import { type LaunchTemplateContent } from './launch-template';

/**
 * The instance tag naming the template an instance was launched from. EC2 adds its own
 * `aws:ec2launchtemplate:id`, but moto does not for instances CreateFleet launches.
 */
export const LAUNCH_TEMPLATE_TAG = 'autonode.io/launch-template';

const tagList = (tags: Record<string, string>) =>
  Object.entries(tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([Key, Value]) => ({ Key, Value }));

/** The SDK types VolumeType as its closed list; the node class schema allows only members of it. */
const VOLUME_TYPES: Readonly<Record<NonNullable<NonNullable<BlockDeviceMapping['ebs']>['volumeType']>, VolumeType>> = {
  standard: 'standard', io1: 'io1', io2: 'io2', gp2: 'gp2', sc1: 'sc1', st1: 'st1', gp3: 'gp3',
};

export function blockDeviceMappingRequests(mappings: readonly BlockDeviceMapping[]): LaunchTemplateBlockDeviceMappingRequest[] {
  return mappings.map((m) => {
    const ebs = m.ebs ?? {};
    return {
      ...(m.deviceName !== undefined ? { DeviceName: m.deviceName } : {}),
      Ebs: {
        ...(ebs.deleteOnTermination !== undefined ? { DeleteOnTermination: ebs.deleteOnTermination } : {}),
        ...(ebs.encrypted !== undefined ? { Encrypted: ebs.encrypted } : {}),
        ...(ebs.volumeType !== undefined ? { VolumeType: VOLUME_TYPES[ebs.volumeType] } : {}),
        ...(ebs.iops ? { Iops: ebs.iops } : {}),
        ...(ebs.throughput ? { Throughput: ebs.throughput } : {}),
        ...(ebs.kmsKeyID !== undefined ? { KmsKeyId: ebs.kmsKeyID } : {}),
        ...(ebs.snapshotID !== undefined ? { SnapshotId: ebs.snapshotID } : {}),
        ...(ebs.volumeInitializationRate !== undefined ? { VolumeInitializationRate: ebs.volumeInitializationRate } : {}),
        ...(ebs.volumeSize !== undefined ? { VolumeSize: volumeSizeGiB(ebs.volumeSize) } : {}),
      },
    };
  });
}

export function createLaunchTemplateInput(options: {
  name: string;
  content: LaunchTemplateContent;
  /** the cluster's ownership tags, on the template and the resources it tags */
  ownership: Record<string, string>;
}): CreateLaunchTemplateCommandInput {
  const { name, content, ownership } = options;
  const securityGroupIds = [...content.securityGroupIds].sort();
  const resourceTags = { ...content.tags, ...ownership };
  // Our keys last: a node class tag cannot pose as the kubelet's settings or the template's name.
  const instanceTags = { ...resourceTags, ...bootstrapTags(content.bootstrap), [LAUNCH_TEMPLATE_TAG]: name };
  const metadata = content.metadataOptions;
  return {
    LaunchTemplateName: name,
    LaunchTemplateData: {
      ImageId: content.imageId,
      UserData: Buffer.from(withKubeletConfig(content.userData, content.bootstrap), 'utf8').toString('base64'),
      ...(content.associatePublicIPAddress === undefined
        ? { SecurityGroupIds: securityGroupIds }
        : { NetworkInterfaces: [{ DeviceIndex: 0, AssociatePublicIpAddress: content.associatePublicIPAddress, Groups: securityGroupIds }] }),
      // EC2 refuses an empty list; none means the AMI's own mappings.
      ...(content.blockDeviceMappings.length > 0 ? { BlockDeviceMappings: blockDeviceMappingRequests(content.blockDeviceMappings) } : {}),
      MetadataOptions: {
        HttpEndpoint: metadata.httpEndpoint,
        HttpProtocolIpv6: metadata.httpProtocolIPv6,
        HttpPutResponseHopLimit: metadata.httpPutResponseHopLimit,
        HttpTokens: metadata.httpTokens,
        InstanceMetadataTags: 'disabled',
      },
      Monitoring: { Enabled: content.detailedMonitoring },
      ...(content.instanceProfile ? { IamInstanceProfile: { Name: content.instanceProfile } } : {}),
      TagSpecifications: [
        { ResourceType: 'instance', Tags: tagList(instanceTags) },
        { ResourceType: 'volume', Tags: tagList(resourceTags) },
        { ResourceType: 'network-interface', Tags: tagList(resourceTags) },
      ],
    },
    TagSpecifications: [{ ResourceType: 'launch-template', Tags: tagList(resourceTags) }],
  };
}
