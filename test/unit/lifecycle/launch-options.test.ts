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

describe('launch options: labels the node is given at registration', () => {
  const withTemplateLabels = [...m5, { key: 'example.com/team', operator: 'In', values: ['a'] }, { key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] }];

  it('a requirement on the claim\'s own (stamped) labels is no question for the instance type', () => {
    const result = launchOptionsForClaim(withTemplateLabels, types, { stampedLabels: { 'example.com/team': 'a', 'karpenter.sh/nodepool': 'default' } });
    expect(result.ok && result.options.map((o) => o.instanceType)).toEqual(['m5.large', 'm5.xlarge', 'm5.2xlarge']);
  });

  it('without the label stamped, no instance type satisfies a custom label', () => {
    expect(launchOptionsForClaim(withTemplateLabels, types).ok).toBe(false);
  });

  it('a stamped label with another value does not satisfy the requirement', () => {
    expect(launchOptionsForClaim(withTemplateLabels, types, { stampedLabels: { 'example.com/team': 'b', 'karpenter.sh/nodepool': 'default' } }).ok).toBe(false);
  });
});
