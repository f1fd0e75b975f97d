import { CreateFleetOutputSchema } from '../../../activities/cloud/ec2-schemas';
import { exhaustedBesidesLaunched, launchedInstanceIds, summarizeFleetErrors } from '../../../activities/cloud/fleet-response';
import { buildCreateFleetInput, instanceTags } from '../../../activities/cloud/launch';
import { overridesByImage, planFleet } from '../../../activities/cloud/overrides';

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

  it('maps errors of a fleet with one launch template per image back to their offerings', () => {
    // as the SDK hands it over, through the boundary schema
    const output = CreateFleetOutputSchema.parse({
      Errors: [
        { ErrorCode: 'InsufficientInstanceCapacity', Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { LaunchTemplateSpecification: { LaunchTemplateId: 'lt-arm' }, Overrides: { InstanceType: 't4g.large', AvailabilityZone: 'us-east-1a', ImageId: 'ami-arm' } } },
        { ErrorCode: 'InsufficientInstanceCapacity', Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { LaunchTemplateSpecification: { LaunchTemplateId: 'lt-x86' }, Overrides: { InstanceType: 'm5.large', SubnetId: 'subnet-b', ImageId: 'ami-x86' } } },
      ],
    });
    const summary = summarizeFleetErrors(output, context);
    expect(summary.exhausted).toEqual([
      { instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'on-demand', reason: 'InsufficientInstanceCapacity' },
      { instanceType: 't4g.large', zone: 'us-east-1a', capacityType: 'on-demand', reason: 'InsufficientInstanceCapacity' },
    ]);
    expect(summary.other).toEqual([]);
  });

  it('counts only capacity and quota codes as exhausted when the fleet still launched', () => {
    const output = CreateFleetOutputSchema.parse({
      Instances: [{ InstanceIds: ['i-1'], Lifecycle: 'on-demand', InstanceType: 'm5.xlarge' }],
      Errors: [
        { ErrorCode: 'InsufficientInstanceCapacity', Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1a' } } },
        { ErrorCode: 'MaxSpotInstanceCountExceeded', Lifecycle: 'spot', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'c5.large', AvailabilityZone: 'us-east-1a' } } },
        { ErrorCode: 'InvalidParameterCombination', ErrorMessage: 'no', Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'r5.large', AvailabilityZone: 'us-east-1a' } } },
        { ErrorCode: 'RequestLimitExceeded', ErrorMessage: 'slow down', Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.2xlarge', AvailabilityZone: 'us-east-1b' } } },
      ],
    });
    const summary = summarizeFleetErrors(output, { ...context, requestedCapacityType: 'on-demand' });
    expect(summary.exhausted.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`)).toEqual(['c5.large/us-east-1a/spot', 'm5.large/us-east-1a/on-demand']);
    expect(summary.other.map((e) => e.code)).toEqual(['InvalidParameterCombination', 'RequestLimitExceeded']);
    expect(launchedInstanceIds(output, 'on-demand')).toEqual([{ instanceId: 'i-1', capacityType: 'on-demand' }]);
  });

  it('never reports the launched offering as exhausted (a full subnet in a zone another subnet served)', () => {
    const exhausted = [
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand' as const, reason: 'InsufficientFreeAddressesInSubnet' },
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' as const, reason: 'InsufficientInstanceCapacity' },
      { instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'on-demand' as const, reason: 'InsufficientInstanceCapacity' },
      { instanceType: 'c5.large', zone: 'us-east-1a', capacityType: 'on-demand' as const, reason: 'InsufficientInstanceCapacity' },
    ];
    const remembered = exhaustedBesidesLaunched(exhausted, { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand' });
    expect(remembered.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`)).toEqual(['m5.large/us-east-1a/spot', 'm5.large/us-east-1b/on-demand', 'c5.large/us-east-1a/on-demand']);
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
    configs: [
      {
        launchTemplate: { id: 'lt-1', name: 'autonode/c1/default/abc' },
        overrides: [{ instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 0 }],
      },
    ],
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

  it('builds one LaunchTemplateConfig per image from an amd64 + arm64 option list, each override booting its own architecture', () => {
    const subnets = [{ id: 'subnet-a', zone: 'us-east-1a', availableIpCount: 100 }];
    const plan = planFleet({
      instanceTypes: [
        { instanceType: 'm5.large', architecture: 'amd64', offerings: [{ zone: 'us-east-1a', capacityType: 'spot', price: 0.04, available: true }] },
        { instanceType: 't4g.large', architecture: 'arm64', offerings: [{ zone: 'us-east-1a', capacityType: 'spot', price: 0.02, available: true }] },
        { instanceType: 'c5.large', architecture: 'amd64', offerings: [{ zone: 'us-east-1a', capacityType: 'spot', price: 0.03, available: true }] },
      ],
      subnets,
      capacityTypes: ['spot'],
      images: { amd64: 'ami-x86', arm64: 'ami-arm' },
    });
    if (plan.kind !== 'launch') throw new Error(`expected a launch, got ${plan.kind}`);
    const templateOf: Record<string, { id: string; name: string }> = { 'ami-x86': { id: 'lt-x86', name: 'x86' }, 'ami-arm': { id: 'lt-arm', name: 'arm' } };
    const input = buildCreateFleetInput({
      ...base,
      capacityType: 'spot',
      configs: overridesByImage(plan.overrides).map((g) => ({ launchTemplate: templateOf[g.imageId] ?? { id: 'lt-?', name: '?' }, overrides: g.overrides })),
    });
    expect(input.LaunchTemplateConfigs).toEqual([
      {
        LaunchTemplateSpecification: { LaunchTemplateId: 'lt-arm', Version: '$Default' },
        Overrides: [{ InstanceType: 't4g.large', SubnetId: 'subnet-a', AvailabilityZone: 'us-east-1a', ImageId: 'ami-arm', Priority: 0 }],
      },
      {
        LaunchTemplateSpecification: { LaunchTemplateId: 'lt-x86', Version: '$Default' },
        Overrides: [
          { InstanceType: 'c5.large', SubnetId: 'subnet-a', AvailabilityZone: 'us-east-1a', ImageId: 'ami-x86', Priority: 1 },
          { InstanceType: 'm5.large', SubnetId: 'subnet-a', AvailabilityZone: 'us-east-1a', ImageId: 'ami-x86', Priority: 2 },
        ],
      },
    ]);
  });

  it('leaves out a config whose every override is a type the SDK cannot name', () => {
    const input = buildCreateFleetInput({
      ...base,
      capacityType: 'spot',
      configs: [
        ...base.configs,
        { launchTemplate: { id: 'lt-2', name: 'b' }, overrides: [{ instanceType: 'x9.future', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-2', priority: 1 }] },
      ],
    });
    expect(input.LaunchTemplateConfigs?.map((c) => c.LaunchTemplateSpecification?.LaunchTemplateId)).toEqual(['lt-1']);
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
        nodeClass: { name: 'nc', tags: { team: 'a', 'karpenter.sh/nodepool': 'evil', 'kubernetes.io/cluster/other': 'owned' }, securityGroupIds: [], subnets: [], userData: '', amiFamily: 'Custom' },
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
