import { normalizeLabelKey } from '../../../core/scheduling/labels';
import type { NodeSelectorRequirementInput } from '../../../core/scheduling/requirement';
import {
  compatible, getRequirement, hasRequirement, intersectRequirements, labelsSatisfy, parseRequirements, requirements,
  requirementsFromLabels, singleValuedLabels,
} from '../../../core/scheduling/requirements';

const arch = 'kubernetes.io/arch';
const zone = 'topology.kubernetes.io/zone';

describe('requirements', () => {
  it.each([
    ['beta.kubernetes.io/arch', arch],
    ['beta.kubernetes.io/os', 'kubernetes.io/os'],
    ['beta.kubernetes.io/instance-type', 'node.kubernetes.io/instance-type'],
    ['failure-domain.beta.kubernetes.io/zone', zone],
    ['failure-domain.beta.kubernetes.io/region', 'topology.kubernetes.io/region'],
    ['example.com/team', 'example.com/team'],
  ])('treats %s as %s', (alias, stable) => {
    expect(normalizeLabelKey(alias)).toBe(stable);
    expect(hasRequirement(requirements({ key: alias, operator: 'Exists' }), stable)).toBe(true);
  });

  it('intersects repeated keys, including an alias and its stable key', () => {
    const parsed = requirements(
      { key: arch, operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'beta.kubernetes.io/arch', operator: 'NotIn', values: ['amd64'] },
    );
    expect(getRequirement(parsed, arch)).toEqual({ kind: 'In', key: arch, values: ['arm64'] });
  });

  it('is compatible when every shared key overlaps', () => {
    const pool = requirements({ key: arch, operator: 'In', values: ['amd64', 'arm64'] }, { key: zone, operator: 'In', values: ['us-east-1a', 'us-east-1b'] });
    const pod = requirements({ key: arch, operator: 'In', values: ['arm64'] });
    expect(compatible(pool, pod)).toEqual({ ok: true });
  });

  it('names key, operators and values when a shared key does not overlap', () => {
    const pool = requirements({ key: arch, operator: 'In', values: ['amd64'] });
    const pod = requirements({ key: arch, operator: 'In', values: ['arm64'] });
    expect(compatible(pool, pod)).toEqual({
      ok: false, reason: 'kubernetes.io/arch In [arm64] is incompatible with kubernetes.io/arch In [amd64]',
    });
  });

  it('accepts two requirements that both allow the label to be absent', () => {
    const pool = requirements({ key: 'example.com/gpu', operator: 'DoesNotExist' });
    const pod = requirements({ key: 'example.com/gpu', operator: 'NotIn', values: ['a100'] });
    expect(compatible(pool, pod)).toEqual({ ok: true });
  });

  it('rejects Exists against DoesNotExist', () => {
    const pool = requirements({ key: 'example.com/gpu', operator: 'DoesNotExist' });
    const pod = requirements({ key: 'example.com/gpu', operator: 'Exists' });
    expect(compatible(pool, pod)).toEqual({ ok: false, reason: 'example.com/gpu Exists is incompatible with example.com/gpu DoesNotExist' });
  });

  it.each<[NodeSelectorRequirementInput, boolean]>([
    [{ key: 'example.com/team', operator: 'In', values: ['a'] }, false],
    [{ key: 'example.com/team', operator: 'Exists' }, false],
    [{ key: 'example.com/team', operator: 'NotIn', values: ['a'] }, true],
    [{ key: 'example.com/team', operator: 'DoesNotExist' }, true],
    [{ key: zone, operator: 'In', values: ['us-east-1a'] }, true],
  ])('a custom key the node side leaves undefined: %j → compatible %s', (input, ok) => {
    const result = compatible(requirements({ key: arch, operator: 'Exists' }), requirements(input));
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.reason).toBe(`label example.com/team does not have known values (required: ${input.key} ${input.operator}${input.values ? ` [${input.values.join(', ')}]` : ''})`);
  });

  it('intersects requirement maps key by key', () => {
    const merged = intersectRequirements(
      requirements({ key: arch, operator: 'In', values: ['amd64', 'arm64'] }),
      requirements({ key: arch, operator: 'In', values: ['arm64'] }, { key: zone, operator: 'In', values: ['us-east-1a'] }),
    );
    expect(singleValuedLabels(merged)).toEqual({ [arch]: 'arm64', [zone]: 'us-east-1a' });
  });

  it('checks a node\'s labels, explaining each miss', () => {
    const reqs = requirements({ key: arch, operator: 'In', values: ['arm64'] }, { key: 'example.com/team', operator: 'Exists' });
    expect(labelsSatisfy(reqs, { 'beta.kubernetes.io/arch': 'arm64', 'example.com/team': 'a' })).toEqual({ ok: true });
    expect(labelsSatisfy(reqs, { [arch]: 'amd64' })).toEqual({
      ok: false,
      reason: 'example.com/team Exists (node has no such label); kubernetes.io/arch In [arm64] (node has kubernetes.io/arch=amd64)',
    });
  });

  it('builds requirements from a node selector', () => {
    expect(requirementsFromLabels({ 'beta.kubernetes.io/arch': 'arm64' })).toEqual({ [arch]: { kind: 'In', key: arch, values: ['arm64'] } });
  });

  it('reports the first invalid requirement', () => {
    expect(parseRequirements([{ key: arch, operator: 'In', values: ['amd64'] }, { key: 'x', operator: 'Gt', values: ['a'] }]))
      .toEqual({ ok: false, reason: 'requirement x Gt needs an integer value, got "a"' });
  });
});
