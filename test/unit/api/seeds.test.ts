import { normaliseDocument } from '../../../core/api';
import { expectOk, normaliseOne, seedDocuments } from './helpers';

// The seeds' YAML, copied verbatim into test/fixtures/seeds/, must be accepted and mean
// what Karpenter made it mean. Expectations are written out by hand from karpenter.md.

const v1Defaults = {
  disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '10%' }] },
};

describe('seed 000 (HyperShift): v1beta1 NodePool and EC2NodeClass', () => {
  const [nodePool, nodeClass] = seedDocuments('000-hypershift-nodepool-and-nodeclass.yaml');

  it('normalises the NodePool to v1: nodeClassRef gets a group, expireAfter and disruption get v1beta1 defaults in v1 form', () => {
    expect(normaliseOne(nodePool)).toEqual({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'spot-example', annotations: { 'kubernetes.io/description': 'NodePool to run spot instances' } },
      spec: {
        template: {
          spec: {
            requirements: [
              { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
              { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
              { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
              { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
              { key: 'karpenter.k8s.aws/instance-size', operator: 'In', values: ['xlarge'] },
            ],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            expireAfter: '720h',
          },
        },
        // v1beta1's default WhenUnderutilized is v1's WhenEmptyOrUnderutilized after 0s.
        ...v1Defaults,
      },
    });
  });

  it('normalises the EC2NodeClass: Custom AMI by id, no role or instance profile, v1beta1 hop limit 2 kept', () => {
    expect(normaliseOne(nodeClass)).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: {
        name: 'default',
        annotations: { 'kubernetes.io/description': 'General purpose EC2NodeClass for running Amazon Linux 2 nodes' },
      },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-00722494a4a3fa2af' }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'your-infra-tag' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'your-infra-tag' } }],
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeType: 'gp3', volumeSize: '120Gi', deleteOnTermination: true } },
        ],
        metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'required' },
      },
    });
  });

  it('converts both without warnings: nothing was assumed', () => {
    expect(expectOk(normaliseDocument(nodePool)).warnings).toEqual([]);
    expect(expectOk(normaliseDocument(nodeClass)).warnings).toEqual([]);
  });
});

describe('seed 002 (AKS)', () => {
  it('refuses the v1beta1 NodePool: its sku-family selector is Azure\'s, and the fix names the EC2 label to use', () => {
    const [nodePool] = seedDocuments('002-aks-nodepool.yaml');
    // Rather than plan nodes that "match nothing" yet carry the Azure label (issue 14).
    expect(normaliseDocument(nodePool)).toEqual({
      status: 'invalid',
      issues: [{
        path: 'spec.template.spec.requirements[3].key',
        value: 'karpenter.azure.com/sku-family',
        message: expect.stringContaining("karpenter.azure.com/sku-family is another provider's label"),
        fix: expect.stringContaining('karpenter.k8s.aws/instance-category'),
      }],
    });
  });

  it('accepts the same pool with the sku-family selector translated by hand, name-only nodeClassRef and expireAfter Never', () => {
    const [seedPool] = seedDocuments('002-aks-nodepool.yaml');
    const nodePool = structuredClone(seedPool) as { spec: { template: { spec: { requirements: unknown[] } } } };
    nodePool.spec.template.spec.requirements[3] = { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] };
    const { objects, warnings } = expectOk(normaliseDocument(nodePool));
    expect(objects).toEqual([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general-purpose' },
        spec: {
          template: {
            spec: {
              requirements: [
                { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
                { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] },
              ],
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              expireAfter: 'Never',
            },
          },
          ...v1Defaults,
        },
      },
    ]);
    expect(warnings).toEqual([]);
  });

  it('reports the AKSNodeClass as unsupported by this provider, not as malformed', () => {
    const [aksNodeClass] = seedDocuments('002-aks-nodeclass.yaml');
    expect(normaliseDocument(aksNodeClass)).toEqual({
      status: 'unsupported',
      reason: expect.stringContaining('AKSNodeClass (karpenter.azure.com/v1alpha2) is unsupported by this provider (AWS)'),
    });
  });
});

describe('seed 004: v1alpha5 Provisioner', () => {
  const [provisioner] = seedDocuments('004-provisioner.yaml');
  const { objects, warnings } = expectOk(normaliseDocument(provisioner));

  it('becomes a NodePool whose disruption and expiry mean what the Provisioner meant', () => {
    expect(objects[0]).toEqual({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'default' },
      spec: {
        template: {
          metadata: { labels: { 'billing-team': 'my-team' } },
          spec: {
            taints: [{ key: 'example.com/special-taint', effect: 'NoSchedule' }],
            startupTaints: [{ key: 'example.com/another-taint', effect: 'NoSchedule' }],
            // capacity-type and arch are given explicitly, so nothing is implied.
            requirements: [
              { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.2xlarge'] },
              { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b'] },
              { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64', 'amd64'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
            ],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            expireAfter: '720h', // ttlSecondsUntilExpired 2592000 s = 30 days
          },
        },
        // consolidation.enabled + ttlSecondsAfterEmpty 30: consolidation, no sooner than 30 s.
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets: [{ nodes: '10%' }] },
        limits: { cpu: '1000', memory: '1000Gi' },
        weight: 10,
      },
    });
  });

  it('generates an EC2NodeClass from provider {} and kubeletConfiguration', () => {
    expect(objects[1]).toEqual({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiFamily: 'AL2',
        amiSelectorTerms: [{ alias: 'al2@latest' }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'REPLACE_WITH_CLUSTER_NAME' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'REPLACE_WITH_CLUSTER_NAME' } }],
        kubelet: { clusterDNS: ['10.0.1.100'], maxPods: 20, systemReserved: { cpu: '1', memory: '5Gi', 'ephemeral-storage': '2Gi' } },
        metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'required' },
      },
    });
    expect(objects).toHaveLength(2);
  });

  it('warns about the mutually exclusive pair, the dropped runtime and the placeholder selectors', () => {
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^spec\.ttlSecondsAfterEmpty: consolidation\.enabled and ttlSecondsAfterEmpty are mutually exclusive/),
        expect.stringMatching(/^spec\.kubeletConfiguration\.containerRuntime: dropped \(containerd\)/),
        expect.stringMatching(/^spec\.provider\.subnetSelector: not set/),
        expect.stringMatching(/^spec\.provider\.securityGroupSelector: not set/),
      ]),
    );
  });
});
