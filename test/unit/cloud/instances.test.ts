// How an EC2 instance reads as a CloudInstance: the subnet and security groups drift
// compares with the node class, and the states that count as gone.
import { toCloudInstance } from '../../../activities/cloud/instances';
import { Ec2InstanceSchema } from '../../../activities/cloud/ec2-schemas';

const described = (o: Record<string, unknown> = {}) =>
  Ec2InstanceSchema.parse({
    InstanceId: 'i-0123',
    InstanceType: 'm5.large',
    ImageId: 'ami-1',
    State: { Name: 'running' },
    Placement: { AvailabilityZone: 'us-east-1a' },
    LaunchTime: new Date('2026-11-24T12:00:00Z'),
    SubnetId: 'subnet-a',
    ...o,
  });

it('carries the subnet and the security groups the instance is in', () => {
  expect(toCloudInstance(described({ SecurityGroups: [{ GroupId: 'sg-1', GroupName: 'nodes' }, { GroupId: 'sg-2', GroupName: 'more' }] }))).toEqual(
    expect.objectContaining({ providerId: 'aws:///us-east-1a/i-0123', subnetId: 'subnet-a', securityGroupIds: ['sg-1', 'sg-2'] }),
  );
});

it.each([
  ['absent', {}],
  ['empty (moto: a fleet instance gets no groups)', { SecurityGroups: [] }],
])('security groups %s: unknown, not "no groups" (drift waits)', (_what, o) => {
  expect(toCloudInstance(described(o))).not.toHaveProperty('securityGroupIds');
});

it.each(['shutting-down', 'terminated'])('a %s instance is gone', (state) => {
  expect(toCloudInstance(described({ State: { Name: state } }))).toBeUndefined();
});
