import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';

export interface Ec2Fixtures {
  vpcId: string;
  subnetIds: string[];
  securityGroupId: string;
  imageId: string;
  /** the tag every fixture carries; EC2NodeClass selector terms match on it */
  discoveryTag: Record<string, string>;
}

/**
 * A network for one cluster in an empty EC2 API (moto): a VPC with one tagged subnet per
 * zone, a tagged security group, and a tagged x86_64 AMI — what HyperShift would have
 * created for a real hosted cluster. `octet` picks the VPC's 10.<octet>.0.0/16, so several
 * clusters in one moto do not hand out the same private addresses (and so node names).
 */
export async function createClusterNetwork(ec2: EC2Client, options: { clusterName: string; zones: readonly string[]; octet: number; discoveryValue?: string }): Promise<Ec2Fixtures> {
  // the tag node classes select subnets and security groups by (the cluster's name unless told)
  const discovery = options.discoveryValue ?? options.clusterName;
  const discoveryTag = { 'karpenter.sh/discovery': discovery };
  const tags = [{ Key: 'karpenter.sh/discovery', Value: discovery }];
  const { octet } = options;
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: `10.${octet}.0.0/16` }));
  const vpcId = vpc.Vpc?.VpcId;
  if (!vpcId) throw new Error('the EC2 API returned no VPC id');
  const subnetIds: string[] = [];
  for (const [index, zone] of options.zones.entries()) {
    const subnet = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.${octet}.${index}.0/24`, AvailabilityZone: zone, TagSpecifications: [{ ResourceType: 'subnet', Tags: tags }] }),
    );
    if (!subnet.Subnet?.SubnetId) throw new Error('the EC2 API returned no subnet id');
    subnetIds.push(subnet.Subnet.SubnetId);
  }
  const sg = await ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: `${options.clusterName}-nodes`,
      Description: `autonode nodes of ${options.clusterName}`,
      VpcId: vpcId,
      TagSpecifications: [{ ResourceType: 'security-group', Tags: tags }],
    }),
  );
  if (!sg.GroupId) throw new Error('the EC2 API returned no security group id');
  const images = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'], Filters: [{ Name: 'architecture', Values: ['x86_64'] }] }));
  const imageId = images.Images?.find((i) => (i.Platform ?? '').toLowerCase() !== 'windows')?.ImageId ?? images.Images?.[0]?.ImageId;
  if (!imageId) throw new Error('the EC2 API has no x86_64 AMI');
  await ec2.send(new CreateTagsCommand({ Resources: [imageId], Tags: tags }));
  return { vpcId, subnetIds, securityGroupId: sg.GroupId, imageId, discoveryTag };
}
