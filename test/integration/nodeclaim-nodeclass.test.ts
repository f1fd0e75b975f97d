/**
 * Issue 13 step 4: a claim's predicted allocatable and its joined Node's agree, because
 * both come from the EC2NodeClass's kubelet settings and root volume — the prediction
 * through the instance types autonode launches from, the Node through the userData the
 * instance booted from (the cluster's Ignition config with the class's kubelet drop-in,
 * merged at launch). A userData that does not authenticate never becomes a Node.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { bootFromIgnition, nodeIgnition } from '../../core/enablement/ignition';
import { localNodeUserData } from '../../dev/autonode/node-ignition';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { clusterAccessOf, instanceUserData, providerIdOf } from '../../dev/simkubelet';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

const RESOURCES = ['cpu', 'memory', 'pods', 'ephemeral-storage'] as const;
const pick = (list: Record<string, string> | undefined) => Object.fromEntries(RESOURCES.map((k) => [k, list?.[k]]));

describe('a NodeClaim of an EC2NodeClass with kubelet settings and a 200Gi root volume', () => {
  let lh: LifecycleHarness;
  const tunedClass = () => `lc-${lh.id}-tuned`;
  const wrongClass = () => `lc-${lh.id}-wrong`;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
    // what HyperShift publishes for the cluster (and the enablement reconciles into each class)
    const userData = await localNodeUserData(lh.guest);
    await ensureCustomNodeClass(lh.guest, {
      name: tunedClass(),
      discoveryTag: lh.h.fixtures.discoveryTag,
      amiSelectorTerms: [{ id: lh.h.fixtures.imageId }],
      userData,
      spec: {
        kubelet: { maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' }, evictionHard: { 'memory.available': '200Mi' } },
        blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '200Gi', volumeType: 'gp3', encrypted: true } }],
        metadataOptions: { httpPutResponseHopLimit: 2, httpTokens: 'required' },
        detailedMonitoring: true,
        tags: { 'cost-center': 'ocp-42' },
      },
    });
    // the same cluster and CA, a token the API server never issued (no enablement corrects it here)
    const access = clusterAccessOf(lh.guest.config);
    await ensureCustomNodeClass(lh.guest, {
      name: wrongClass(),
      discoveryTag: lh.h.fixtures.discoveryTag,
      amiSelectorTerms: [{ id: lh.h.fixtures.imageId }],
      userData: nodeIgnition({ server: access.server, caPem: access.caPem, token: 'not-a-token-the-cluster-issued' }),
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

    // the instance booted from the class's userData with the class's kubelet settings merged in
    const instanceId = claim.status?.providerID?.split('/').pop() ?? '';
    const instance = (await lh.h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0];
    const tags = Object.fromEntries((instance?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toEqual(expect.objectContaining({ 'cost-center': 'ocp-42', 'autonode.io/root-volume-size': '200Gi' }));
    const booted = bootFromIgnition((await instanceUserData(lh.h.direct)(instanceId)) ?? '');
    expect(booted.ok && booted.node.kubelet).toEqual({ maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' }, evictionHard: { 'memory.available': '200Mi' } });

    await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
    await handle.result();
  });

  it('an instance whose userData does not authenticate never becomes a Node', async () => {
    const name = `lc-${lh.id}-wrong`;
    const uid = await lh.createNodeClaim(name, { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: wrongClass() } });
    const handle = await lh.startLifecycle(name, uid);
    const launched = await eventually('the claim to be Launched', async () => {
      const c = await lh.claims.get(name);
      return c?.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') && c.status.providerID ? c : undefined;
    });
    const instanceId = launched.status?.providerID?.split('/').pop() ?? '';
    // its kubelet starts, and fails: the API server does not know the token (401 on its CSR)
    const failed = await eventually('the kubelet on the instance to fail', async () => (lh.fleet.kubeletFor(instanceId)?.phase === 'failed' ? true : undefined), 60_000);
    expect(failed).toBe(true);
    // … so no Node carries its providerID, and the claim is not Registered
    const zone = launched.metadata.labels?.['topology.kubernetes.io/zone'] ?? '';
    const nodes = (await lh.guest.core.listNode()).items.filter((n) => n.spec?.providerID === providerIdOf({ zone, instanceId }));
    expect(nodes).toEqual([]);
    const claim = await lh.claims.get(name);
    expect(claim?.status?.conditions?.find((x) => x.type === 'Registered')?.status).not.toBe('True');
    await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
    await handle.result();
  });
});
