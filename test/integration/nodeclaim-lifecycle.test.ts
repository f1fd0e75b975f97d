import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { PolicyV1Api, KubeConfig } from '@kubernetes/client-node';
import { type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { createEc2ClientFactory, endpointPolicyFromEnv, staticCredentialsProvider } from '../../activities/cloud';
import { staticClusterResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { NodeClaimStore } from '../../activities/kube/nodeclaims';
import { nodeClaimWorkflowId, type NodeClaimResult, type NodeClaimStatusView, type NodeClaimWorkflowInput } from '../../core/lifecycle';
import { bootstrapIdentitySource, catalogNodeShapes, clusterAccessOf, SimulatedKubeletFleet } from '../../starter/simkubelet';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import { startCloudHarness, type CloudHarness } from '../support/cloud';
import { installCrds } from '../support/crds';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from '../support/temporal';

const stack = loadStackInfo();
const id = randomUUID().slice(0, 6);

async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

describe('NodeClaim lifecycle workflow (Temporal + guest kube-apiserver + moto + simulated kubelets)', () => {
  let h: CloudHarness;
  let t: TemporalHarness;
  let guest: KubeClients;
  let claims: NodeClaimStore;
  let workers: Worker[];
  let running: Promise<void>;
  let fleet: SimulatedKubeletFleet;
  /** NodeClaims whose instance must never register (registration-timeout test) */
  const silent = new Set<string>();
  const nodeClassName = `lc-${id}`;

  beforeAll(async () => {
    await installCrds(stack.guest.kubeconfigPath);
    h = await startCloudHarness();
    t = await temporalHarness();
    guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
    claims = new NodeClaimStore(guest);
    await guest.customObjects.createClusterCustomObject({
      group: 'karpenter.k8s.aws',
      version: 'v1',
      plural: 'ec2nodeclasses',
      body: {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: nodeClassName },
        spec: {
          amiFamily: 'Custom',
          subnetSelectorTerms: [{ tags: h.fixtures.discoveryTag }],
          securityGroupSelectorTerms: [{ tags: h.fixtures.discoveryTag }],
          amiSelectorTerms: [{ id: h.fixtures.imageId }],
          userData: '#!/bin/bash\necho join\n',
        },
      },
    });
    const ec2ClientFor = createEc2ClientFactory({
      endpoint: h.proxy.endpoint,
      credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
      endpointPolicy: endpointPolicyFromEnv(process.env),
    });
    workers = await createAutonodeWorkers({
      connection: t.connection,
      namespace: t.namespace,
      resolve: staticClusterResolver({ guestKubeconfigPath: stack.guest.kubeconfigPath, ec2ClientFor }),
      workflows: { workflowBundle: workflowBundle() },
    });
    running = runWorkers(workers);
    const kc = new KubeConfig();
    kc.loadFromFile(stack.guest.kubeconfigPath);
    const bootstrap = bootstrapIdentitySource(guest);
    fleet = new SimulatedKubeletFleet({
      listInstances: async () => (await h.provider.list()).filter((i) => !silent.has(i.tags['karpenter.sh/nodeclaim'] ?? '')),
      guest: clusterAccessOf(kc),
      bootstrap: async () => (await bootstrap()).kubeConfig,
      shapeOf: catalogNodeShapes(stack.ec2.region),
      pollMs: 500,
    });
    fleet.start();
  });

  afterAll(async () => {
    await fleet?.stop();
    for (const w of workers ?? []) w.shutdown();
    await running;
    await t?.close();
    await h?.close();
  });

  async function createNodeClaim(name: string): Promise<string> {
    const created = await guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodeclaims',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name, labels: { 'karpenter.sh/nodepool': 'default' } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClassName },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          expireAfter: 'Never',
        },
      },
    });
    const claim = await claims.get(name);
    expect(created).toBeDefined();
    if (!claim) throw new Error(`NodeClaim ${name} not readable after create`);
    return claim.metadata.uid;
  }

  async function startLifecycle(name: string, uid: string, timeouts: NodeClaimWorkflowInput['timeouts'] = {}) {
    const input: NodeClaimWorkflowInput = {
      cluster: { name: h.cluster.name, region: h.cluster.region },
      nodeClaim: { name, uid },
      timeouts: { resync: '1s', steadyResync: '2s', ...timeouts },
    };
    return t.client.workflow.start('nodeClaimWorkflow', {
      taskQueue: 'autonode-control',
      workflowId: nodeClaimWorkflowId(h.cluster.name, name),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [input],
    });
  }

  async function instanceState(instanceId: string): Promise<string | undefined> {
    const out = await h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
  }

  it('launches, approves both kubelet CSRs, registers and initializes; `kubectl delete node` then drains and terminates', async () => {
    const name = `lc-${id}-happy`;
    const uid = await createNodeClaim(name);
    const handle = await startLifecycle(name, uid);

    const claim = await eventually('Launched, Registered and Initialized to be True', async () => {
      const c = await claims.get(name);
      const ok = ['Launched', 'Registered', 'Initialized'].every((type) => c?.status?.conditions?.some((x) => x.type === type && x.status === 'True'));
      return ok ? c : undefined;
    });
    expect(claim.status?.providerID).toMatch(/^aws:\/\/\/us-east-1[a-c]\/i-[0-9a-f]+$/);
    expect(claim.metadata.finalizers).toContain('karpenter.sh/termination');
    expect(claim.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('m5.large'); // the cheapest allowed type
    // amiFamily Custom = an OpenShift kubelet (openshift-static): 2 vCPU − 500m systemReserved, maxPods 250
    expect(claim.status?.allocatable).toEqual(expect.objectContaining({ cpu: '1500m', pods: '250' }));
    const nodeName = claim.status?.nodeName;
    if (!nodeName) throw new Error('no nodeName on the claim');

    const node = await guest.core.readNode({ name: nodeName });
    expect(node.spec?.providerID).toBe(claim.status?.providerID);
    expect(node.metadata?.labels).toEqual(
      expect.objectContaining({ 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true', 'karpenter.sh/nodepool': 'default' }),
    );
    expect(node.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/unregistered' }));
    expect(node.metadata?.finalizers).toContain('karpenter.sh/termination');
    expect(node.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([`NodeClaim/${name}`]);

    // Both kubelet certificates were approved by autonode, and nobody else.
    const csrs = await eventually('client and serving CSRs approved', async () => {
      const list = (await guest.certificates.listCertificateSigningRequest()).items.filter((c) => c.spec.username === `system:node:${nodeName}` || c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
      const mine = list.filter((c) => c.status?.conditions?.some((x) => x.message?.includes(name)));
      const signers = mine.map((c) => c.spec.signerName).sort();
      return signers.includes('kubernetes.io/kubelet-serving') && signers.includes('kubernetes.io/kube-apiserver-client-kubelet') ? mine : undefined;
    });
    for (const csr of csrs) {
      expect(csr.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([['Approved', 'AutoNodeApproved']]);
    }

    const status = await handle.query<NodeClaimStatusView>('status');
    expect(status.phase).toBe('Initialized');
    expect(status.instance?.instanceType).toBe('m5.large');
    const found = await eventually('the workflow to be findable by cluster and phase', async () => {
      const ids: string[] = [];
      for await (const wf of t.client.workflow.list({ query: `AutoNodeCluster = "${h.cluster.name}" AND AutoNodePhase = "Initialized" AND InstanceType = "m5.large"` })) ids.push(wf.workflowId);
      return ids.length > 0 ? ids : undefined;
    });
    expect(found).toEqual([nodeClaimWorkflowId(h.cluster.name, name)]);

    const events = await guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
    expect(events.items.map((e) => e.reason)).toEqual(expect.arrayContaining(['Launched', 'Registered', 'Initialized']));

    // kubectl delete node: our finalizer holds the Node until the workflow has terminated.
    await guest.core.deleteNode({ name: nodeName });
    const result = await handle.result();
    expect(result.end).toEqual({ kind: 'deleted', by: 'node' });
    const instanceId = status.instance?.instanceId ?? '';
    expect(await instanceState(instanceId)).toMatch(/shutting-down|terminated/);
    await eventually('the Node to be gone', async () => (await guest.core.listNode()).items.every((n) => n.metadata?.name !== nodeName));
    expect(await claims.get(name)).toBeUndefined();
  });

  it('terminates the instance and deletes the claim when the node never registers', async () => {
    const name = `lc-${id}-silent`;
    silent.add(name);
    const uid = await createNodeClaim(name);
    const handle = await startLifecycle(name, uid, { registration: '4s' });
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'registrationTimeout' });
    expect(await instanceState(result.instance?.instanceId ?? '')).toMatch(/shutting-down|terminated/);
    expect(await claims.get(name)).toBeUndefined();
    const events = await guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
    const warning = events.items.find((e) => e.type === 'Warning');
    expect(warning?.message).toMatch(/did not register within the registration timeout/);
  });

  it('holds the drain while a PodDisruptionBudget refuses eviction, then finishes when it allows it', async () => {
    const name = `lc-${id}-pdb`;
    const uid = await createNodeClaim(name);
    const handle = await startLifecycle(name, uid);
    const nodeName = await eventually('the node to be initialized', async () => {
      const c = await claims.get(name);
      return c?.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ? c.status?.nodeName : undefined;
    });
    const namespace = `pdb-${id}`;
    await guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    await guest.core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'guarded', labels: { app: 'guarded' } }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] } },
    });
    await eventually('kwok to run the pod', async () => (await guest.core.readNamespacedPod({ namespace, name: 'guarded' })).status?.phase === 'Running');
    const policy = guest.config.makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: 'keep-one' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } } });
    await eventually('the PDB to observe the pod', async () => (await policy.readNamespacedPodDisruptionBudget({ namespace, name: 'keep-one' })).status?.currentHealthy === 1);

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test: drain behind a PDB' }] });
    const blocked = await eventually('the drain to report the PDB', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Draining' && s.lastError?.includes('PodDisruptionBudget') ? s : undefined;
    });
    expect(blocked.lastError).toContain(`${namespace}/guarded`);
    const drained = (await claims.get(name))?.status?.conditions?.find((c) => c.type === 'Drained');
    expect(drained).toEqual(expect.objectContaining({ status: 'False', reason: 'Draining' }));
    expect((await guest.core.readNode({ name: nodeName })).spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));
    // still held a few seconds later
    await new Promise((r) => setTimeout(r, 3000));
    expect((await handle.query<NodeClaimStatusView>('status')).phase).toBe('Draining');

    await policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'keep-one' });
    const result = await handle.result();
    expect(result.end).toEqual({ kind: 'disrupted', reason: 'test: drain behind a PDB' });
    expect(await claims.get(name)).toBeUndefined();
  });
});
