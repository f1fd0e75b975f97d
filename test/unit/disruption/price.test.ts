// Replace rules (karpenter.md §1.5 "Consolidation core"), one failing case each.
import { replaceDecision, worstLaunchPrice, type PricedOffering, type ReplacementOption } from '../../../core/disruption';

const offer = (capacityType: 'spot' | 'on-demand', price: number, zone = 'us-east-1a', available = true): PricedOffering => ({ capacityType, price, zone, available });
const option = (instanceType: string, ...offerings: PricedOffering[]): ReplacementOption => ({ instanceType, offerings });

describe('worst launch price', () => {
  it('is the dearest available offering of an allowed type', () => {
    const o = option('m5.large', offer('on-demand', 0.096), offer('on-demand', 0.12, 'us-east-1b'), offer('on-demand', 0.5, 'us-east-1c', false), offer('spot', 0.04));
    expect(worstLaunchPrice(o, ['on-demand'])).toBe(0.12);
    expect(worstLaunchPrice(o, ['spot'])).toBe(0.04);
    expect(worstLaunchPrice(option('x', offer('spot', 1, 'a', false)), ['spot'])).toBeUndefined();
  });
});

describe('replaceDecision', () => {
  const od = [{ price: 0.192, capacityType: 'on-demand' as const }];
  it('keeps only options strictly cheaper at their worst price, cheapest first', () => {
    const d = replaceDecision(od, [option('m5.xlarge', offer('on-demand', 0.192)), option('m5.large', offer('on-demand', 0.096), offer('on-demand', 0.2, 'us-east-1b')), option('c5.large', offer('on-demand', 0.085))], ['on-demand']);
    expect(d).toEqual({ kind: 'replace', options: [expect.objectContaining({ instanceType: 'c5.large' })], capacityTypes: ['on-demand'], savingsPerHour: expect.closeTo(0.107, 6) });
  });
  it('rejects when nothing is cheaper, saying the price', () => {
    expect(replaceDecision(od, [option('m5.xlarge', offer('on-demand', 0.192))], ['on-demand'])).toEqual({ kind: 'reject', reason: 'no replacement is cheaper than the $0.1920/h the node(s) cost' });
  });
  it('on-demand candidates with a replacement that may be spot or on-demand: forced to spot', () => {
    const d = replaceDecision(od, [option('m5.large', offer('on-demand', 0.096), offer('spot', 0.04)), option('c5.large', offer('on-demand', 0.085))], ['spot', 'on-demand']);
    expect(d.kind).toBe('replace');
    if (d.kind !== 'replace') return;
    expect(d.capacityTypes).toEqual(['spot']);
    // c5.large has no spot offering: it cannot be launched as spot
    expect(d.options.map((o) => o.instanceType)).toEqual(['m5.large']);
  });
  const spotOptions = (n: number, price = 0.01) => Array.from({ length: n }, (_, i) => option(`t${i}`, offer('spot', price + i * 0.001)));
  const spot = [{ price: 0.1, capacityType: 'spot' as const }];
  it('spot → spot is off by default', () => {
    expect(replaceDecision(spot, spotOptions(20), ['spot'])).toEqual({ kind: 'reject', reason: 'replacing spot capacity with spot needs spot-to-spot consolidation turned on' });
  });
  it('spot → spot needs at least 15 cheaper options', () => {
    expect(replaceDecision(spot, spotOptions(14), ['spot'], { spotToSpot: true })).toEqual({ kind: 'reject', reason: 'only 14 cheaper spot option(s); spot-to-spot needs at least 15' });
  });
  it('spot → spot keeps the 15 cheapest (or what minValues needs)', () => {
    const d = replaceDecision(spot, spotOptions(40), ['spot'], { spotToSpot: true });
    expect(d.kind === 'replace' && d.options.length).toBe(15);
    const m = replaceDecision(spot, spotOptions(40), ['spot'], { spotToSpot: true, minValues: 20 });
    expect(m.kind === 'replace' && m.options.length).toBe(20);
  });
  it('spot candidates may still move to cheaper on-demand when the pool allows only on-demand', () => {
    const d = replaceDecision(spot, [option('t4g.small', offer('on-demand', 0.0168))], ['on-demand']);
    expect(d).toEqual(expect.objectContaining({ kind: 'replace', capacityTypes: ['on-demand'] }));
  });
  it('several candidates are priced together', () => {
    const two = [...od, { price: 0.096, capacityType: 'on-demand' as const }];
    const d = replaceDecision(two, [option('m5.xlarge', offer('on-demand', 0.192))], ['on-demand']);
    expect(d).toEqual(expect.objectContaining({ kind: 'replace', savingsPerHour: expect.closeTo(0.096, 6) }));
  });
});
