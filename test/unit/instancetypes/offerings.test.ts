import { spotPriceSchema, type SpotPrice } from '../../../core/instancetypes/ec2-schemas';
import { buildInstanceTypes, instanceTypeRequirements } from '../../../core/instancetypes/instancetype';
import { chooseSpotPrice } from '../../../core/instancetypes/pricing';
import { compatible, requirements } from '../../../core/scheduling/requirements';
import { anInstanceType, anInstanceTypeInfo, now, options } from './builders';

const hour = 3600_000;

function aSpotPrice(overrides: Partial<{ price: string; ageMs: number; zone: string; description: string }> = {}): SpotPrice {
  return spotPriceSchema.parse({
    InstanceType: 'm5.large',
    AvailabilityZone: overrides.zone ?? 'us-east-1a',
    ProductDescription: overrides.description ?? 'Linux/UNIX',
    SpotPrice: overrides.price ?? '0.030000',
    Timestamp: new Date(now - (overrides.ageMs ?? hour)).toISOString(),
  });
}

describe('spot prices', () => {
  const choose = (history: SpotPrice[]) => chooseSpotPrice({ instanceType: 'm5.large', zone: 'us-east-1a', onDemandPrice: 0.096, history, now });

  it.each<[string, SpotPrice[], { source: string; price: number }]>([
    ['no observation: 40% of on-demand', [], { source: 'estimated', price: 0.0384 }],
    ['an hour old and 31% of on-demand', [aSpotPrice()], { source: 'observed', price: 0.03 }],
    ['exactly 5% of on-demand', [aSpotPrice({ price: '0.0048' })], { source: 'observed', price: 0.0048 }],
    ['exactly on-demand', [aSpotPrice({ price: '0.096' })], { source: 'observed', price: 0.096 }],
    ["moto's 0.00001", [aSpotPrice({ price: '0.000010' })], { source: 'estimated', price: 0.0384 }],
    ['above on-demand', [aSpotPrice({ price: '0.2' })], { source: 'estimated', price: 0.0384 }],
    ['two days old', [aSpotPrice({ ageMs: 48 * hour })], { source: 'estimated', price: 0.0384 }],
    ['dated in the future', [aSpotPrice({ ageMs: -hour })], { source: 'estimated', price: 0.0384 }],
    ['another zone', [aSpotPrice({ zone: 'us-east-1b' })], { source: 'estimated', price: 0.0384 }],
    ['Windows rows', [aSpotPrice({ description: 'Windows' })], { source: 'estimated', price: 0.0384 }],
    ['the latest of several', [aSpotPrice({ price: '0.05', ageMs: 3 * hour }), aSpotPrice({ price: '0.02', ageMs: hour })], { source: 'observed', price: 0.02 }],
  ])('%s', (_name, history, expected) => {
    expect(choose(history)).toEqual(expect.objectContaining(expected));
  });

  it('says why an observation was rejected', () => {
    expect(choose([aSpotPrice({ price: '0.000010', ageMs: 0 })])).toEqual({
      source: 'estimated', price: 0.0384, rejected: 'price 0.00001 is 0.010% of on-demand 0.096',
    });
  });
});

describe('offerings', () => {
  it('has one offering per zone and capacity type, sorted, priced', () => {
    const m5 = anInstanceType('m5.large', { spotPriceHistory: [aSpotPrice()] }, ['us-east-1b', 'us-east-1a']);
    expect(m5.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', price: 0.03, available: true },
      { zone: 'us-east-1b', capacityType: 'on-demand', price: 0.096, available: true },
      { zone: 'us-east-1b', capacityType: 'spot', price: 0.0384, available: true },
    ]);
  });

  it('marks offerings unavailable without a price or when capacity ran out', () => {
    const result = buildInstanceTypes(
      [anInstanceTypeInfo({ InstanceType: 'x9.large' }), anInstanceTypeInfo({ InstanceType: 'x9.xlarge' })],
      [{ InstanceType: 'x9.large', Location: 'us-east-1a' }, { InstanceType: 'x9.xlarge', Location: 'us-east-1a' }],
      options({ unavailableOfferings: new Set(['spot:x9.large:us-east-1a']) }),
    );
    expect(result.instanceTypes.map((it) => [it.name, it.offerings.map((o) => `${o.capacityType}:${o.available}`)])).toEqual([
      ['x9.large', ['on-demand:true', 'spot:false']],
      ['x9.xlarge', ['on-demand:false', 'spot:false']],
    ]);
  });

  it('keeps only the EC2NodeClass zones and skips what cannot launch, saying why', () => {
    const result = buildInstanceTypes(
      [
        anInstanceTypeInfo({ InstanceType: 'x9.large', SupportedUsageClasses: ['on-demand', 'capacity-block'] }),
        anInstanceTypeInfo({ InstanceType: 'x1.small', ProcessorInfo: { SupportedArchitectures: ['i386'] } }),
        anInstanceTypeInfo({ InstanceType: 'x2.small' }),
      ],
      [{ InstanceType: 'x9.large', Location: 'us-east-1a' }, { InstanceType: 'x9.large', Location: 'us-east-1c' }, { InstanceType: 'x2.small', Location: 'us-east-1c' }],
      options({ zones: ['us-east-1a', 'us-east-1b'] }),
    );
    expect(result.instanceTypes.map((it) => [it.name, it.offerings.map((o) => `${o.zone}/${o.capacityType}`)])).toEqual([['x9.large', ['us-east-1a/on-demand']]]);
    expect(result.skipped).toEqual([
      { name: 'x1.small', reason: 'architectures i386 are not supported' },
      { name: 'x2.small', reason: 'not offered in us-east-1 zones us-east-1a, us-east-1b' },
    ]);
  });
});

describe('instance-type requirements', () => {
  const gpu = instanceTypeRequirements(anInstanceType('g4dn.xlarge', { onDemandPrices: { 'g4dn.xlarge': 0.526 } }));
  const m5 = instanceTypeRequirements(anInstanceType('m5.large'));

  it.each([
    ['a GPU count', { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' }, false, true],
    ['no GPU', { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' }, true, false],
    ['at least 4 vCPUs', { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['4'] }, false, true],
    ['spot', { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }, true, true],
    ['zone b', { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }, false, false],
    ['arm64 via the beta label', { key: 'beta.kubernetes.io/arch', operator: 'In', values: ['arm64'] }, false, false],
  ])('a pod wanting %s: m5.large %s, g4dn.xlarge %s', (_name, requirement, onM5, onGpu) => {
    expect(compatible(m5, requirements(requirement)).ok).toBe(onM5);
    expect(compatible(gpu, requirements(requirement)).ok).toBe(onGpu);
  });
});
