import { z } from 'zod';
import { AppsV1Api, PolicyV1Api, StorageV1Api } from '@kubernetes/client-node';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { nodeClaimWorkflowId, type NodeClaimResult, type NodeClaimStatusView } from '../../core/lifecycle';
import { recordHistory } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

const RESOURCES = ['cpu', 'memory', 'pods', 'ephemeral-storage'] as const;
const pick = (list: Record<string, string> | undefined, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, list?.[k]]));

describe('NodeClaim lifecycle workflow (Temporal + guest kube-apiserver + moto + simulated kubelets)', () => {
  let lh: LifecycleHarness;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
  });
  afterAll(async () => {
    await lh?.close();
  });

  it('launches, approves both kubelet CSRs, registers and initializes; `kubectl delete node` then drains and terminates', async () => {
    const name = `lc-${lh.id}-happy`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);

    const claim = await eventually('Launched, Registered and Initialized to be True', async () => {
      const c = await lh.claims.get(name);
      const ok = ['Launched', 'Registered', 'Initialized'].every((type) => c?.status?.conditions?.some((x) => x.type === type && x.status === 'True'));
      return ok ? c : undefined;
    });
    expect(claim.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True'); // kubectl's READY column
    expect(claim.status?.providerID).toMatch(/^aws:\/\/\/us-east-1[a-c]\/i-[0-9a-f]+$/);
    expect(claim.metadata.finalizers).toContain('karpenter.sh/termination');
    expect(claim.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('m5.large'); // the cheapest allowed type
    // amiFamily Custom = an OpenShift kubelet (openshift-static): 2 vCPU − 500m systemReserved, maxPods 250
    expect(claim.status?.allocatable).toEqual(expect.objectContaining({ cpu: '1500m', pods: '250' }));
    const nodeName = claim.status?.nodeName;
    if (!nodeName) throw new Error('no nodeName on the claim');

    const node = await lh.guest.core.readNode({ name: nodeName });
    expect(node.spec?.providerID).toBe(claim.status?.providerID);
    // the kubelet reports what autonode predicted: it booted with the settings the prediction used
    expect(pick(node.status?.allocatable, RESOURCES)).toEqual(pick(claim.status?.allocatable, RESOURCES));
    expect(node.metadata?.labels).toEqual(
      expect.objectContaining({ 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true', 'karpenter.sh/nodepool': 'default' }),
    );
    expect(node.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/unregistered' }));
    expect(node.metadata?.finalizers).toContain('karpenter.sh/termination');
    expect(node.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([`NodeClaim/${name}`]);

    // Both kubelet certificates were approved by autonode, and nobody else.
    const csrs = await eventually('client and serving CSRs approved', async () => {
      const list = (await lh.guest.certificates.listCertificateSigningRequest()).items.filter((c) => c.spec.username === `system:node:${nodeName}` || c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
      const mine = list.filter((c) => c.status?.conditions?.some((x) => x.message?.includes(name)));
      const signers = mine.map((c) => c.spec.signerName).sort();
      return signers.includes('kubernetes.io/kubelet-serving') && signers.includes('kubernetes.io/kube-apiserver-client-kubelet') ? mine : undefined;
    });
    for (const csr of csrs) {
      expect(csr.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([['Approved', 'AutoNodeApproved']]);
    }

    // the EC2NodeClass says what it resolved to
    const nodeClass = z
      .object({
        status: z.object({
          conditions: z.array(z.object({ type: z.string(), status: z.string() })),
          subnets: z.array(z.object({ id: z.string(), zone: z.string() })),
          amis: z.array(z.object({ id: z.string() })),
        }),
      })
      .parse(await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: lh.nodeClassName }));
    expect(nodeClass.status.conditions.filter((c) => c.status === 'True').map((c) => c.type).sort()).toEqual(['AMIsReady', 'Ready', 'SecurityGroupsReady', 'SubnetsReady', 'ValidationSucceeded']);
    expect(nodeClass.status.subnets.map((s) => s.zone).sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    expect(nodeClass.status.amis.map((a) => a.id)).toEqual([lh.h.fixtures.imageId]);

    const status = await handle.query<NodeClaimStatusView>('status');
    expect(status.phase).toBe('Initialized');
    expect(status.instance?.instanceType).toBe('m5.large');
    const found = await eventually('the workflow to be findable by cluster and phase', async () => {
      const ids: string[] = [];
      for await (const wf of lh.t.client.workflow.list({ query: `AutoNodeCluster = "${lh.h.cluster.name}" AND AutoNodePhase = "Initialized" AND InstanceType = "m5.large"` })) ids.push(wf.workflowId);
      return ids.length > 0 ? ids : undefined;
    });
    expect(found).toEqual([nodeClaimWorkflowId(lh.h.cluster.name, name)]);

    const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
    expect(events.items.map((e) => e.reason)).toEqual(expect.arrayContaining(['Launched', 'Registered', 'Initialized']));

    // kubectl delete node: our finalizer holds the Node until the workflow has terminated.
    await lh.guest.core.deleteNode({ name: nodeName });
    const result = await handle.result();
    expect(result.end).toEqual({ kind: 'deleted', by: 'node' });
    // Refreshes the committed history that test/unit/replay.test.ts replays (npm run
    // record:histories, after a deliberate, patched() change to the workflow).
    // (nodeclaim-v1-*.json are runs of the first shape, kept to replay through its frozen code.)
    await recordHistory('nodeclaim-happy-path', () => handle.fetchHistory());
    const instanceId = status.instance?.instanceId ?? '';
    expect(await lh.instanceState(instanceId)).toMatch(/shutting-down|terminated/);
    await eventually('the Node to be gone', async () => (await lh.guest.core.listNode()).items.every((n) => n.metadata?.name !== nodeName));
    expect(await lh.claims.get(name)).toBeUndefined();
  });

  it('terminates the instance and deletes the claim when the node never registers', async () => {
    const name = `lc-${lh.id}-silent`;
    lh.silent.add(name);
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid, { registration: '4s' });
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'registrationTimeout' });
    expect(await lh.instanceState(result.instance?.instanceId ?? '')).toMatch(/shutting-down|terminated/);
    expect(await lh.claims.get(name)).toBeUndefined();
    const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
    const warning = events.items.find((e) => e.type === 'Warning');
    expect(warning?.message).toMatch(/did not register within the registration timeout/);
  });

  it('holds the drain while a PodDisruptionBudget refuses eviction, then finishes when it allows it', async () => {
    const name = `lc-${lh.id}-pdb`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);
    const nodeName = await eventually('the node to be initialized', async () => {
      const c = await lh.claims.get(name);
      return c?.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ? c.status?.nodeName : undefined;
    });
    const namespace = `pdb-${lh.id}`;
    await lh.createNamespace(namespace);
    await lh.guest.core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'guarded', labels: { app: 'guarded' } }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] } },
    });
    await eventually('kwok to run the pod', async () => (await lh.guest.core.readNamespacedPod({ namespace, name: 'guarded' })).status?.phase === 'Running');
    const policy = lh.guest.config.makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: 'keep-one' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } } });
    await eventually('the PDB to observe the pod', async () => (await policy.readNamespacedPodDisruptionBudget({ namespace, name: 'keep-one' })).status?.currentHealthy === 1);

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test: drain behind a PDB' }] });
    const blocked = await eventually('the drain to report the PDB', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Draining' && s.lastError?.includes('PodDisruptionBudget') ? s : undefined;
    });
    expect(blocked.lastError).toContain(`${namespace}/guarded`);
    const drained = (await lh.claims.get(name))?.status?.conditions?.find((c) => c.type === 'Drained');
    expect(drained).toEqual(expect.objectContaining({ status: 'False', reason: 'Draining' }));
    expect((await lh.guest.core.readNode({ name: nodeName })).spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));
    // still held a few seconds later
    await new Promise((r) => setTimeout(r, 3000));
    expect((await handle.query<NodeClaimStatusView>('status')).phase).toBe('Draining');

    await policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'keep-one' });
    const result = await handle.result();
    expect(result.end).toEqual({ kind: 'disrupted', reason: 'test: drain behind a PDB' });
    expect(await lh.claims.get(name)).toBeUndefined();
  });

  async function initializedNode(name: string): Promise<{ nodeName: string; instanceId: string }> {
    return eventually('the node to be initialized', async () => {
      const c = await lh.claims.get(name);
      const ok = c?.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True');
      const instanceId = c?.status?.providerID?.split('/').pop();
      return ok && c?.status?.nodeName && instanceId ? { nodeName: c.status.nodeName, instanceId } : undefined;
    });
  }

  it('denies forged CSRs naming its node, each with the failed check and a karpenter Event', async () => {
    const name = `lc-${lh.id}-forged`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);
    const { instanceId } = await initializedNode(name);
    const kubelet = lh.fleet.kubeletFor(instanceId);
    if (!kubelet) throw new Error(`no simulated kubelet for ${instanceId}`);

    const forged = {
      'foreign-ip-san': await kubelet.forgeCsr('foreign-ip-san'),
      'extra-usages': await kubelet.forgeCsr('extra-usages'),
      'second-client-csr': await kubelet.forgeCsr('second-client-csr'),
    };
    // what the watcher does for each new CSR naming one of our nodes
    for (const csr of Object.values(forged)) await handle.signal('csrCreated', csr);

    const expected: Record<keyof typeof forged, RegExp> = {
      'foreign-ip-san': /^ipSan: /,
      'extra-usages': /^usages: /,
      'second-client-csr': /^notYetRegistered: /,
    };
    for (const [kind, csrName] of Object.entries(forged) as [keyof typeof forged, string][]) {
      const csr = await eventually(`${kind} to be decided`, async () => {
        const c = await lh.guest.certificates.readCertificateSigningRequest({ name: csrName });
        return c.status?.conditions?.length ? c : undefined;
      });
      expect(csr.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([['Denied', 'AutoNodeDenied']]);
      expect(csr.status?.conditions?.[0]?.message).toMatch(expected[kind]);
      expect(csr.status?.certificate).toBeFalsy();
      const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${csrName}` });
      expect(events.items.map((e) => [e.type, e.reason])).toEqual([['Warning', 'CSRDenied']]);
    }
    await handle.executeUpdate('disrupt', { args: [{ reason: 'test done' }] });
    await handle.result();
  });

  it('waits for a do-not-disrupt pod until terminationGracePeriod, then deletes it and terminates', async () => {
    const name = `lc-${lh.id}-dnd`;
    const uid = await lh.createNodeClaim(name, { terminationGracePeriod: '12s' });
    const handle = await lh.startLifecycle(name, uid);
    const { nodeName } = await initializedNode(name);
    const namespace = `dnd-${lh.id}`;
    await lh.createNamespace(namespace);
    await lh.guest.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'precious', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
        spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    await eventually('kwok to run the pod', async () => (await lh.guest.core.readNamespacedPod({ namespace, name: 'precious' })).status?.phase === 'Running');

    const disruptedAt = Date.now();
    await handle.executeUpdate('disrupt', { args: [{ reason: 'test: do-not-disrupt until the deadline' }] });
    const waiting = await eventually('the drain to wait for the do-not-disrupt pod', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Draining' && s.lastError?.includes('do-not-disrupt') ? s : undefined;
    });
    expect(waiting.lastError).toContain(`${namespace}/precious`);
    // the pod is untouched while the grace period runs
    await new Promise((r) => setTimeout(r, 4000));
    const pod = await lh.guest.core.readNamespacedPod({ namespace, name: 'precious' });
    expect(pod.metadata?.deletionTimestamp).toBeUndefined();

    const result = await handle.result();
    expect(result.end).toEqual({ kind: 'disrupted', reason: 'test: do-not-disrupt until the deadline' });
    // not before the grace period ran out
    expect(Date.now() - disruptedAt).toBeGreaterThanOrEqual(12_000);
    await eventually('the pod to be gone', async () => (await lh.guest.core.listNamespacedPod({ namespace })).items.length === 0);
  });

  it('ends with a typed insufficient-capacity result, and deletes the claim, when every allowed offering is exhausted', async () => {
    const name = `lc-${lh.id}-ice`;
    const pools = ['m5.large', 'm5.xlarge'].flatMap((instanceType) =>
      ['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone) => ({ instanceType, zone, capacityType: 'on-demand' as const })),
    );
    lh.h.proxy.exhaust(pools);
    try {
      const uid = await lh.createNodeClaim(name);
      const result: NodeClaimResult = await (await lh.startLifecycle(name, uid)).result();
      expect(result.end.kind).toBe('insufficientCapacity');
      if (result.end.kind !== 'insufficientCapacity') return;
      expect(result.end.offerings.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`).sort()).toEqual(
        pools.map((p) => `${p.instanceType}/${p.zone}/${p.capacityType}`).sort(),
      );
      expect(result.instance).toBeUndefined();
      expect(await lh.claims.get(name)).toBeUndefined();
      const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
      expect(events.items.find((e) => e.type === 'Warning')?.message).toMatch(/insufficient capacity for m5\.large\/us-east-1a\/on-demand/);
    } finally {
      lh.h.proxy.reset();
    }
  });

  it('continues as new in the steady state and carries the node over', async () => {
    // The test stack suggests continue-as-new at 150 history events (global-setup.ts).
    const name = `lc-${lh.id}-can`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);
    const { nodeName, instanceId } = await initializedNode(name);
    const first = (await handle.describe()).runId;
    const later = await eventually('a continued-as-new run', async () => {
      const d = await handle.describe();
      return d.runId !== first && d.status.name === 'RUNNING' ? d : undefined;
    }, 120_000);
    expect(later.runId).not.toBe(first);
    const status = await handle.query<NodeClaimStatusView>('status');
    expect(status).toEqual(expect.objectContaining({ phase: 'Initialized', nodeName }));
    expect(status.instance?.instanceId).toBe(instanceId);
    const firstRun = await lh.t.client.workflow.getHandle(handle.workflowId, first).fetchHistory();
    expect(firstRun.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();

    // the new run still owns the node's end
    await lh.guest.core.deleteNode({ name: nodeName });
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'deleted', by: 'node' });
    expect(await lh.instanceState(instanceId)).toMatch(/shutting-down|terminated/);
  });

  it('expires after expireAfter: drains and terminates on its own', async () => {
    const name = `lc-${lh.id}-expire`;
    const uid = await lh.createNodeClaim(name, { expireAfter: '15s' });
    const handle = await lh.startLifecycle(name, uid);
    const { instanceId } = await initializedNode(name);
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'expired' });
    expect(await lh.instanceState(instanceId)).toMatch(/shutting-down|terminated/);
    expect(await lh.claims.get(name)).toBeUndefined();
  });

  it('keeps the instance until the node\'s VolumeAttachments are gone', async () => {
    const name = `lc-${lh.id}-volumes`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);
    const { nodeName, instanceId } = await initializedNode(name);
    const storage = lh.guest.config.makeApiClient(StorageV1Api);
    const attachment = `va-${lh.id}`;
    await storage.createVolumeAttachment({
      body: { metadata: { name: attachment }, spec: { attacher: 'ebs.csi.aws.com', nodeName, source: { persistentVolumeName: `pv-${lh.id}` } } },
    });

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test: volumes' }] });
    const waiting = await eventually('the termination to wait for the volume', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.lastError?.includes(attachment) ? s : undefined;
    });
    expect(waiting.phase).toBe('Draining');
    const condition = (await lh.claims.get(name))?.status?.conditions?.find((c) => c.type === 'VolumesDetached');
    expect(condition).toEqual(expect.objectContaining({ status: 'False', message: attachment }));
    expect(await lh.instanceState(instanceId)).toBe('running');

    await storage.deleteVolumeAttachment({ name: attachment });
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'disrupted', reason: 'test: volumes' });
    expect(await lh.instanceState(instanceId)).toMatch(/shutting-down|terminated/);
  });

  it('ends a claim no instance type can satisfy, with the reason on an Event, instead of holding it forever', async () => {
    const name = `lc-${lh.id}-impossible`;
    const uid = await lh.createNodeClaim(name, { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['x9.impossible'] }] });
    const result: NodeClaimResult = await (await lh.startLifecycle(name, uid)).result();
    expect(result.end.kind).toBe('launchFailed');
    expect(result.instance).toBeUndefined();
    expect(await lh.claims.get(name)).toBeUndefined();
    const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
    expect(events.items.find((e) => e.type === 'Warning')?.message).toMatch(/launch failed: no instance type .*x9\.impossible/);
  });

  it('drains in tiers: ordinary pods, then DaemonSet pods, then critical pods', async () => {
    const name = `lc-${lh.id}-tiers`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid);
    const { nodeName } = await initializedNode(name);
    const namespace = `tiers-${lh.id}`;
    await lh.createNamespace(namespace);
    const container = [{ name: 'c', image: 'busybox' }];
    await lh.guest.core.createNamespacedPod({ namespace, body: { metadata: { name: 'app' }, spec: { nodeName, containers: container } } });
    // system-*-critical priority classes are admitted only in kube-system
    await lh.guest.core.createNamespacedPod({
      namespace: 'kube-system',
      body: { metadata: { name: `crit-${lh.id}` }, spec: { nodeName, priorityClassName: 'system-node-critical', containers: container } },
    });
    // a real DaemonSet: the controller-manager puts its pod on our node
    await lh.guest.config.makeApiClient(AppsV1Api).createNamespacedDaemonSet({
      namespace,
      body: {
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: { metadata: { labels: { app: 'agent' } }, spec: { nodeSelector: { 'kubernetes.io/hostname': nodeName }, containers: container } },
        },
      },
    });
    const podsOnNode = async () => (await lh.guest.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })).items;
    await eventually('all three pods to run on the node', async () => {
      const running = (await podsOnNode()).filter((p) => p.status?.phase === 'Running');
      return running.length === 3 ? running : undefined;
    });

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test: tiers' }] });
    const goneOrder: string[] = [];
    const tierOf = (ns: string | undefined, podName: string | undefined) => (ns === 'kube-system' ? 'critical' : podName?.startsWith('agent-') ? 'daemonset' : 'ordinary');
    let present = new Set((await podsOnNode()).map((p) => `${tierOf(p.metadata?.namespace, p.metadata?.name)}`));
    await eventually('the node to be drained', async () => {
      const now = new Set((await podsOnNode()).map((p) => `${tierOf(p.metadata?.namespace, p.metadata?.name)}`));
      // tiers vanishing in the same poll are recorded together, so evicting everything at
      // once cannot pass for tiered eviction
      const vanished = [...present].filter((tier) => !now.has(tier)).sort();
      if (vanished.length > 0) goneOrder.push(vanished.join('+'));
      present = now;
      return now.size === 0 ? true : undefined;
    });
    expect(goneOrder).toEqual(['ordinary', 'daemonset', 'critical']);
    await handle.result();
  });

  describe('a node class with an x86_64 and an arm64 AMI', () => {
    const multiArchClass = () => `lc-${lh.id}-multiarch`;
    beforeAll(async () => {
      await ensureCustomNodeClass(lh.guest, {
        name: multiArchClass(),
        discoveryTag: lh.h.fixtures.discoveryTag,
        amiSelectorTerms: [{ id: lh.h.fixtures.imageId }, { id: lh.h.fixtures.arm64ImageId }],
      });
    });

    it.each([
      { arch: 'arm64', types: ['t4g.medium', 'm6g.large'], image: () => lh.h.fixtures.arm64ImageId },
      { arch: 'amd64', types: ['m5.large', 'm5.xlarge'], image: () => lh.h.fixtures.imageId },
    ])('launches a claim allowing only $arch types with the $arch AMI', async ({ arch, types, image }) => {
      const name = `lc-${lh.id}-only-${arch}`;
      lh.silent.add(name); // the image is the point here, not the node
      const uid = await lh.createNodeClaim(name, {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: multiArchClass() },
        requirements: [
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: types },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      });
      const handle = await lh.startLifecycle(name, uid, { registration: '10m' });
      const claim = await eventually('the claim to be Launched', async () => {
        const c = await lh.claims.get(name);
        return c?.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') ? c : undefined;
      });

      expect(types).toContain(claim.metadata.labels?.['node.kubernetes.io/instance-type']);
      expect(claim.status?.imageID).toBe(image());
      const instanceId = claim.status?.providerID?.split('/').pop() ?? '';
      const instance = (await lh.h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0];
      expect(instance).toMatchObject({ ImageId: image(), InstanceType: claim.metadata.labels?.['node.kubernetes.io/instance-type'] });

      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
      const result: NodeClaimResult = await handle.result();
      expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    });

    it('boots the x86_64 AMI when a claim allowing both architectures lands on its amd64 type', async () => {
      // t4g.medium is the cheaper; with its pools exhausted EC2 (here: the fault proxy) fills
      // the claim with m5.large, which must not get the arm64 image the cheapest type needs.
      const name = `lc-${lh.id}-mixed-arch`;
      lh.silent.add(name);
      lh.h.proxy.exhaust(['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone) => ({ instanceType: 't4g.medium', zone, capacityType: 'on-demand' as const })));
      try {
        const uid = await lh.createNodeClaim(name, {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: multiArchClass() },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['t4g.medium', 'm5.large'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
        });
        const handle = await lh.startLifecycle(name, uid, { registration: '10m' });
        const claim = await eventually('the claim to be Launched', async () => {
          const c = await lh.claims.get(name);
          return c?.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') ? c : undefined;
        });
        expect(lh.h.proxy.injected).toContainEqual(expect.objectContaining({ kind: 'insufficient-capacity', forwarded: true }));
        expect(claim.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('m5.large');
        expect(claim.status?.imageID).toBe(lh.h.fixtures.imageId);
        const instanceId = claim.status?.providerID?.split('/').pop() ?? '';
        const instance = (await lh.h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0];
        expect(instance).toMatchObject({ ImageId: lh.h.fixtures.imageId, InstanceType: 'm5.large', Architecture: 'x86_64' });

        await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
        expect((await handle.result()).end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
      } finally {
        lh.h.proxy.reset();
      }
    });

    it('says which architecture lacks an AMI when the class has none for any allowed type', async () => {
      const name = `lc-${lh.id}-no-arm-ami`;
      // the harness's own class resolves only the x86_64 AMI
      const uid = await lh.createNodeClaim(name, {
        requirements: [
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['t4g.medium', 'm6g.large'] },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      });
      const handle = await lh.startLifecycle(name, uid);
      const launched = await eventually('the claim to say why it cannot launch', async () => {
        const c = await lh.claims.get(name);
        return c?.status?.conditions?.find((x) => x.type === 'Launched' && x.reason === 'NodeClassNotReady');
      });
      expect(launched.message).toContain(`EC2NodeClass ${lh.nodeClassName} resolved no AMI for arm64, which the instance types NodeClaim ${name} allows need (`);
      expect(launched.message).toMatch(/\(.*m6g\.large.*\)/);
      expect(launched.message).toMatch(/\(.*t4g\.medium.*\)/);
      const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name}` });
      expect(events.items.find((e) => e.reason === 'NodeClassNotReady')?.message).toBe(launched.message);
      expect(await lh.h.provider.findByNodeClaim(name)).toBeUndefined();

      // a claim being deleted stops waiting for the class
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
      await handle.result();
      await eventually('the claim to be released', async () => (await lh.claims.get(name)) === undefined);
    });
  });

  it('notices `kubectl delete nodeclaim` while waiting for registration, without a watcher', async () => {
    const name = `lc-${lh.id}-early-delete`;
    lh.silent.add(name); // the node never registers
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.startLifecycle(name, uid, { registration: '10m' });
    await eventually('the launch', async () => ((await handle.query<NodeClaimStatusView>('status')).phase === 'Launched' ? true : undefined));
    // (were it missed, the 10-minute registration timeout would outlast the test's time)
    await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    expect(await lh.instanceState(result.instance?.instanceId ?? '')).toMatch(/shutting-down|terminated/);
    await eventually('the claim to be released', async () => (await lh.claims.get(name)) === undefined);
  });
});
