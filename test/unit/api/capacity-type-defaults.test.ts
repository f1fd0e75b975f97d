// karpenter.sh/capacity-type when a NodePool does not name it (issue 14, "Catalog and
// defaults"). v1beta1: the AWS provider's defaulting (pkg/apis/v1beta1 NodeClaimSpec
// .SetDefaults) added In [on-demand]. v1: no defaulting at all; the instance types offer
// spot and on-demand and the cheapest available offering wins. A pool written as v1beta1
// and read back through v1 keeps v1beta1's meaning (managedFields record the writer's
// version; ADR 0001's conversion: None rewrites only apiVersion).
import { normaliseDocument, requirementsWrittenAs } from '../../../core/api/normalise';
import type { NodePool } from '../../../core/api/nodepool';
import type { NormaliseResult } from '../../../core/api/result';

const CAPACITY_TYPE = 'karpenter.sh/capacity-type';

function pool(apiVersion: string, requirements: unknown[], extra: { labels?: Record<string, string>; managedFields?: unknown[] } = {}): unknown {
  return {
    apiVersion,
    kind: 'NodePool',
    metadata: { name: 'p', ...(extra.managedFields ? { managedFields: extra.managedFields } : {}) },
    spec: {
      template: {
        ...(extra.labels ? { metadata: { labels: extra.labels } } : {}),
        spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements },
      },
    },
  };
}

function converted(result: NormaliseResult): { nodePool: NodePool; warnings: string[] } {
  if (result.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  const nodePool = result.objects.find((o): o is NodePool => o.kind === 'NodePool');
  if (nodePool === undefined) throw new Error('no NodePool');
  return { nodePool, warnings: result.warnings.map((w) => `${w.path}: ${w.message}`) };
}

const capacityTypeOf = (nodePool: NodePool) => nodePool.spec.template.spec.requirements.filter((r) => r.key === CAPACITY_TYPE);

const arch = { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] };

/** What `kubectl apply` records: a manager owning the requirements, at the version it sent. */
const writer = (apiVersion: string, extra: Record<string, unknown> = {}) => ({
  manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion, fieldsType: 'FieldsV1',
  fieldsV1: { 'f:spec': { '.': {}, 'f:template': { 'f:spec': { 'f:requirements': {}, 'f:nodeClassRef': {} } } } },
  ...extra,
});
const statusWriter = { manager: 'autonode', operation: 'Update', apiVersion: 'karpenter.sh/v1', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } };

describe('capacity-type when a NodePool leaves it out', () => {
  it('v1beta1: on-demand, and the warning says how to allow spot', () => {
    const { nodePool, warnings } = converted(normaliseDocument(pool('karpenter.sh/v1beta1', [arch])));
    expect(capacityTypeOf(nodePool)).toEqual([{ key: CAPACITY_TYPE, operator: 'In', values: ['on-demand'] }]);
    expect(warnings).toEqual([expect.stringMatching(/^spec\.template\.spec\.requirements: added karpenter\.sh\/capacity-type In \[on-demand\].*In \[spot, on-demand\] to allow spot$/)]);
  });

  it('v1: nothing added, so every capacity type the types offer is allowed', () => {
    const { nodePool, warnings } = converted(normaliseDocument(pool('karpenter.sh/v1', [arch])));
    expect(capacityTypeOf(nodePool)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it.each([
    ['a requirement', [arch, { key: CAPACITY_TYPE, operator: 'In', values: ['spot'] }], undefined, [{ key: CAPACITY_TYPE, operator: 'In', values: ['spot'] }]],
    ['a NotIn requirement', [{ key: CAPACITY_TYPE, operator: 'NotIn', values: ['on-demand'] }], undefined, [{ key: CAPACITY_TYPE, operator: 'NotIn', values: ['on-demand'] }]],
    ['a template label', [arch], { [CAPACITY_TYPE]: 'spot' }, []],
  ])('v1beta1 with capacity-type named by %s: left as written', (_how, requirements, labels, expected) => {
    const { nodePool, warnings } = converted(normaliseDocument(pool('karpenter.sh/v1beta1', requirements, labels ? { labels } : {})));
    expect(capacityTypeOf(nodePool)).toEqual(expected);
    expect(warnings).toEqual([]);
  });

  describe('a pool read through v1 that was written as v1beta1', () => {
    it('gets the v1beta1 default when every writer of its requirements sent v1beta1 (status writers do not count)', () => {
      const doc = pool('karpenter.sh/v1', [arch], { managedFields: [writer('karpenter.sh/v1beta1'), statusWriter] });
      expect(requirementsWrittenAs(doc)).toBe('v1beta1');
      expect(capacityTypeOf(converted(normaliseDocument(doc)).nodePool)).toEqual([{ key: CAPACITY_TYPE, operator: 'In', values: ['on-demand'] }]);
    });

    it('is v1\'s once anyone rewrote the requirements as v1', () => {
      const doc = pool('karpenter.sh/v1', [arch], { managedFields: [writer('karpenter.sh/v1beta1'), writer('karpenter.sh/v1', { manager: 'kubectl' })] });
      expect(requirementsWrittenAs(doc)).toBe('v1');
      expect(capacityTypeOf(converted(normaliseDocument(doc)).nodePool)).toEqual([]);
    });

    it('is undecided when no writer of the requirements is recorded: the apiVersion read decides', () => {
      expect(requirementsWrittenAs(pool('karpenter.sh/v1', [arch]))).toBeUndefined();
      expect(requirementsWrittenAs(pool('karpenter.sh/v1', [arch], { managedFields: [statusWriter] }))).toBeUndefined();
    });

    it('read through v1beta1 but written as v1: no v1beta1 default', () => {
      const doc = pool('karpenter.sh/v1beta1', [arch], { managedFields: [writer('karpenter.sh/v1')] });
      expect(capacityTypeOf(converted(normaliseDocument(doc)).nodePool)).toEqual([]);
    });
  });
});

describe('another provider\'s selectors', () => {
  it.each([
    ['karpenter.azure.com/sku-family', 'In', ['D'], 'karpenter.k8s.aws/instance-category'],
    ['karpenter.azure.com/sku-cpu', 'Gt', ['3'], 'karpenter.k8s.aws/instance-cpu'],
    ['karpenter.azure.com/sku-memory', 'Lt', ['16385'], 'karpenter.k8s.aws/instance-memory'],
    ['karpenter.azure.com/sku-version', 'In', ['5'], 'karpenter.k8s.aws/instance-generation'],
    ['karpenter.k8s.azure/sku-name', 'Exists', undefined, 'node.kubernetes.io/instance-type'],
  ])('%s %s makes the pool invalid, naming the field and the EC2 label to use', (key, operator, values, instead) => {
    const result = normaliseDocument(pool('karpenter.sh/v1', [arch, { key, operator, ...(values ? { values } : {}) }]));
    expect(result).toEqual({
      status: 'invalid',
      issues: [{ path: 'spec.template.spec.requirements[1].key', value: key, message: expect.stringContaining('another provider'), fix: expect.stringContaining(instead) }],
    });
  });

  it('NotIn / DoesNotExist on them hold on every EC2 node: accepted with a warning', () => {
    const { warnings } = converted(normaliseDocument(pool('karpenter.sh/v1', [
      { key: 'karpenter.azure.com/sku-family', operator: 'NotIn', values: ['B'] },
      { key: 'karpenter.azure.com/sku-gpu-count', operator: 'DoesNotExist' },
    ])));
    expect(warnings).toEqual([
      expect.stringMatching(/^spec\.template\.spec\.requirements\[0\]\.key: .*always holds$/),
      expect.stringMatching(/^spec\.template\.spec\.requirements\[1\]\.key: .*always holds$/),
    ]);
  });
});
