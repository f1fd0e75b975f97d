import { normaliseDocument, secondsToDuration, type EC2NodeClass, type NodePool } from '../../../core/api';
import { aProvisioner, type Doc } from './builders';
import { expectOk } from './helpers';

// v1alpha5 semantics that v1 does not share, each pinned by one row.

function convert(doc: Doc): { pool: NodePool; nodeClass?: EC2NodeClass; warnings: string[] } {
  const { objects, warnings } = expectOk(normaliseDocument(doc));
  const pool = objects.find((o): o is NodePool => o.kind === 'NodePool');
  const nodeClass = objects.find((o): o is EC2NodeClass => o.kind === 'EC2NodeClass');
  if (!pool) throw new Error('no NodePool');
  return { pool, nodeClass, warnings };
}

const requirement = (key: string, operator: string, values?: string[]) => ({ key, operator, ...(values ? { values } : {}) });

describe('implied requirements', () => {
  it.each<[string, Doc, unknown[]]>([
    ['none given: on-demand and amd64 are added', {}, [requirement('karpenter.sh/capacity-type', 'In', ['on-demand']), requirement('kubernetes.io/arch', 'In', ['amd64'])]],
    [
      'capacity-type named with any operator: only arch is added',
      { requirements: [requirement('karpenter.sh/capacity-type', 'NotIn', ['spot'])] },
      [requirement('karpenter.sh/capacity-type', 'NotIn', ['spot']), requirement('kubernetes.io/arch', 'In', ['amd64'])],
    ],
    [
      'arch set as a label: only capacity-type is added',
      { labels: { 'kubernetes.io/arch': 'arm64' } },
      [requirement('karpenter.sh/capacity-type', 'In', ['on-demand'])],
    ],
    [
      'both given: nothing is added',
      { requirements: [requirement('kubernetes.io/arch', 'In', ['arm64']), requirement('karpenter.sh/capacity-type', 'In', ['spot'])] },
      [requirement('kubernetes.io/arch', 'In', ['arm64']), requirement('karpenter.sh/capacity-type', 'In', ['spot'])],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(convert(aProvisioner(spec)).pool.spec.template.spec.requirements).toEqual(expected);
  });
});

describe('disruption and expiry', () => {
  it.each<[string, Doc, { consolidationPolicy: string; consolidateAfter: string }, string, RegExp | undefined]>([
    ['nothing set: nodes were never removed', {}, { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' }, 'Never', /never removed nodes/],
    ['ttlSecondsAfterEmpty only', { ttlSecondsAfterEmpty: 60 }, { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1m' }, 'Never', undefined],
    ['consolidation only', { consolidation: { enabled: true } }, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' }, 'Never', undefined],
    [
      'consolidation disabled explicitly with ttlSecondsAfterEmpty',
      { consolidation: { enabled: false }, ttlSecondsAfterEmpty: 30 },
      { consolidationPolicy: 'WhenEmpty', consolidateAfter: '30s' },
      'Never',
      undefined,
    ],
    [
      'consolidation with ttlSecondsAfterEmpty (exclusive in v1alpha5)',
      { consolidation: { enabled: true }, ttlSecondsAfterEmpty: 30 },
      { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s' },
      'Never',
      /mutually exclusive/,
    ],
    ['ttlSecondsUntilExpired 90', { ttlSecondsUntilExpired: 90, ttlSecondsAfterEmpty: 0 }, { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s' }, '1m30s', undefined],
  ])('%s', (_name, spec, disruption, expireAfter, warning) => {
    const { pool, warnings } = convert(aProvisioner(spec));
    expect(pool.spec.disruption).toEqual({ ...disruption, budgets: [{ nodes: '10%' }] });
    expect(pool.spec.template.spec.expireAfter).toBe(expireAfter);
    if (warning) expect(warnings.some((w) => warning.test(w))).toBe(true);
  });

  it.each([
    [0, '0s'],
    [30, '30s'],
    [3600, '1h'],
    [2592000, '720h'],
    [3661, '1h1m1s'],
  ])('%i seconds is %s', (seconds, duration) => {
    expect(secondsToDuration(seconds)).toBe(duration);
  });
});

describe('node class', () => {
  it('providerRef keeps its name and generates no class; kubelet settings go to the compatibility annotation', () => {
    const { pool, nodeClass, warnings } = convert(
      aProvisioner({ provider: undefined, providerRef: { name: 'tmpl' }, kubeletConfiguration: { maxPods: 30 } }),
    );
    expect(pool.spec.template.spec.nodeClassRef).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'tmpl' });
    expect(nodeClass).toBeUndefined();
    expect(pool.metadata.annotations).toEqual({ 'compatibility.karpenter.sh/v1beta1-kubelet-conversion': '{"maxPods":30}' });
    expect(warnings.some((w) => w.startsWith('spec.providerRef: now refers to EC2NodeClass tmpl'))).toBe(true);
  });

  it('provider selectors become selector terms; aws-ids become id terms', () => {
    const { nodeClass } = convert(
      aProvisioner({
        provider: {
          amiFamily: 'AL2023',
          subnetSelector: { 'aws-ids': 'subnet-1,subnet-2' },
          securityGroupSelector: { 'karpenter.sh/discovery': 'c1' },
          amiSelector: { 'aws::ids': 'ami-123' },
          instanceProfile: 'profile',
        },
      }),
    );
    expect(nodeClass?.spec).toEqual(
      expect.objectContaining({
        amiFamily: 'AL2023',
        amiSelectorTerms: [{ id: 'ami-123' }],
        subnetSelectorTerms: [{ id: 'subnet-1' }, { id: 'subnet-2' }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
        instanceProfile: 'profile',
      }),
    );
  });

  it.each<[string, Doc, string]>([
    ['provider and providerRef together', { providerRef: { name: 'x' } }, 'spec.provider'],
    ['a launch template', { provider: { launchTemplate: 'lt' } }, 'spec.provider.launchTemplate'],
    ['a restricted label', { labels: { 'karpenter.sh/nodepool': 'x' } }, 'spec.labels["karpenter.sh/nodepool"]'],
  ])('rejects %s', (_name, spec, path) => {
    const result = normaliseDocument(aProvisioner(spec));
    expect(result.status).toBe('invalid');
    if (result.status === 'invalid') expect(result.issues.map((i) => i.path)).toContain(path);
  });
});
