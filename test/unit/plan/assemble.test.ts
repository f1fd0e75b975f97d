// Manifests → packing input (core/workloads/assemble.ts, expand.ts): which pods are
// pending and how controllers expand, what counts as running where, which NodePools,
// Nodes and NodeClaims are used, and that every skipped document is reported.
import { assemblePlanInput, type Assembled } from '../../../core/workloads/assemble';
import { expandWorkload } from '../../../core/workloads/expand';
import {
  NOW, daemonSet, ec2NodeClassV1, job, node, nodeClaimV1, nodePoolV1, onDemand, pod, replicated, seed, yamlStream,
} from './helpers';

function assemble(files: Record<string, string>, region = 'us-east-1'): Assembled {
  return assemblePlanInput(Object.entries(files).map(([path, text]) => ({ path, text })), { region, now: NOW });
}

const podKeys = (assembled: Assembled): string[] => assembled.input.pods.map((p) => `${p.namespace}/${p.name}`);

describe('controller expansion', () => {
  it('expands a Deployment to `replicas` pods named <name>-<i>, in its namespace, with the template labels and requests', () => {
    const { input, diagnostics } = assemble({
      'web.yaml': replicated('Deployment', 'web', 3, { namespace: 'shop', requests: { cpu: '250m', memory: '512Mi' } }),
    });
    expect(diagnostics).toEqual([]);
    expect(input.pods.map((p) => `${p.namespace}/${p.name}`)).toEqual(['shop/web-0', 'shop/web-1', 'shop/web-2']);
    for (const p of input.pods) {
      expect(p.labels).toEqual({ app: 'web' });
      expect(p.requests).toMatchObject({ cpu: '250m', memory: '512Mi' });
    }
  });

  it('expands a StatefulSet and a ReplicaSet the same way; namespace defaults to "default"', () => {
    const { input } = assemble({
      'a.yaml': yamlStream(replicated('StatefulSet', 'db', 2, { namespace: 'data' }), replicated('ReplicaSet', 'rs', 4)),
    });
    expect(podKeys({ input, diagnostics: [] })).toEqual(['data/db-0', 'data/db-1', 'default/rs-0', 'default/rs-1', 'default/rs-2', 'default/rs-3']);
  });

  it('defaults replicas to 1 and expands replicas: 0 to no pod', () => {
    const assembled = assemble({ 'a.yaml': yamlStream(replicated('Deployment', 'one', undefined), replicated('Deployment', 'none', 0)) });
    expect(podKeys(assembled)).toEqual(['default/one-0']);
  });

  it.each([
    [{}, ['j-0']],
    [{ parallelism: 5, completions: 2 }, ['j-0', 'j-1']],
    [{ parallelism: 2, completions: 5 }, ['j-0', 'j-1']],
    [{ parallelism: 3 }, ['j-0']],
    [{ completions: 4 }, ['j-0']],
    [{ parallelism: 0, completions: 3 }, []],
  ])('expands a Job with %j to min(parallelism, completions) pods, each defaulting to 1', (counts, names) => {
    const assembled = assemble({ 'job.yaml': job('j', counts, { namespace: 'batch' }) });
    expect(assembled.diagnostics).toEqual([]);
    expect(podKeys(assembled)).toEqual(names.map((n) => `batch/${n}`));
  });

  it('keeps a bare Pod under its own name and reads its scheduling constraints', () => {
    const { input } = assemble({
      'p.yaml': pod('solo', {
        requests: { cpu: '2', memory: '1Gi' },
        nodeSelector: { 'kubernetes.io/arch': 'arm64' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      }),
    });
    expect(input.pods).toHaveLength(1);
    const [solo] = input.pods;
    expect(solo).toMatchObject({
      namespace: 'default', name: 'solo', requests: { cpu: '2', memory: '1Gi' },
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    });
  });

  it('counts the pod itself (pods: 1) in its requests', () => {
    const { input } = assemble({ 'p.yaml': pod('solo', { requests: { cpu: '1' } }) });
    expect(input.pods[0]?.requests).toMatchObject({ cpu: '1', pods: '1' });
  });

  it('skips finished pods with a diagnostic', () => {
    const { input, diagnostics } = assemble({ 'p.yaml': yamlStream(pod('done', { phase: 'Succeeded' }), pod('broken', { phase: 'Failed' }), pod('live', { phase: 'Pending' })) });
    expect(podKeys({ input, diagnostics })).toEqual(['default/live']);
    expect(diagnostics).toEqual([
      'p.yaml:1: Pod/done: skipped: pod has finished (Succeeded)',
      expect.stringMatching(/^p\.yaml:\d+: Pod\/broken: skipped: pod has finished \(Failed\)$/),
    ]);
  });

  it('reports a pod name used twice and plans only the first', () => {
    const { input, diagnostics } = assemble({
      'a.yaml': yamlStream(replicated('Deployment', 'web', 2, { requests: { cpu: '1' } }), pod('web-0', { requests: { cpu: '3' } })),
    });
    expect(podKeys({ input, diagnostics })).toEqual(['default/web-0', 'default/web-1']);
    expect(input.pods[0]?.requests.cpu).toBe('1');
    expect(diagnostics).toEqual([expect.stringMatching(/^a\.yaml:\d+: Pod\/web-0: pod default\/web-0 is already in the input/)]);
  });

  it('turns a DaemonSet into overhead, not into pending pods', () => {
    const { input } = assemble({ 'ds.yaml': daemonSet('agent', { requests: { cpu: '300m', memory: '200Mi' } }) });
    expect(input.pods).toEqual([]);
    expect(input.daemonSets).toEqual([expect.objectContaining({ namespace: 'kube-system', name: 'agent', requests: expect.objectContaining({ cpu: '300m', memory: '200Mi' }) })]);
  });

  it('expandWorkload never throws and classifies what it does not plan with', () => {
    expect(expandWorkload({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).toEqual({ kind: 'other' });
    expect(expandWorkload('just a string')).toEqual({ kind: 'other' });
    expect(expandWorkload({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } }).kind).toBe('invalid');
    expect(expandWorkload({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: -1, template: { spec: { containers: [{ name: 'c' }] } } } }).kind).toBe('invalid');
  });
});

describe('existing Nodes and bound pods', () => {
  it('puts a pod with spec.nodeName on that Node (running, not pending)', () => {
    const { input, diagnostics } = assemble({
      'n.yaml': yamlStream(
        node('ip-10-0-0-1.ec2.internal', { cpu: '4', memory: '16Gi', pods: '110' }),
        pod('running', { nodeName: 'ip-10-0-0-1.ec2.internal', requests: { cpu: '3' } }),
        pod('pending', { requests: { cpu: '1' } }),
      ),
    });
    expect(diagnostics).toEqual([]);
    expect(podKeys({ input, diagnostics })).toEqual(['default/pending']);
    expect(input.existingNodes).toHaveLength(1);
    expect(input.existingNodes[0]).toMatchObject({ name: 'ip-10-0-0-1.ec2.internal', allocatable: { cpu: '4', memory: '16Gi', pods: '110' } });
    expect(input.existingNodes[0]?.pods.map((p) => p.name)).toEqual(['running']);
    expect(input.existingNodes[0]?.pods[0]?.requests).toMatchObject({ cpu: '3' });
  });

  it('binds by spec.nodeName whatever the order of the documents', () => {
    const { input } = assemble({ 'a.yaml': pod('early', { nodeName: 'n1' }), 'b.yaml': node('n1', { cpu: '2', memory: '4Gi', pods: '10' }) });
    expect(input.pods).toEqual([]);
    expect(input.existingNodes[0]?.pods.map((p) => p.name)).toEqual(['early']);
  });

  it('reports, and ignores, a pod bound to a node that is not in the input', () => {
    const { input, diagnostics } = assemble({ 'p.yaml': pod('orphan', { nodeName: 'ghost' }) });
    expect(input.pods).toEqual([]);
    expect(diagnostics).toEqual(['Pod/default/orphan: bound to ghost, which is not in the input; ignored']);
  });

  it('rejects a Node whose capacity is unknown, and falls back to capacity when allocatable is absent', () => {
    const noStatus = assemble({ 'n.yaml': node('blank', undefined) });
    expect(noStatus.input.existingNodes).toEqual([]);
    expect(noStatus.diagnostics).toEqual([expect.stringMatching(/^n\.yaml:1: Node\/blank: invalid, skipped: .*capacity is unknown/)]);

    const capacityOnly = assemble({
      'n.yaml': 'apiVersion: v1\nkind: Node\nmetadata:\n  name: cap\nstatus:\n  capacity:\n    cpu: "8"\n    memory: 32Gi\n    pods: "58"\n',
    });
    expect(capacityOnly.diagnostics).toEqual([]);
    expect(capacityOnly.input.existingNodes[0]?.allocatable).toEqual({ cpu: '8', memory: '32Gi', pods: '58' });
  });
});

describe('NodeClaims', () => {
  it('treats a NodeClaim without a registered Node as in flight, of the pool named by its label', () => {
    const { input } = assemble({
      'c.yaml': nodeClaimV1('default-x7k2p', { nodePool: 'default', requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }] }),
    });
    expect(input.inFlightClaims).toHaveLength(1);
    const [claim] = input.inFlightClaims;
    expect(claim).toMatchObject({ name: 'default-x7k2p', nodePool: 'default', pods: [] });
    expect(claim?.requirements).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] })]));
    // Not launched yet: the solver assumes the smallest compatible type of the pool.
    expect(claim?.allocatable).toBeUndefined();
  });

  it('carries status.allocatable when the claim has launched', () => {
    const { input } = assemble({ 'c.yaml': nodeClaimV1('launched', { allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' } }) });
    expect(input.inFlightClaims[0]?.allocatable).toEqual({ cpu: '1930m', memory: '7Gi', pods: '29' });
  });

  it('does not count a NodeClaim twice once its Node is in the input', () => {
    const { input } = assemble({
      'c.yaml': yamlStream(nodeClaimV1('default-reg', { nodeName: 'ip-10-0-0-9.ec2.internal' }), node('ip-10-0-0-9.ec2.internal', { cpu: '2', memory: '8Gi', pods: '29' })),
    });
    expect(input.inFlightClaims).toEqual([]);
    expect(input.existingNodes.map((n) => n.name)).toEqual(['ip-10-0-0-9.ec2.internal']);
  });

  it('counts a pod bound to an in-flight claim\'s future node name against that claim', () => {
    const { input, diagnostics } = assemble({
      'c.yaml': yamlStream(nodeClaimV1('default-abc12', { nodeName: 'ip-10-0-0-7.ec2.internal' }), pod('early', { nodeName: 'ip-10-0-0-7.ec2.internal', requests: { cpu: '1' } })),
    });
    expect(diagnostics).toEqual([]);
    expect(input.inFlightClaims[0]?.pods.map((p) => p.name)).toEqual(['early']);
  });
});

describe('NodePools', () => {
  it('accepts karpenter.sh/v1 with its EC2NodeClass, and builds the catalog with the pool\'s requirements', () => {
    const { input, diagnostics } = assemble({ 'p.yaml': yamlStream(nodePoolV1('default', { requirements: onDemand('m5.large'), weight: 7 }), ec2NodeClassV1()) });
    expect(diagnostics).toEqual([]);
    expect(input.nodePools).toHaveLength(1);
    const [pool] = input.nodePools;
    expect(pool).toMatchObject({ name: 'default', weight: 7 });
    expect(pool?.requirements.map((r) => r.key)).toEqual(expect.arrayContaining(['karpenter.sh/capacity-type', 'node.kubernetes.io/instance-type']));
    expect(pool?.instanceTypes.map((t) => t.name)).toContain('m5.large');
  });

  it('assumes AL2023 defaults, with a diagnostic, when the EC2NodeClass is missing', () => {
    const { input, diagnostics } = assemble({ 'p.yaml': nodePoolV1('lonely', { nodeClass: 'missing' }) });
    expect(input.nodePools.map((p) => p.name)).toEqual(['lonely']);
    expect(diagnostics).toEqual(['NodePool/lonely: EC2NodeClass missing not in the input; assuming AL2023 defaults']);
  });

  it('accepts the karpenter.sh/v1beta1 seed verbatim (its Custom EC2NodeClass and 120Gi root volume included)', () => {
    const { input, diagnostics } = assemble({ '000.yaml': seed('000-hypershift-nodepool-and-nodeclass.yaml') });
    expect(diagnostics).toEqual([]);
    expect(input.nodePools.map((p) => p.name)).toEqual(['spot-example']);
    const types = input.nodePools[0]?.instanceTypes ?? [];
    expect(types.length).toBeGreaterThan(0);
    // The root volume of the EC2NodeClass sizes ephemeral storage: more than a 20Gi default could give.
    const m5 = types.find((t) => t.name === 'm5.xlarge');
    expect(m5?.allocatable['ephemeral-storage']).toBe('107Gi');
  });

  it('accepts the karpenter.sh/v1alpha5 Provisioner seed verbatim, with its taints, labels and weight', () => {
    const { input, diagnostics } = assemble({ '004.yaml': seed('004-provisioner.yaml') }, 'us-west-2');
    expect(input.nodePools).toHaveLength(1);
    const [pool] = input.nodePools;
    expect(pool).toMatchObject({
      name: 'default', weight: 10, labels: { 'billing-team': 'my-team' },
      taints: [{ key: 'example.com/special-taint', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'example.com/another-taint', effect: 'NoSchedule' }],
      limits: { cpu: '1000', memory: '1000Gi' },
    });
    // Conversion notes are diagnostics, not failures.
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.every((d) => !/invalid|skipped/.test(d))).toBe(true);
  });

  it('reports and skips a NodePool with an invalid operator, keeping the valid one', () => {
    const broken = nodePoolV1('broken', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'Greater', values: ['on-demand'] }] });
    const { input, diagnostics } = assemble({ 'pools.yaml': yamlStream(broken, nodePoolV1('good', { requirements: onDemand('m5.large') }), ec2NodeClassV1()) });
    expect(input.nodePools.map((p) => p.name)).toEqual(['good']);
    expect(diagnostics).toEqual([expect.stringMatching(/^pools\.yaml:1: NodePool\/broken: invalid, skipped: spec\.template\.spec\.requirements\[0\]\.operator/)]);
  });

  it('reports the line of the broken document in a multi-document file', () => {
    const good = nodePoolV1('good');
    const broken = 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: no-class\nspec:\n  template:\n    spec:\n      requirements: []\n';
    const { input, diagnostics } = assemble({ 'pools.yaml': yamlStream(ec2NodeClassV1(), good, broken) });
    // The broken document starts on the line after everything before it.
    const line = yamlStream(ec2NodeClassV1(), good, '').split('\n').length;
    expect(input.nodePools.map((p) => p.name)).toEqual(['good']);
    expect(diagnostics).toEqual([`pools.yaml:${line}: NodePool/no-class: invalid, skipped: spec.template.spec.nodeClassRef: nodeClassRef is required. Fix: set nodeClassRef (object)`]);
  });

  it('skips every pool, with a reason, for a region outside the bundled catalog', () => {
    const { input, diagnostics } = assemble({ 'p.yaml': yamlStream(nodePoolV1('default'), ec2NodeClassV1()) }, 'mars-north-1');
    expect(input.nodePools).toEqual([]);
    expect(diagnostics).toEqual([expect.stringMatching(/^NodePool\/default: skipped: region mars-north-1 is not in the bundled catalog/)]);
  });

  it('reports another provider\'s node class as unsupported', () => {
    const { diagnostics } = assemble({ 'aks.yaml': seed('002-aks-nodeclass.yaml') });
    expect(diagnostics).toEqual([expect.stringMatching(/^aks\.yaml:1: AKSNodeClass\/default: skipped: .*unsupported by this provider \(AWS\)/)]);
  });
});

describe('robustness', () => {
  it('reports invalid YAML and other kinds, and still uses the rest of the stream and of the other files', () => {
    const { input, diagnostics } = assemble({
      'a.yaml': yamlStream(pod('before'), 'this: is: not: yaml\n', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n', pod('after')),
      'b.yaml': replicated('Deployment', 'other', 1),
    });
    expect(podKeys({ input, diagnostics })).toEqual(['default/before', 'default/after', 'default/other-0']);
    expect(diagnostics).toHaveLength(2);
    expect(diagnostics[0]).toMatch(/^a\.yaml:\d+: \?\/\?: invalid YAML, skipped: /);
    expect(diagnostics[1]).toMatch(/^a\.yaml:\d+: ConfigMap\/cm: ignored: not an object autonode plans with$/);
  });

  it('reports an invalid workload with the field at fault, and keeps the others', () => {
    const { input, diagnostics } = assemble({
      'a.yaml': yamlStream('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: []\n', pod('fine')),
    });
    expect(podKeys({ input, diagnostics })).toEqual(['default/fine']);
    expect(diagnostics).toEqual([expect.stringMatching(/^a\.yaml:1: Deployment\/bad: invalid, skipped: spec\.template\.spec\.containers/)]);
  });

  it('passes `now` through to the packing input and caps instance-type options at 60', () => {
    const { input } = assemble({ 'p.yaml': pod('p') });
    expect(input.now).toBe(NOW);
    expect(input.maxInstanceTypes).toBe(60);
  });
});
