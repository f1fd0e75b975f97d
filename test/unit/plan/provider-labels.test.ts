// Which labels a planned NodeClaim carries, and who may provide them (issue 14, "Catalog
// and defaults"): every well-known label Karpenter's AWS provider sets comes from the
// chosen instance type and offering; a NodePool requirement on a label only the provider
// decides is met by a type that really has it, never by stamping the wanted value; a
// custom label in a NodePool requirement is the pool's own to give (Karpenter's
// Requirements.Labels skips restricted labels and keeps the rest).
import { stringify } from 'yaml';
import { ec2NodeClassV1, nodePoolV1, planJson, pod, yamlStream, type PlanDoc } from './helpers';

const flex = 'karpenter.k8s.aws/instance-capability-flex';

function claims(doc: PlanDoc) {
  expect(doc.unschedulable).toEqual([]);
  expect(doc.nodeClaims.length).toBeGreaterThan(0);
  return doc.nodeClaims;
}

describe('well-known AWS labels on planned claims', () => {
  it('a pool requiring instance-capability-flex In [true] gets a -flex family, labelled by the type itself', () => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('flex', { requirements: [{ key: flex, operator: 'In', values: ['true'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '1', memory: '1Gi' } }),
      ),
    });
    for (const claim of claims(doc)) {
      expect(claim.labels[flex]).toBe('true');
      expect(claim.labels['karpenter.k8s.aws/instance-family']).toMatch(/-flex$/);
      for (const option of claim.instanceTypeOptions) expect(option).toMatch(/-flex\./);
    }
  });

  it('a pool requiring instance-capability-flex In [false] never gets a -flex family, and says false', () => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('plain', { requirements: [{ key: flex, operator: 'In', values: ['false'] }, { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['t4g.small', 'c7i-flex.large', 'm5.large'] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '500m', memory: '512Mi' } }),
      ),
    });
    for (const claim of claims(doc)) {
      expect(claim.labels[flex]).toBe('false');
      expect(claim.instanceTypeOptions).not.toContain('c7i-flex.large');
    }
  });

  it('a pod selecting instance-capability-flex: "true" under a pool that does not mention it lands on a flex type', () => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('default', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '1' }, nodeSelector: { [flex]: 'true' } }),
      ),
    });
    const [claim] = claims(doc);
    expect(claim?.instanceType).toMatch(/-flex\./);
    expect(claim?.labels[flex]).toBe('true');
  });

  it.each([
    ['karpenter.k8s.aws/placement-group-id', 'pg-0123'],
    ['topology.k8s.aws/zone-id', 'use1-az1'],
    ['karpenter.k8s.aws/capacity-reservation-id', 'cr-0123'],
    ['karpenter.k8s.aws/instance-tenancy', 'dedicated'],
  ])('a pool requiring %s In [%s], which no type carries, matches nothing and says so instead of stamping it', (key, value) => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('strict', { requirements: [{ key, operator: 'In', values: [value] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '1' } }),
      ),
    });
    expect(doc.nodeClaims).toEqual([]);
    expect(doc.unschedulable).toHaveLength(1);
    expect(doc.unschedulable[0]?.reason).toContain(key);
  });

  it('a custom label required by the pool is given to its nodes (the pool provides it)', () => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('team', { requirements: [{ key: 'example.com/team', operator: 'In', values: ['payments'] }, { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '1' }, nodeSelector: { 'example.com/team': 'payments' } }),
      ),
    });
    const [claim] = claims(doc);
    expect(claim?.labels['example.com/team']).toBe('payments');
  });

  it('every provider label on a claim is the chosen type\'s own value', () => {
    const { doc } = planJson({
      'a.yaml': yamlStream(
        nodePoolV1('default', { requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] }, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] }] }),
        ec2NodeClassV1(),
        pod('p', { requests: { cpu: '3', memory: '4Gi' } }),
      ),
    });
    for (const claim of claims(doc)) {
      const [family, size] = claim.instanceType.split('.');
      expect(claim.labels['karpenter.k8s.aws/instance-family']).toBe(family);
      expect(claim.labels['karpenter.k8s.aws/instance-size']).toBe(size);
      expect(['c', 'm']).toContain(claim.labels['karpenter.k8s.aws/instance-category']);
      expect(Number(claim.labels['karpenter.k8s.aws/instance-generation'])).toBeGreaterThan(5);
      expect(claim.labels[flex]).toBe(String(family?.includes('-flex')));
    }
  });

  it('a template label on a provider label (instance-family: c5) narrows the types; it never overrides a type\'s own value', () => {
    const pool = stringify({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'c5-only' },
      spec: {
        template: {
          metadata: { labels: { 'karpenter.k8s.aws/instance-family': 'c5', 'example.com/team': 'batch' } },
          spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
        },
      },
    });
    const { doc } = planJson({ 'a.yaml': yamlStream(pool, ec2NodeClassV1(), pod('p', { requests: { cpu: '1' } })) });
    for (const claim of claims(doc)) {
      for (const option of claim.instanceTypeOptions) expect(option).toMatch(/^c5\./);
      expect(claim.labels['karpenter.k8s.aws/instance-family']).toBe('c5');
      expect(claim.labels['example.com/team']).toBe('batch');
    }
  });
});
