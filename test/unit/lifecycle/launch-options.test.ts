import { launchOptionsForClaim } from '../../../core/lifecycle/launch-options';
import { catalogInstanceTypes } from '../../../core/instancetypes/catalog';

const NOW = new Date('2026-11-01T00:00:00Z');
const catalog = catalogInstanceTypes({ region: 'us-east-1', amiFamily: 'AL2023', now: NOW.getTime() });
if (!catalog.ok) throw new Error(catalog.reason);
const types = catalog.instanceTypes;
const m5 = [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge', 'm5.2xlarge'] }];

describe('launch options: spec.resources.requests (issue 10)', () => {
  it('launches only types whose allocatable holds the requests', () => {
    const result = launchOptionsForClaim(m5, types, { requests: { cpu: '3', memory: '4Gi' } });
    expect(result.ok && result.options.map((o) => o.instanceType)).toEqual(['m5.xlarge', 'm5.2xlarge']);
  });

  it.each([
    [{ cpu: '-5' }, /spec\.resources\.requests\.cpu: "-5" is negative/],
    [{ memory: 'lots' }, /spec\.resources\.requests\.memory: "lots" is not a quantity/],
    [{ cpu: '1000' }, /allocatable for spec\.resources\.requests \(cpu: 1000\)/],
    [{ 'nvidia.com/gpu': '1' }, /nvidia\.com\/gpu: 1/],
  ])('refuses %j, naming the field', (requests, says) => {
    const result = launchOptionsForClaim(m5, types, { requests });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(says) });
  });
});
