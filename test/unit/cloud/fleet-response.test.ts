import { launchedInstanceIds, summarizeFleetErrors } from '../../../activities/cloud/fleet-response';
import { buildCreateFleetInput, instanceTags } from '../../../activities/cloud/launch';

const context = { requestedCapacityType: 'spot' as const, zoneOfSubnet: new Map([['subnet-b', 'us-east-1b']]) };

describe('summarizeFleetErrors', () => {
  it('turns capacity and quota errors into exhausted offerings, deduplicated and sorted', () => {
    const summary = summarizeFleetErrors(
      {
        Errors: [
          { ErrorCode: 'VcpuLimitExceeded', Lifecycle: 'spot', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.xlarge', AvailabilityZone: 'us-east-1a' } } },
          { ErrorCode: 'InsufficientInstanceCapacity', Lifecycle: 'spot', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', SubnetId: 'subnet-b' } } },
          { ErrorCode: 'InsufficientInstanceCapacity', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', SubnetId: 'subnet-b' } } },
          { ErrorCode: 'InvalidParameterValue', ErrorMessage: 'bad' },
        ],
      },
      context,
    );
    expect(summary).toEqual({
      exhausted: [
        { instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'spot', reason: 'InsufficientInstanceCapacity' },
        { instanceType: 'm5.xlarge', zone: 'us-east-1a', capacityType: 'spot', reason: 'VcpuLimitExceeded' },
      ],
      other: [{ code: 'InvalidParameterValue', message: 'bad' }],
    });
  });

  it('reads launched instance ids with their lifecycle', () => {
    expect(launchedInstanceIds({ Instances: [{ InstanceIds: ['i-1'], Lifecycle: 'on-demand' }, { InstanceIds: ['i-2'] }] }, 'spot')).toEqual([
      { instanceId: 'i-1', capacityType: 'on-demand' },
      { instanceId: 'i-2', capacityType: 'spot' },
    ]);
  });
});

describe('buildCreateFleetInput', () => {
  const base = {
    launchTemplate: { id: 'lt-1', name: 'autonode/c1/default/abc' },
    overrides: [{ instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 0 }],
    tags: { b: '2', a: '1' },
    nodeClaimUid: '2f1d7c2e-0000-4000-8000-000000000001',
  };

  it('asks for one instant instance, with an explicit spot allocation strategy', () => {
    const input = buildCreateFleetInput({ ...base, capacityType: 'spot' });
    expect(input).toMatchObject({
      Type: 'instant',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'spot' },
      SpotOptions: { AllocationStrategy: 'price-capacity-optimized' },
      LaunchTemplateConfigs: [{ Overrides: [{ InstanceType: 'm5.large', SubnetId: 'subnet-a', AvailabilityZone: 'us-east-1a', ImageId: 'ami-1' }] }],
    });
    expect(input.TagSpecifications?.map((t) => t.ResourceType)).toEqual(['instance', 'volume', 'fleet']);
    expect(input.TagSpecifications?.[0]?.Tags).toEqual([{ Key: 'a', Value: '1' }, { Key: 'b', Value: '2' }]);
  });

  it('uses lowest-price for on-demand', () => {
    expect(buildCreateFleetInput({ ...base, capacityType: 'on-demand' })).toMatchObject({ OnDemandOptions: { AllocationStrategy: 'lowest-price' } });
  });

  it('derives the client token from the NodeClaim UID and the request, within 64 characters', () => {
    const a = buildCreateFleetInput({ ...base, capacityType: 'spot' }).ClientToken ?? '';
    expect(a).toContain(base.nodeClaimUid);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(buildCreateFleetInput({ ...base, capacityType: 'spot' }).ClientToken).toBe(a);
    expect(buildCreateFleetInput({ ...base, capacityType: 'on-demand' }).ClientToken).not.toBe(a);
  });
});

describe('instanceTags', () => {
  it('tags for ownership and lets node-class tags not override the restricted keys', () => {
    const tags = instanceTags(
      {
        nodeClaim: { name: 'default-x1', uid: 'u' },
        nodePool: 'default',
        nodeClass: { name: 'nc', tags: { team: 'a', 'karpenter.sh/nodepool': 'evil', 'kubernetes.io/cluster/other': 'owned' }, securityGroupIds: [], subnets: [], userData: '' },
      },
      'c1',
    );
    expect(tags).toEqual({
      team: 'a',
      'kubernetes.io/cluster/c1': 'owned',
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/nodeclaim': 'default-x1',
      'karpenter.k8s.aws/ec2nodeclass': 'nc',
      Name: 'default-x1',
    });
  });
});
