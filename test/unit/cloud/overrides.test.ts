import { planFleet, subnetPerZone, type InstanceTypeOption, type Offering, type SubnetChoice } from '../../../activities/cloud/overrides';

const aSubnet = (id: string, zone: string, availableIpCount = 100): SubnetChoice => ({ id, zone, availableIpCount });
const anOffering = (zone: string, capacityType: Offering['capacityType'], price: number, available = true): Offering => ({ zone, capacityType, price, available });
const anInstanceType = (instanceType: string, ...offerings: Offering[]): InstanceTypeOption => ({ instanceType, offerings });

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
      imageId: 'ami-1',
    });
    expect(plan).toEqual({
      kind: 'launch',
      capacityType: 'spot',
      overrides: [
        { instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 0 },
        { instanceType: 'm5.large', zone: 'us-east-1b', subnetId: 'subnet-b', imageId: 'ami-1', priority: 1 },
        { instanceType: 'm5.xlarge', zone: 'us-east-1a', subnetId: 'subnet-a', imageId: 'ami-1', priority: 2 },
      ],
    });
  });

  it('falls back to on-demand when every spot offering is unavailable', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.04, false), anOffering('us-east-1a', 'on-demand', 0.096))],
      subnets,
      capacityTypes: ['spot', 'on-demand'],
      imageId: 'ami-1',
    });
    expect(plan).toMatchObject({ kind: 'launch', capacityType: 'on-demand', overrides: [{ instanceType: 'm5.large', zone: 'us-east-1a' }] });
  });

  it('never uses spot when the claim allows only on-demand', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.01), anOffering('us-east-1a', 'on-demand', 0.096))],
      subnets,
      capacityTypes: ['on-demand'],
      imageId: 'ami-1',
    });
    expect(plan).toMatchObject({ kind: 'launch', capacityType: 'on-demand' });
  });

  it('keeps only zones the claim allows and that have a subnet', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('m5.large', anOffering('us-east-1a', 'spot', 0.04), anOffering('us-east-1b', 'spot', 0.04), anOffering('us-east-1c', 'spot', 0.01))],
      subnets,
      capacityTypes: ['spot'],
      zones: ['us-east-1b', 'us-east-1c'],
      imageId: 'ami-1',
    });
    expect(plan).toMatchObject({ kind: 'launch', overrides: [{ zone: 'us-east-1b', subnetId: 'subnet-b' }] });
    if (plan.kind === 'launch') expect(plan.overrides).toHaveLength(1);
  });

  it('truncates to the 60 cheapest instance types', () => {
    const many = Array.from({ length: 75 }, (_, i) => anInstanceType(`type-${String(i).padStart(2, '0')}`, anOffering('us-east-1a', 'on-demand', 1 + i / 100)));
    const plan = planFleet({ instanceTypes: [...many].reverse(), subnets, capacityTypes: ['on-demand'], imageId: 'ami-1' });
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
      imageId: 'ami-1',
    });
    expect(plan).toEqual({ kind: 'nothing-available', reason: 'no available spot offering of [m5.large] in zones [us-east-1a, us-east-1b]' });
  });

  it('breaks price ties by instance type, then zone', () => {
    const plan = planFleet({
      instanceTypes: [anInstanceType('c5.large', anOffering('us-east-1b', 'spot', 0.05), anOffering('us-east-1a', 'spot', 0.05)), anInstanceType('a1.large', anOffering('us-east-1b', 'spot', 0.05))],
      subnets,
      capacityTypes: ['spot'],
      imageId: 'ami-1',
    });
    if (plan.kind !== 'launch') throw new Error(plan.reason);
    expect(plan.overrides.map((o) => `${o.instanceType}/${o.zone}`)).toEqual(['a1.large/us-east-1b', 'c5.large/us-east-1a', 'c5.large/us-east-1b']);
  });
});

describe('subnetPerZone', () => {
  it('picks the subnet with the most free IPs in each zone, ties by id', () => {
    const chosen = subnetPerZone([aSubnet('subnet-2', 'a', 10), aSubnet('subnet-1', 'a', 10), aSubnet('subnet-3', 'a', 5), aSubnet('subnet-9', 'b', 1)]);
    expect([...chosen.entries()].map(([zone, s]) => `${zone}:${s.id}`).sort()).toEqual(['a:subnet-1', 'b:subnet-9']);
  });
});
