import { normaliseDocument, type NodePool } from '../../../core/api';
import { aNodePool, anEC2NodeClass, withField } from './builders';
import { expectOk, normaliseOne } from './helpers';

// With `conversion: None` (docs/adr/0001), a v1beta1 object read through v1 keeps its
// v1beta1 field names and gains v1's defaults. These rows are what the API server returns.

const pool = (doc: Record<string, unknown>): NodePool => {
  const object = normaliseOne(doc);
  if (object.kind !== 'NodePool') throw new Error(object.kind);
  return object;
};

describe('a v1beta1 NodePool read back as v1', () => {
  it('takes expireAfter from spec.disruption, not from the v1 default the server filled in', () => {
    const doc = withField(withField(aNodePool(), 'spec.disruption', { expireAfter: 'Never' }), 'spec.template.spec.expireAfter', '720h');
    const { objects, warnings } = expectOk(normaliseDocument(doc));
    expect(objects[0]?.kind === 'NodePool' && objects[0].spec.template.spec.expireAfter).toBe('Never');
    expect(warnings).toEqual(['spec.disruption.expireAfter: is the v1beta1 location; moved to spec.template.spec.expireAfter']);
  });

  it('warns when both places hold different user values, and the v1beta1 one wins', () => {
    const doc = withField(withField(aNodePool(), 'spec.disruption', { expireAfter: '24h' }), 'spec.template.spec.expireAfter', '48h');
    const { warnings } = expectOk(normaliseDocument(doc));
    expect(pool(doc).spec.template.spec.expireAfter).toBe('24h');
    expect(warnings[0]).toMatch(/^spec\.template\.spec\.expireAfter: ignored \(48h\)/);
  });

  it('maps WhenUnderutilized to WhenEmptyOrUnderutilized', () => {
    const doc = withField(aNodePool(), 'spec.disruption', { consolidationPolicy: 'WhenUnderutilized' });
    expect(pool(doc).spec.disruption).toEqual({ consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '10%' }] });
  });

  it('completes a name-only nodeClassRef with group and kind', () => {
    const doc = withField(aNodePool(), 'spec.template.spec.nodeClassRef', { name: 'default' });
    expect(pool(doc).spec.template.spec.nodeClassRef).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
  });

  it('reports a node class of another provider as unsupported', () => {
    const doc = withField(aNodePool(), 'spec.template.spec.nodeClassRef', { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' });
    expect(normaliseDocument(doc)).toEqual({ status: 'unsupported', reason: expect.stringMatching(/AKSNodeClass \(karpenter\.azure\.com\), which is unsupported by this provider \(AWS\)/) });
  });
});

describe('v1beta1 input', () => {
  const v1beta1 = (spec: Record<string, unknown>) => ({ ...aNodePool(spec), apiVersion: 'karpenter.sh/v1beta1' });

  it('keeps WhenEmpty with its consolidateAfter', () => {
    expect(pool(v1beta1({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m' } })).spec.disruption).toEqual({
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '5m',
      budgets: [{ nodes: '10%' }],
    });
  });

  it('moves kubelet settings to the compatibility annotation', () => {
    const doc = withField(v1beta1({}), 'spec.template.spec.kubelet', { maxPods: 110 });
    expect(pool(doc).metadata.annotations).toEqual({ 'compatibility.karpenter.sh/v1beta1-kubelet-conversion': '{"maxPods":110}' });
  });

  it('derives an @latest alias for an EC2NodeClass with only amiFamily', () => {
    const doc = { ...anEC2NodeClass({ amiFamily: 'AL2023', amiSelectorTerms: undefined }), apiVersion: 'karpenter.k8s.aws/v1beta1' };
    const object = normaliseOne(doc);
    expect(object.kind === 'EC2NodeClass' && object.spec.amiSelectorTerms).toEqual([{ alias: 'al2023@latest' }]);
  });
});

it('a v1 EC2NodeClass gets v1 metadata defaults (hop limit 1) and needs no role on HyperShift', () => {
  const object = normaliseOne(anEC2NodeClass());
  expect(object.kind === 'EC2NodeClass' && object.spec.metadataOptions.httpPutResponseHopLimit).toBe(1);
  expect(object.kind === 'EC2NodeClass' && object.spec.role).toBeUndefined();
});
