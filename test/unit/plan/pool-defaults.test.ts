// `autonode plan` with NodePools that leave capacity-type out, or use another provider's
// selectors (issue 14, "Catalog and defaults"): what is launched, and what the user is told.
import { stringify } from 'yaml';
import { ec2NodeClassV1, nodePoolV1, planJson, pod, runPlanOn, seed, yamlStream } from './helpers';

function nodePoolV1beta1(name: string, requirements: unknown[]): string {
  return stringify({
    apiVersion: 'karpenter.sh/v1beta1',
    kind: 'NodePool',
    metadata: { name },
    spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements } } },
  });
}

const m5 = [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }];

describe('a NodePool without capacity-type', () => {
  it('v1 plans the cheaper spot offering', () => {
    const { doc } = planJson({ 'a.yaml': yamlStream(nodePoolV1('default', { requirements: m5 }), ec2NodeClassV1(), pod('p', { requests: { cpu: '1' } })) });
    expect(doc.nodeClaims.map((c) => c.capacityType)).toEqual(['spot']);
  });

  it('v1beta1 plans on-demand, as its AWS defaulting did, and says so on stderr', () => {
    const { doc, stderr } = planJson({ 'a.yaml': yamlStream(nodePoolV1beta1('default', m5), ec2NodeClassV1(), pod('p', { requests: { cpu: '1' } })) });
    expect(doc.nodeClaims.map((c) => c.capacityType)).toEqual(['on-demand']);
    expect(doc.nodeClaims[0]?.labels['karpenter.sh/capacity-type']).toBe('on-demand');
    expect(stderr).toMatch(/NodePool\/default: .*added karpenter\.sh\/capacity-type In \[on-demand\]/);
  });
});

describe('seed 002 (AKS selectors)', () => {
  it('is refused with the field and the fix, and nothing is planned carrying the Azure label', () => {
    const run = runPlanOn({
      'seed.yaml': seed('002-aks-nodepool.yaml'),
      'class.yaml': ec2NodeClassV1(),
      'app.yaml': pod('p', { requests: { cpu: '1' } }),
    }, { output: 'json' });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/NodePool\/general-purpose: invalid, skipped: spec\.template\.spec\.requirements\[3\]\.key: karpenter\.azure\.com\/sku-family is another provider's label.*Fix: replace it with karpenter\.k8s\.aws\/instance-category/);
    const doc = JSON.parse(run.stdout) as { nodeClaims: { labels: Record<string, string> }[]; unschedulable: { pod: string }[] };
    expect(doc.nodeClaims).toEqual([]);
    expect(doc.unschedulable.map((u) => u.pod)).toEqual(['default/p']);
    expect(run.stdout).not.toContain('karpenter.azure.com');
  });
});
