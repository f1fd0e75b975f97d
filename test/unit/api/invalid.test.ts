import { formatIssue, normaliseDocument, type ValidationIssue } from '../../../core/api';
import { aNodePool, anEC2NodeClass, withField, type Doc } from './builders';

// Each bad manifest must be rejected with an issue at the exact field, carrying the bad
// value and a fix, so `autonode validate` can say all three.

function issuesOf(doc: Doc): ValidationIssue[] {
  const result = normaliseDocument(doc);
  if (result.status !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(result)}`);
  return result.issues;
}

const reqs = 'spec.template.spec.requirements';
const v1beta1Pool = (spec: Doc): Doc => ({ ...aNodePool(spec), apiVersion: 'karpenter.sh/v1beta1' });

describe.each<[string, Doc, string, RegExp, unknown]>([
  ['unknown operator', withField(aNodePool(), `${reqs}[2].operator`, 'Equals'), `${reqs}[2].operator`, /use one of: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte/, 'Equals'],
  ['Gt with a non-integer', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4.5'] }), `${reqs}[1].values`, /exactly one non-negative integer/, ['4.5']],
  ['Lte with two values', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['4', '8'] }), `${reqs}[1].values`, /exactly one/, ['4', '8']],
  ['In with no values', withField(aNodePool(), `${reqs}[0].values`, []), `${reqs}[0].values`, /In needs at least one value/, []],
  ['Exists with values', withField(aNodePool(), `${reqs}[0]`, { key: 'kubernetes.io/arch', operator: 'Exists', values: ['amd64'] }), `${reqs}[0].values`, /takes no values/, ['amd64']],
  ['minValues above the values listed', withField(aNodePool(), `${reqs}[2].minValues`, 2), `${reqs}[2].minValues`, /minValues 2 exceeds the 1 value/, 2],
  ['restricted label kubernetes.io/hostname', withField(aNodePool(), `${reqs}[0].key`, 'kubernetes.io/hostname'), `${reqs}[0].key`, /"kubernetes.io\/hostname" is restricted/, 'kubernetes.io/hostname'],
  ['restricted domain karpenter.sh', withField(aNodePool(), `${reqs}[0].key`, 'karpenter.sh/provisioner-name'), `${reqs}[0].key`, /domain "karpenter.sh" is restricted/, 'karpenter.sh/provisioner-name'],
  ['malformed label key', withField(aNodePool(), `${reqs}[0].key`, 'Example.com/team'), `${reqs}[0].key`, /prefix must be a lowercase DNS subdomain/, 'Example.com/team'],
  ['template label karpenter.sh/nodepool', withField(aNodePool(), 'spec.template.metadata', { labels: { 'karpenter.sh/nodepool': 'x' } }), 'spec.template.metadata.labels["karpenter.sh/nodepool"]', /Karpenter sets it/, 'x'],
  ['missing nodeClassRef', withField(aNodePool(), 'spec.template.spec.nodeClassRef', undefined), 'spec.template.spec.nodeClassRef', /nodeClassRef is required/, undefined],
  ['bad quantity in limits', withField(aNodePool(), 'spec.limits', { cpu: '1 core' }), 'spec.limits.cpu', /not a Kubernetes quantity/, '1 core'],
  ['budget nodes 110%', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: '110%' }] }), 'spec.disruption.budgets[0].nodes', /percentage from 0% to 100%/, '110%'],
  ['budget nodes as a YAML number', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: 5 }] }), 'spec.disruption.budgets[0].nodes', /expected string/, 5],
  ['budget schedule without duration', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: '0', schedule: '@daily' }] }), 'spec.disruption.budgets[0].duration', /must be set together/, undefined],
  ['expireAfter in days', withField(aNodePool(), 'spec.template.spec.expireAfter', '30d'), 'spec.template.spec.expireAfter', /duration such as 30s/, '30d'],
  ['unknown consolidation policy', withField(aNodePool(), 'spec.disruption', { consolidationPolicy: 'Always' }), 'spec.disruption.consolidationPolicy', /use one of: WhenEmpty, WhenEmptyOrUnderutilized/, 'Always'],
  ['misspelt field', withField(aNodePool(), 'spec.template.spec.requirments', []), 'spec.template.spec.requirments', /unknown field "requirments"/, []],
  ['taint with a bad effect', withField(aNodePool(), 'spec.template.spec.taints', [{ key: 'a', effect: 'NoWay' }]), 'spec.template.spec.taints[0].effect', /use one of: NoSchedule, PreferNoSchedule, NoExecute/, 'NoWay'],
  ['weight out of range', withField(aNodePool(), 'spec.weight', 101), 'spec.weight', /at most 100/, 101],
  ['v1beta1 WhenEmpty without consolidateAfter', v1beta1Pool({ disruption: { consolidationPolicy: 'WhenEmpty' } }), 'spec.disruption.consolidateAfter', /must be specified with consolidationPolicy=WhenEmpty/, undefined],
  ['NodePool under an unserved version', withField(aNodePool(), 'apiVersion', 'karpenter.sh/v1alpha5'), 'apiVersion', /use apiVersion karpenter.sh\/v1 or karpenter.sh\/v1beta1/, 'karpenter.sh/v1alpha5'],
  ['EC2NodeClass with role and instanceProfile', anEC2NodeClass({ role: 'r', instanceProfile: 'p' }), 'spec.instanceProfile', /mutually exclusive/, 'p'],
  ['EC2NodeClass volume size in GB', anEC2NodeClass({ blockDeviceMappings: [{ ebs: { volumeSize: '120GB' } }] }), 'spec.blockDeviceMappings[0].ebs.volumeSize', /size in Gi, G, Ti or T/, '120GB'],
  ['EC2NodeClass alias combined with other terms', anEC2NodeClass({ amiFamily: undefined, amiSelectorTerms: [{ alias: 'al2023@latest' }, { id: 'ami-1' }] }), 'spec.amiSelectorTerms[0].alias', /only amiSelectorTerm/, 'al2023@latest'],
  ['EC2NodeClass Custom without AMI terms', anEC2NodeClass({ amiSelectorTerms: undefined }), 'spec.amiSelectorTerms', /Custom needs amiSelectorTerms/, undefined],
  ['EC2NodeClass without subnets', anEC2NodeClass({ subnetSelectorTerms: [] }), 'spec.subnetSelectorTerms', /needs at least one term/, []],
])('%s', (_name, doc, path, message, value) => {
  it(`is rejected at ${path}`, () => {
    const issue = issuesOf(doc).find((i) => i.path === path);
    expect(issue).toBeDefined();
    expect(`${issue?.message} / ${issue?.fix}`).toMatch(message);
    expect(issue?.value).toEqual(value);
    expect(issue?.fix).not.toEqual('');
  });

  it('prints path, value and fix on one line', () => {
    const issue = issuesOf(doc).find((i) => i.path === path)!;
    const line = formatIssue(issue);
    expect(line.startsWith(`${path}: `)).toBe(true);
    expect(line).toContain(`(got ${value === undefined ? 'nothing' : JSON.stringify(value)})`);
    expect(line).toMatch(/Fix: \S/);
  });
});

it('the valid builders are valid, so every rejection above is caused by its one change', () => {
  expect(normaliseDocument(aNodePool()).status).toBe('ok');
  expect(normaliseDocument(anEC2NodeClass()).status).toBe('ok');
  expect(normaliseDocument(v1beta1Pool({})).status).toBe('ok');
});

it('reports every problem in a document, not only the first', () => {
  const doc = withField(withField(aNodePool(), `${reqs}[2].operator`, 'Equals'), 'spec.weight', 0);
  expect(issuesOf(doc).map((i) => i.path)).toEqual(expect.arrayContaining([`${reqs}[2].operator`, 'spec.weight']));
});
