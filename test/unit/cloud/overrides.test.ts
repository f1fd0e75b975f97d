import { overridesByImage, planFleet, subnetPerZone, type InstanceTypeOption, type Offering, type SubnetChoice } from '../../../activities/cloud/overrides';

const aSubnet = (id: string, zone: string, availableIpCount = 100): SubnetChoice => ({ id, zone, availableIpCount });
const anOffering = (zone: string, capacityType: Offering['capacityType'], price: number, available = true): Offering => ({ zone, capacityType, price, available });
const anInstanceType = (instanceType: string, ...offerings: Offering[]): InstanceTypeOption => ({ instanceType, architecture: 'amd64', offerings });
const anArm64Type = (instanceType: string, ...offerings: Offering[]): InstanceTypeOption => ({ instanceType, architecture: 'arm64', offerings });

const subnets = [aSubnet('subnet-a', 'us-east-1a'), aSubnet('subnet-b', 'us-east-1b')];

describe('planFleet', () => {
  it('prefers spot when allowed and available, cheapest first, one override per type × zone', () => {
    const plan = planFleet({
      instanceTypes: [
        anInstanceType('m5.xlarge', anOffering('us-east-1a', 'spot', 0.08), anOffering('us-east-1a', 'on-demand', 0.19)),
        anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.04), anOffering('us-east-1b', 'spot', 0.05)),
      ],
      subnets,
      capacityTypes: ['spot', 'on-demand'],
      images: { amd64: 'ami-1' },
    });
    expect(plan).toEqual({
      kind: 'launch',
      capacityType: 'spot',
      overrides: [
        { instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 0 },
        { instanceType: 'm5.large', zone: 'us-east-1b', subnetId: 'subnet-b', imageId: 'ami-1', priority: 1 },
        { instanceType: 'm5.xlarge', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 2 },
      ],
      withoutImage: [],
    });
  });

  it('falls back to on-demand when every spot offering is unavailable', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.04, false), anOffering('us-east-1a', 'on-demand', 0.096))],
      subnets,
      capacityTypes: ['spot', 'on-demand'],
      images: { amd64: 'ami-1' },
    });
    expect(plan).toMatchObject({ kind: 'launch', capacityType: 'on-demand', overrides: [{ instanceType: 'm5.large', zone: 'us-east-1a' }] });
  });

  it('never uses spot when the claim allows only on-demand', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.01), anOffering('us-east-1a', 'on-demand', 0.096))],
      subnets,
      capacityTypes: ['on-demand'],
      images: { amd64: 'ami-1' },
    });
    expect(plan).toMatchObject({ kind: 'launch', capacityType: 'on-demand' });
  });

  it('keeps only zones the claim allows and that have a subnet', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.04), anOffering('us-east-1b', 'spot', 0.04), anOffering('us-east-1c', 'spot', 0.01))],
      subnets,
      capacityTypes: ['spot'],
      zones: ['us-east-1b', 'us-east-1c'],
      images: { amd64: 'ami-1' },
    });
    expect(plan).toMatchObject({ kind: 'launch', overrides: [{ zone: 'us-east-1b', subnetId: 'subnet-b' }] });
    if (plan.kind === 'launch') expect(plan.overrides).toHaveLength(1);
  });

  it('truncates to the 60 cheapest instance types', () => {
    const many = Array.from({ length: 75 }, (_, i) => anInstanceType(`type-${String(i).padStart(2, '0')}`, anOffering('us-east-1a', 'on-demand', 1 + i / 100)));
    const plan = planFleet({ instanceTypes: [...many].reverse(), subnets, capacityTypes: ['on-demand'], images: { amd64: 'ami-1' } });
    if (plan.kind !== 'launch') throw new Error(plan.reason);
    expect(plan.overrides).toHaveLength(60);
    expect(plan.overrides[0]?.instanceType).toBe('type-00');
    expect(plan.overrides.at(-1)?.instanceType).toBe('type-59');
  });

  it('explains why nothing can be launched', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1c', 'spot', 0.04))],
      subnets,
      capacityTypes: ['spot'],
      images: { amd64: 'ami-1' },
    });
    expect(plan).toEqual({ kind: 'nothing-available', reason: 'no available spot offering of [m5.large] in zones [us-east-1a, us-east-1b]' });
  });

  it('breaks price ties by instance type, then zone', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('c5.large', anOffering('us-east-1b', 'spot', 0.05), anOffering('us-east-1a', 'spot', 0.05)), anInstanceType('a1.large', anOffering('us-east-1b', 'spot', 0.05))],
      subnets,
      capacityTypes: ['spot'],
      images: { amd64: 'ami-1' },
    });
    if (plan.kind !== 'launch') throw new Error(plan.reason);
    expect(plan.overrides.map((o) => `${o.instanceType}/${o.zone}`)).toEqual(['a1.large/us-east-1b', 'c5.large/us-east-1a', 'c5.large/us-east-1b']);
  });
});

describe('planFleet across architectures', () => {
  const images = { amd64: 'ami-x86', arm64: 'ami-arm' };
  const mixed = [
    anInstanceType('m5.large', anOffering('us-east-1a', 'on-demand', 0.096), anOffering('us-east-1b', 'on-demand', 0.096)),
    anArm64Type('t4g.large', anOffering('us-east-1a', 'on-demand', 0.067)),
    anArm64Type('m6g.large', anOffering('us-east-1b', 'on-demand', 0.077)),
  ];

  it('gives every override the image of its own type’s architecture, one group per image, cheapest group first', () => {
    const plan = planFleet({ instanceTypes: mixed, subnets, capacityTypes: ['on-demand'], images });
    if (plan.kind !== 'launch') throw new Error(`expected a launch, got ${plan.kind}`);
    expect(plan.overrides.map((o) => `${o.instanceType}/${o.zone} ${o.imageId}`)).toEqual([
      't4g.large/us-east-1a ami-arm',
      'm6g.large/us-east-1b ami-arm',
      'm5.large/us-east-1a ami-x86',
      'm5.large/us-east-1b ami-x86',
    ]);
    expect(plan.withoutImage).toEqual([]);
    expect(overridesByImage(plan.overrides).map((g) => ({ imageId: g.imageId, overrides: g.overrides.map((o) => `${o.instanceType}/${o.zone}#${o.priority}`) }))).toEqual([
      { imageId: 'ami-arm', overrides: ['t4g.large/us-east-1a#0', 'm6g.large/us-east-1b#1'] },
      { imageId: 'ami-x86', overrides: ['m5.large/us-east-1a#2', 'm5.large/us-east-1b#3'] },
    ]);
  });

  it('drops the types of an architecture without an image before choosing the capacity type', () => {
    const plan = planFleet({
      instanceTypes: [anArm64Type('t4g.large', anOffering('us-east-1a', 'spot', 0.02)), anInstanceType('m5.large', anOffering('us-east-1a', 'on-demand', 0.096))],
      subnets,
      capacityTypes: ['spot', 'on-demand'],
      images: { amd64: 'ami-x86' },
    });
    // with t4g.large counted, spot would have been chosen and m5.large left out
    expect(plan).toEqual({
      kind: 'launch',
      capacityType: 'on-demand',
      overrides: [{ instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-x86', priority: 0 }],
      withoutImage: ['t4g.large'],
    });
  });

  it('names the architectures when no type has an image', () => {
    expect(planFleet({ instanceTypes: mixed.slice(1), subnets, capacityTypes: ['on-demand'], images: { amd64: 'ami-x86' } })).toEqual({
      kind: 'no-image',
      architectures: ['arm64'],
      reason: 'no image for arm64, the architecture of every instance type offered ([t4g.large, m6g.large])',
    });
  });

  it('keeps the groups in price order even when given overrides out of order', () => {
    const plan = planFleet({ instanceTypes: [...mixed].reverse(), subnets, capacityTypes: ['on-demand'], images });
    if (plan.kind !== 'launch') throw new Error(`expected a launch, got ${plan.kind}`);
    expect(overridesByImage([...plan.overrides].reverse()).map((g) => g.overrides.map((o) => o.priority))).toEqual([[0, 1], [2, 3]]);
  });
});

describe('subnetPerZone', () => {
  it('picks the subnet with the most free IPs in each zone, ties by id', () => {
    const chosen = subnetPerZone([aSubnet('subnet-2', 'a', 10), aSubnet('subnet-1', 'a', 10), aSubnet('subnet-3', 'a', 5), aSubnet('subnet-9', 'b', 1)]);
    expect([...chosen.entries()].map(([zone, s]) => `${zone}:${s.id}`).sort()).toEqual(['a:subnet-1', 'b:subnet-9']);
  });
});
