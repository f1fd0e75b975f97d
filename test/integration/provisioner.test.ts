// Pending pods become running nodes: the watcher rings the provisioner, a batch plans with
// the packing core on the cloud's catalog, NodeClaims are created like Karpenter's, their
// workflows launch in moto, simulated kubelets join, kube-scheduler binds, kwok runs.
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createProvisionerActivities } from '../../activities/provisioner/activity';
import { type BatchResult, type PlannedBatch } from '../../core/provisioning';
import { z } from 'zod';
import { nodeClaimWorkflowId, provisionerWorkflowId } from '../../core/lifecycle';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { watchWorkflowId } from '../../workflows/watch';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { recordHistory } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(300_000);

describe('provisioner: pending pods become running nodes (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;
  const testTaint = () => ({ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' });

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `prov-${lh.id}`;
    pool = `pool-${lh.id}`;
    await lh.createNamespace(namespace);
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }],
    });
    await createNodePool(pool, lh.nodeClassName, { weight: 10 });
  });
  afterAll(async () => {
    await lh?.close();
  });

  async function createNodePool(name: string, nodeClass: string, options: { weight?: number; limits?: Record<string, string>; types?: string[]; labels?: Record<string, string>; requirements?: { key: string; operator: string; values?: string[] }[] } = {}) {
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name },
        spec: {
          ...(options.weight ? { weight: options.weight } : {}),
          ...(options.limits ? { limits: options.limits } : {}),
          template: {
            metadata: { labels: { 'example.com/team': 'provisioning', ...options.labels } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: options.types ?? ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'c5.large', 'c5.xlarge', 'r5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                ...(options.requirements ?? []),
              ],
              taints: [testTaint()],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  }

  async function deploy(name: string, replicas: number, requests: Record<string, string>, nodeSelector: Record<string, string> = { 'karpenter.sh/nodepool': pool }) {
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              nodeSelector,
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests } }],
            },
          },
        },
      },
    });
  }

  const podsOf = async (app: string): Promise<V1Pod[]> => (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
  const running = (pods: V1Pod[]) => pods.filter((p) => p.status?.phase === 'Running' && p.spec?.nodeName);
  const claimsOf = async (nodePool: string) => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === nodePool);
  const provisioner = () => lh.t.client.workflow.getHandle(provisionerWorkflowId(lh.h.cluster.name));

  it('turns a Deployment that fits nowhere into NodeClaims, nodes and Running pods, with Nominated Events', async () => {
    await deploy('web', 12, { cpu: '500m', memory: '512Mi' });
    await deploy('api', 6, { cpu: '1500m', memory: '2Gi' });
    const pods = await eventually('every pod Running on a node autonode launched', async () => {
      const all = [...(await podsOf('web')), ...(await podsOf('api'))];
      return all.length === 18 && running(all).length === 18 ? all : undefined;
    }, 240_000);

    const claims = await claimsOf(pool);
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) {
      // made like Karpenter's: owned by the pool, its labels and taints, requirements narrowed to ranked options
      expect(claim.metadata.name).toMatch(new RegExp(`^${pool}-[a-z0-9]{5}$`));
      expect(claim.metadata.labels).toEqual(expect.objectContaining({ 'karpenter.sh/nodepool': pool, 'example.com/team': 'provisioning' }));
      expect(claim.metadata.annotations?.['karpenter.sh/nodepool-hash']).toMatch(/^[0-9]+$/);
      expect(claim.spec.taints).toEqual([testTaint()]);
      const types = claim.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type');
      expect(types?.values?.length).toBeGreaterThan(0);
      expect(types?.values?.length).toBeLessThanOrEqual(60);
    }
    // every pod runs on one of this pool's nodes, and no claim was made for nothing
    const nodes = new Set(claims.map((c) => c.status?.nodeName));
    for (const pod of pods) expect(nodes.has(pod.spec?.nodeName)).toBe(true);
    const used = new Set(pods.map((p) => p.spec?.nodeName));
    expect([...nodes].filter((n) => !used.has(n))).toEqual([]);

    // Nominated Events are written in the background (the cluster's event sink): they may trail the pods
    const events = await eventually('a Nominated Event for every pod', async () => {
      const listed = await lh.guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Nominated' });
      const names = new Set(listed.items.map((e) => e.involvedObject.name));
      return pods.every((p) => names.has(p.metadata?.name)) ? listed : undefined;
    }, 60_000).catch(async () => lh.guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Nominated' }));
    const nominated = new Set(events.items.map((e) => e.involvedObject.name));
    for (const pod of pods) expect(nominated.has(pod.metadata?.name)).toBe(true);
    expect(events.items[0]?.message).toMatch(new RegExp(`^Pod should schedule on: nodeclaim/${pool}-`));

    const status = await provisioner().query<ProvisionerStatus>('status');
    expect(status.batches).toBeGreaterThan(0);
    expect(status.lastBatch?.batchId).toBeTruthy();
    // The committed provisioner history of the patched('plan-then-create') path that
    // test/unit/replay.test.ts replays (npm run record:histories, after a deliberate,
    // patched() change to workflows/provisioner.ts).
    await recordHistory('provisioner-plan-then-create', () => provisioner().fetchHistory());

    // kubectl get nodepools: NODES and READY
    const stored = z.object({ status: z.object({ resources: z.record(z.string(), z.string()), conditions: z.array(z.object({ type: z.string(), status: z.string() })) }) })
      .parse(await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: pool }));
    expect(stored.status.resources.nodes).toBe(String(claims.length));
    expect(stored.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
  });

  it('a second Deployment arriving while the first one\'s claims launch gets capacity only for itself', async () => {
    const tier = { 'example.com/tier': `scale-${lh.id}` };
    const scalePool = `scale-${lh.id}`;
    await createNodePool(scalePool, lh.nodeClassName, { weight: 20, types: ['m5.large', 'm5.xlarge'], labels: tier });
    await deploy('wave1', 6, { cpu: '700m', memory: '512Mi' }, tier);
    // the first wave's claims exist but are still coming up
    await eventually('the first wave\'s NodeClaims', async () => {
      const claims = await claimsOf(scalePool);
      return claims.length > 0 && claims.some((c) => !c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True'));
    }, 60_000);
    await deploy('wave2', 3, { cpu: '700m', memory: '512Mi' }, tier);
    const pods = await eventually('both waves Running', async () => {
      const all = [...(await podsOf('wave1')), ...(await podsOf('wave2'))];
      return all.length === 9 && running(all).length === 9 ? all : undefined;
    }, 180_000);
    // capacity launched twice for the first wave would be a node none of these pods needed
    const claims = await claimsOf(scalePool);
    const used = new Set(pods.map((p) => p.spec?.nodeName));
    expect(claims.map((c) => c.status?.nodeName).filter((n) => !used.has(n))).toEqual([]);
    // 9 × 700m fit in 3 m5.xlarge-sized (or fewer, larger) nodes; twice the first wave would not
    const cpu = claims.reduce((total, c) => total + Number.parseFloat(c.status?.capacity?.cpu ?? '0'), 0);
    expect(cpu).toBeLessThanOrEqual(12);
  });

  it('reports a pod no pool can hold with a FailedScheduling Event naming why, and launches nothing for it', async () => {
    const before = (await claimsOf(pool)).length;
    await deploy('huge', 1, { cpu: '1000', memory: '1Gi' });
    const event = await eventually('a FailedScheduling Event from autonode', async () => {
      const events = await lh.guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=FailedScheduling' });
      return events.items.find((e) => e.source?.component === 'karpenter' && e.involvedObject.name?.startsWith('huge-'));
    });
    expect(event.type).toBe('Warning');
    expect(event.message).toMatch(/^Failed to schedule pod, /);
    expect(event.message).toMatch(/cpu/);
    expect((await claimsOf(pool)).length).toBe(before);
    await apps.deleteNamespacedDeployment({ namespace, name: 'huge' });
  });

  it('reports a pod that asks for a zone no subnet is in with the closest miss, and launches nothing for it', async () => {
    const before = (await claimsOf(pool)).length;
    await deploy('nozone', 1, { cpu: '100m', memory: '64Mi' }, { 'karpenter.sh/nodepool': pool, 'topology.kubernetes.io/zone': 'us-east-1d' });
    const event = await eventually('a FailedScheduling Event from autonode', async () => {
      const events = await lh.guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=FailedScheduling' });
      return events.items.find((e) => e.source?.component === 'karpenter' && e.involvedObject.name?.startsWith('nozone-'));
    });
    // the subnets are in us-east-1a/b/c (test/support/cloud.ts ZONES): each type is offered there only
    expect(event.message).toContain(`NodePool ${pool}: no instance type with an available offering matches`);
    expect(event.message).toMatch(/closest: [a-z0-9]+\.[a-z0-9]+ matches every requirement but topology\.kubernetes\.io\/zone In \[us-east-1d\] \(offered in us-east-1a, us-east-1b, us-east-1c\)/);
    expect(event.message?.length).toBeLessThan(1024);
    expect((await claimsOf(pool)).length).toBe(before);
    await apps.deleteNamespacedDeployment({ namespace, name: 'nozone' });
  });

  it('reports a NodePool whose EC2NodeClass does not exist on its status, and the other pools keep provisioning; the class arrives and its waiting pods get nodes', async () => {
    const broken = `broken-${lh.id}`;
    const late = `late-${lh.id}`;
    await createNodePool(broken, late, { weight: 50 });
    await deploy('more', 3, { cpu: '500m', memory: '256Mi' });
    await eventually('the new pods Running', async () => running(await podsOf('more')).length === 3);
    const stored = z.object({ status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), message: z.string().optional() })) }) });
    const status = await eventually('the broken pool reported', async () => {
      const raw = await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: broken });
      const parsed = stored.safeParse(raw);
      return parsed.success ? parsed.data.status : undefined;
    });
    expect(status.conditions).toContainEqual(expect.objectContaining({ type: 'NodeClassReady', status: 'False', message: expect.stringContaining(late) }));
    expect(status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False' }));
    expect(await claimsOf(broken)).toHaveLength(0);

    // pods only that pool may take wait, planned and refused; no new pod will ring for them…
    const before = (await provisioner().query<ProvisionerStatus>('status')).batches;
    await deploy('waiting', 2, { cpu: '500m', memory: '256Mi' }, { 'karpenter.sh/nodepool': broken });
    await eventually('a batch that saw the waiting pods', async () => {
      const s = await provisioner().query<ProvisionerStatus>('status');
      return s.batches > before && (s.lastBatch?.unschedulable ?? 0) >= 2 && s.lastBatch?.skipped.some((m) => m.includes(late)) ? s : undefined;
    });
    // …the class that turns up does (the watcher follows EC2NodeClasses too)
    try {
      await ensureCustomNodeClass(lh.guest, { name: late, discoveryTag: lh.h.fixtures.discoveryTag, amiSelectorTerms: [{ id: lh.h.fixtures.imageId }] });
      await eventually('the waiting pods Running', async () => running(await podsOf('waiting')).length === 2, 120_000);
      expect((await claimsOf(broken)).length).toBeGreaterThan(0);
    } finally {
      await apps.deleteNamespacedDeployment({ namespace, name: 'waiting' }).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: broken }).catch(() => undefined);
      for (const c of await claimsOf(broken)) await lh.claims.delete(c.metadata.name);
      await eventually('the late pool\'s claims gone', async () => ((await claimsOf(broken)).length === 0 ? true : undefined), 120_000);
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: late }).catch(() => undefined);
    }
  });

  // Issue 14: a well-known label is the instance type's to carry, never the pool's to stamp;
  // another provider's selector is refused on the pool's status with the EC2 label to use.
  it('a pool requiring instance-capability-flex In [true] launches a -flex type labelled so; a pool with an AKS selector is refused with the fix', async () => {
    const flex = `flex-${lh.id}`;
    const aks = `aks-${lh.id}`;
    const flexLabel = 'karpenter.k8s.aws/instance-capability-flex';
    await createNodePool(flex, lh.nodeClassName, { types: ['c7i-flex.large', 'c7i-flex.xlarge', 't3.small', 'm5.large'], requirements: [{ key: flexLabel, operator: 'In', values: ['true'] }] });
    await createNodePool(aks, lh.nodeClassName, { requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }] });
    await deploy('flexible', 1, { cpu: '500m', memory: '256Mi' }, { 'karpenter.sh/nodepool': flex });
    const [claim] = await eventually('a launched NodeClaim of the flex pool', async () => {
      const launched = (await claimsOf(flex)).filter((c) => c.metadata.labels?.['node.kubernetes.io/instance-type'] !== undefined);
      return launched.length > 0 ? launched : undefined;
    });
    expect(claim?.metadata.labels?.['node.kubernetes.io/instance-type']).toMatch(/^c7i-flex\./);
    expect(claim?.metadata.labels?.[flexLabel]).toBe('true');
    await eventually('the flex pod Running', async () => running(await podsOf('flexible')).length === 1);

    const stored = z.object({ status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() })) }) });
    const status = await eventually('the AKS pool refused on its status', async () => {
      const raw = await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: aks });
      const parsed = stored.safeParse(raw);
      return parsed.success && parsed.data.status.conditions.some((c) => c.type === 'ValidationSucceeded') ? parsed.data.status : undefined;
    });
    expect(status.conditions).toContainEqual(expect.objectContaining({
      type: 'ValidationSucceeded', status: 'False', reason: 'InvalidNodePool',
      message: expect.stringMatching(/spec\.template\.spec\.requirements\[2\]\.key: karpenter\.azure\.com\/sku-family is another provider's label.*Fix: replace it with karpenter\.k8s\.aws\/instance-category/),
    }));
    expect(await claimsOf(aks)).toHaveLength(0);
    await apps.deleteNamespacedDeployment({ namespace, name: 'flexible' });
  });

  it('reports an invalid EC2NodeClass on its status and with an Event, its pools say so, and the other pools keep provisioning', async () => {
    const tier = { 'example.com/tier': `badclass-${lh.id}` };
    const badClass = `bad-${lh.id}`;
    const badPool = `badclass-${lh.id}`;
    const goodPool = `goodclass-${lh.id}`;
    // The CRD takes any string as an eviction threshold; autonode's rules want a percentage
    // or a quantity. So the API server stores it and only normalisation rejects it.
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.k8s.aws',
      version: 'v1',
      plural: 'ec2nodeclasses',
      body: {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: badClass },
        spec: {
          amiFamily: 'Custom',
          subnetSelectorTerms: [{ tags: lh.h.fixtures.discoveryTag }],
          securityGroupSelectorTerms: [{ tags: lh.h.fixtures.discoveryTag }],
          amiSelectorTerms: [{ id: lh.h.fixtures.imageId }],
          userData: '#!/bin/bash\necho join\n',
          kubelet: { evictionHard: { 'memory.available': 'lots' } },
        },
      },
    });
    // the pool on the invalid class is the heavier one: used, it would win
    await createNodePool(badPool, badClass, { weight: 90, types: ['m5.large', 'm5.xlarge'], labels: tier });
    await createNodePool(goodPool, lh.nodeClassName, { weight: 5, types: ['m5.large', 'm5.xlarge'], labels: tier });
    await deploy('onbad', 2, { cpu: '500m', memory: '256Mi' }, tier);

    const pods = await eventually('the pods Running', async () => {
      const all = await podsOf('onbad');
      return all.length === 2 && running(all).length === 2 ? all : undefined;
    }, 180_000);
    const nodes = new Set((await claimsOf(goodPool)).map((c) => c.status?.nodeName));
    for (const pod of pods) expect(nodes.has(pod.spec?.nodeName)).toBe(true);
    expect(await claimsOf(badPool)).toHaveLength(0);

    const conditionsSchema = z.object({ status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() })) }) });
    const classStatus = await eventually('the invalid EC2NodeClass reported on its status', async () => {
      const raw = await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: badClass });
      return conditionsSchema.safeParse(raw).data?.status;
    });
    const validation = classStatus.conditions.find((c) => c.type === 'ValidationSucceeded');
    expect(validation).toEqual(expect.objectContaining({ status: 'False', reason: 'InvalidEC2NodeClass' }));
    // the field path, what is wrong and the fix
    expect(validation?.message).toContain('spec.kubelet.evictionHard["memory.available"]: is neither a percentage nor a quantity (got "lots"). Fix: ');
    expect(classStatus.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False' }));

    const event = await eventually('a FailedValidation Event on the EC2NodeClass', async () => {
      const events = await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.kind=EC2NodeClass,involvedObject.name=${badClass}` });
      return events.items.find((e) => e.reason === 'FailedValidation');
    });
    expect(event.type).toBe('Warning');
    expect(event.source?.component).toBe('karpenter');
    expect(event.message).toContain(`EC2NodeClass ${badClass} is invalid`);
    expect(event.message).toContain('spec.kubelet.evictionHard');

    // its pool says the class is invalid, not that it does not exist
    const poolStatus = await eventually('the pool on the invalid class reported', async () => {
      const raw = await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: badPool });
      return conditionsSchema.safeParse(raw).data?.status;
    });
    const nodeClassReady = poolStatus.conditions.find((c) => c.type === 'NodeClassReady');
    expect(nodeClassReady).toEqual(expect.objectContaining({ status: 'False', message: expect.stringContaining(`EC2NodeClass ${badClass} (spec.template.spec.nodeClassRef.name) is invalid: spec.kubelet.evictionHard`) }));
    expect(nodeClassReady?.message).not.toContain('does not exist');
    expect(poolStatus.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False' }));
  });

  it('fills the heavier pool up to its limit, counting claims still launching, then spills to the next', async () => {
    const tier = { 'example.com/tier': `limits-${lh.id}` };
    const heavy = `heavy-${lh.id}`;
    const light = `light-${lh.id}`;
    await createNodePool(heavy, lh.nodeClassName, { weight: 90, limits: { cpu: '4' }, types: ['m5.xlarge'], labels: tier });
    await createNodePool(light, lh.nodeClassName, { weight: 5, types: ['c5.xlarge'], labels: tier });
    await deploy('spill', 5, { cpu: '1', memory: '1Gi' }, tier);
    await eventually('every spill pod Running', async () => running(await podsOf('spill')).length === 5, 180_000);
    const heavyClaims = await claimsOf(heavy);
    const lightClaims = await claimsOf(light);
    expect(heavyClaims).toHaveLength(1); // m5.xlarge is 4 vCPU: the limit allows one
    expect(lightClaims.length).toBeGreaterThan(0);
    const status = z.object({ status: z.object({ resources: z.record(z.string(), z.string()) }) })
      .parse(await lh.guest.customObjects.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: heavy }));
    expect(status.status.resources.cpu).toBe('4');
  });

  it('re-plans onto other offerings when a launch finds its offerings out of capacity, and holds them unavailable', async () => {
    const tier = { 'example.com/tier': `ice-${lh.id}` };
    const first = `ice-a-${lh.id}`;
    const second = `ice-b-${lh.id}`;
    await createNodePool(first, lh.nodeClassName, { weight: 80, types: ['m5.large'], labels: tier });
    await createNodePool(second, lh.nodeClassName, { weight: 3, types: ['c5.large'], labels: tier });
    lh.h.proxy.exhaust(['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone) => ({ instanceType: 'm5.large', zone, capacityType: 'on-demand' as const })));
    await deploy('ice', 2, { cpu: '500m', memory: '512Mi' }, tier);
    await eventually('the ice pods Running', async () => running(await podsOf('ice')).length === 2, 180_000);
    expect(await claimsOf(first)).toHaveLength(0); // the exhausted claim was deleted
    expect((await claimsOf(second)).length).toBeGreaterThan(0);
    const status = await provisioner().query<ProvisionerStatus>('status');
    expect(status.unavailableOfferings).toEqual(expect.arrayContaining([expect.objectContaining({ instanceType: 'm5.large', capacityType: 'on-demand' })]));
    const held = status.unavailableOfferings.find((o) => o.instanceType === 'm5.large');
    expect(Date.parse(held?.until ?? '') - Date.now()).toBeGreaterThan(60_000);
    expect(Date.parse(held?.until ?? '') - Date.now()).toBeLessThanOrEqual(180_000);

    // A disruption's replacement for the ice pods' node is planned with the same memory: its
    // workflow passes no offerings, the activity asks the provisioner. Without it the plan
    // would take the heavier pool's exhausted m5.large again.
    const node = (await podsOf('ice'))[0]?.spec?.nodeName ?? '';
    const activities = createProvisionerActivities({ resolve: lh.resolve, temporal: lh.t.client });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    const replacement = await new MockActivityEnvironment().run<[], PlannedBatch, () => Promise<PlannedBatch>>(
      () => activities.planReplacements({ cluster, taskQueues: lh.taskQueues, batchId: `ice-replace-${lh.id}`, nodes: [node], unavailable: [] }),
    );
    expect(replacement.claims.length).toBeGreaterThan(0);
    expect(replacement.claims.map((c) => c.pool)).toEqual(replacement.claims.map(() => second));
    lh.h.proxy.reset();
  });

  it('remembers the offerings a launch found exhausted even when the fleet launched another one', async () => {
    // r5.large is the cheaper type: the fleet asks for it first, EC2 (the proxy) refuses it in
    // every zone, and the same call launches r5.xlarge. Types no other test here plans.
    const tier = { 'example.com/tier': `partial-${lh.id}` };
    const partial = `partial-${lh.id}`;
    await createNodePool(partial, lh.nodeClassName, { weight: 70, types: ['r5.large', 'r5.xlarge'], labels: tier });
    lh.h.proxy.exhaust(['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone) => ({ instanceType: 'r5.large', zone, capacityType: 'on-demand' as const })));
    await deploy('partial', 1, { cpu: '500m', memory: '512Mi' }, tier);
    await eventually('the partial pod Running', async () => running(await podsOf('partial')).length === 1, 180_000);

    const claims = await claimsOf(partial);
    expect(claims).toHaveLength(1); // launched, not deleted and re-planned
    const claim = claims[0];
    expect(claim?.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values).toEqual(expect.arrayContaining(['r5.large', 'r5.xlarge']));
    expect(claim?.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('r5.xlarge');
    // what the proxy refused in that launch is what the provisioner now holds
    const refused = lh.h.proxy.injected.flatMap((f) => (f.kind === 'insufficient-capacity' && f.forwarded ? f.pools : []));
    expect(refused.length).toBeGreaterThan(0);
    const status = await eventually('the refused offerings held by the provisioner', async () => {
      const s = await provisioner().query<ProvisionerStatus>('status');
      return s.unavailableOfferings.some((o) => o.instanceType === 'r5.large') ? s : undefined;
    });
    const held = status.unavailableOfferings.filter((o) => o.instanceType.startsWith('r5.'));
    expect(held.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`).sort()).toEqual(refused.map((p) => `${p.instanceType}/${p.zone}/${p.capacityType}`).sort());
    for (const o of held) {
      expect(Date.parse(o.until) - Date.now()).toBeGreaterThan(60_000);
      expect(Date.parse(o.until) - Date.now()).toBeLessThanOrEqual(180_000);
    }
    if (claim) {
      // the claim's first run: its launch and the `partial-ice-memory` signal (replayed by test/unit/replay.test.ts)
      await recordHistory('nodeclaim-partial-ice', async () => {
        const handle = lh.t.client.workflow.getHandle(nodeClaimWorkflowId(lh.h.cluster.name, claim.metadata.name));
        const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId ?? undefined;
        return lh.t.client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory();
      });
    }
    // and the provisioner that took the two-argument (replan: false) signal
    await recordHistory('provisioner-partial-ice', () => provisioner().fetchHistory());
    lh.h.proxy.reset();
  });

  it('a batch run again under its id (a worker killed mid-batch) creates no second claim for the same pods', async () => {
    // The provisioner keeps the batch id in its state before the activity runs; a worker
    // killed after solving or part-way through creating claims makes Temporal run the
    // activity again with that id. Run it twice by hand, the world unchanged in between.
    const tier = { 'karpenter.sh/nodepool': pool };
    const activities = createProvisionerActivities({ resolve: lh.resolve, temporal: lh.t.client });
    const env = new MockActivityEnvironment();
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    // the provisioner would act on these pods too: keep its doorbell quiet by making them first
    const watch = lh.t.client.workflow.getHandle(watchWorkflowId(cluster.name));
    await watch.cancel();
    await watch.result().catch(() => undefined);
    await provisioner().terminate('this test drives batches by hand');
    await deploy('twice', 4, { cpu: '1', memory: '1Gi' }, tier);
    await eventually('kube-scheduler to mark the pods Unschedulable', async () => {
      const pods = await podsOf('twice');
      return pods.length === 4 && pods.every((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    });
    const input = { cluster, taskQueues: lh.taskQueues, batchId: `batch-${lh.id}`, unavailable: [] };
    const first = await env.run<[], BatchResult, () => Promise<BatchResult>>(() => activities.provisionBatch(input));
    expect(first.created.length).toBeGreaterThan(0);
    const claimsAfterFirst = (await claimsOf(pool)).length;
    const again = await env.run<[], BatchResult, () => Promise<BatchResult>>(() => activities.provisionBatch(input));
    expect(again.created).toEqual([]);
    expect((await claimsOf(pool)).length).toBe(claimsAfterFirst);
    await eventually('the pods Running on the first run\'s claims', async () => running(await podsOf('twice')).length === 4, 180_000);
  });
});
