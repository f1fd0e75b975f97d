/**
 * Issue 13 step 4: a claim's predicted allocatable and its joined Node's agree, because
 * both come from the EC2NodeClass's kubelet settings and root volume — the prediction
 * through the instance types autonode launches from, the Node through the settings the
 * instance was launched with (the simulated kubelet reads them from the instance, as a
 * real kubelet reads its configuration from what the machine booted with).
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

const RESOURCES = ['cpu', 'memory', 'pods', 'ephemeral-storage'] as const;
const pick = (list: Record<string, string> | undefined) => Object.fromEntries(RESOURCES.map((k) => [k, list?.[k]]));

describe('a NodeClaim of an EC2NodeClass with kubelet settings and a 200Gi root volume', () => {
  let lh: LifecycleHarness;
  const tunedClass = () => `lc-${lh.id}-tuned`;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
    await ensureCustomNodeClass(lh.guest, {
      name: tunedClass(),
      discoveryTag: lh.h.fixtures.discoveryTag,
      amiSelectorTerms: [{ id: lh.h.fixtures.imageId }],
      userData: '#!/bin/bash\necho join\n',
      spec: {
        kubelet: { maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' }, evictionHard: { 'memory.available': '200Mi' } },
        blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '200Gi', volumeType: 'gp3', encrypted: true } }],
        metadataOptions: { httpPutResponseHopLimit: 2, httpTokens: 'required' },
        detailedMonitoring: true,
        tags: { 'cost-center': 'ocp-42' },
      },
    });
  });
  afterAll(async () => {
    await lh?.close();
  });

  it('joins a Node whose allocatable is the claim’s: cpu, memory, pods and ephemeral storage', async () => {
    const name = `lc-${lh.id}-tuned`;
    const uid = await lh.createNodeClaim(name, { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: tunedClass() } });
    const handle = await lh.startLifecycle(name, uid);
    const claim = await eventually('the claim to be Initialized', async () => {
      const c = await lh.claims.get(name);
      return c?.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ? c : undefined;
    });
    // m5.large under an OpenShift kubelet with the class's settings: 2 − 0.6 cpu, maxPods 110
    expect(claim.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('m5.large');
    expect(claim.status?.allocatable).toEqual(expect.objectContaining({ cpu: '1400m', pods: '110' }));

    const node = await lh.guest.core.readNode({ name: claim.status?.nodeName ?? '' });
    expect(pick(node.status?.allocatable)).toEqual(pick(claim.status?.allocatable));
    expect(pick(node.status?.capacity)).toEqual(pick(claim.status?.capacity));

    // the instance was launched with the class's settings (the tags it boots from)
    const instanceId = claim.status?.providerID?.split('/').pop() ?? '';
    const instance = (await lh.h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0];
    const tags = Object.fromEntries((instance?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toEqual(expect.objectContaining({ 'cost-center': 'ocp-42', 'autonode.io/kubelet-max-pods': '110', 'autonode.io/root-volume-size': '200Gi' }));

    await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
    await handle.result();
  });
});
