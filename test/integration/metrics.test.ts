// The workers' /metrics after a real run: pending pods become NodeClaims, instances in moto,
// nodes and Running pods; the claims are then deleted. What the endpoint counts must be
// what happened — as many created and launched as there are claims, by pool and instance
// type, as many terminated as were deleted — and the state gauges must show the nodes and
// pods as they were listed.
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { type StoredNodeClaim } from '../../core/api/nodeclaim';
import { parseQuantity, NANOS_PER_UNIT } from '../../core/scheduling/quantity';
import { watchWorkflowId } from '../../workflows/watch';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { parseExposition, samplesOf, sumBy, valueOf, type Exposition } from '../support/prometheus';

jest.setTimeout(300_000);

describe('metrics: the endpoint counts what happened (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;
  let probePool: string;
  let cluster: string;
  const testTaint = () => ({ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' });

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `metrics-${lh.id}`;
    pool = `web-${lh.id}`;
    probePool = `probe-${lh.id}`;
    cluster = lh.h.cluster.name;
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster),
      args: [{ cluster: { name: cluster, region: lh.h.cluster.region }, taskQueues: lh.taskQueues, gcInterval: 'Never' }],
    });
    await createNodePool(pool, ['m5.large', 'm5.xlarge', 'c5.large', 'c5.xlarge']);
    await createNodePool(probePool, ['m5.large']);
  });
  afterAll(async () => {
    await lh?.guest.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await lh?.close();
  });

  async function createNodePool(name: string, types: string[]) {
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name },
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: types },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [testTaint()],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  }

  async function deploy(name: string, replicas: number, requests: Record<string, string>, nodePool: string) {
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
              nodeSelector: { 'karpenter.sh/nodepool': nodePool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests } }],
            },
          },
        },
      },
    });
  }

  const podsOf = async (app: string): Promise<V1Pod[]> => (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
  const allRunning = (pods: V1Pod[], n: number) => pods.length === n && pods.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName);
  const claimsOf = async (nodePool: string): Promise<StoredNodeClaim[]> => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === nodePool);
  const scrape = async (): Promise<Exposition> => {
    const response = await fetch(`${lh.metricsUrl}/metrics`);
    expect(response.status).toBe(200);
    return parseExposition(await response.text());
  };
  const count = <T>(items: readonly T[], key: (t: T) => string) => items.reduce<Record<string, number>>((acc, t) => ({ ...acc, [key(t)]: (acc[key(t)] ?? 0) + 1 }), {});
  const baseUnits = (text: string) => {
    const parsed = parseQuantity(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return Number(parsed.quantity.nanos) / Number(NANOS_PER_UNIT);
  };

  it('counts the claims created, launched and terminated, times the cloud calls, and shows the nodes and pods it listed', async () => {
    // 1. five pods that fit on no node yet: NodeClaims, instances, nodes, Running pods
    await deploy('web', 5, { cpu: '700m', memory: '512Mi' }, pool);
    await eventually('every web pod Running', async () => allRunning(await podsOf('web'), 5), 240_000);
    const claims = await claimsOf(pool);
    expect(claims.length).toBeGreaterThan(0);
    const nodeNames = claims.map((c) => c.status?.nodeName ?? '').sort();
    expect(nodeNames.every((n) => n !== '')).toBe(true);

    // 2. one more pod in another pool: a second batch, which lists the cluster as it is now
    await deploy('probe', 1, { cpu: '100m', memory: '64Mi' }, probePool);
    await eventually('the probe pod Running', async () => allRunning(await podsOf('probe'), 1), 180_000);
    const probeClaims = await claimsOf(probePool);
    expect(probeClaims).toHaveLength(1);

    let scraped = await scrape();
    // every claim counted once, under its pool, as provisioning
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster, reason: 'provisioning', nodepool: pool })).toBe(claims.length);
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster, reason: 'provisioning', nodepool: probePool })).toBe(1);
    // every instance launched once, by the type, zone and capacity type its claim records
    expect(sumBy(scraped, 'autonode_nodeclaims_launched_total', 'instance_type', { cluster, nodepool: pool })).toEqual(count(claims, (c) => c.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '?'));
    expect(sumBy(scraped, 'autonode_nodeclaims_launched_total', 'zone', { cluster, nodepool: pool })).toEqual(count(claims, (c) => c.metadata.labels?.['topology.kubernetes.io/zone'] ?? '?'));
    expect(sumBy(scraped, 'autonode_nodeclaims_launched_total', 'capacity_type', { cluster, nodepool: pool })).toEqual({ 'on-demand': claims.length });
    // each launch went through the cloud provider's Create, timed under the activity that made it
    const creates = valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster, controller: 'launchClaimInstance', method: 'Create', provider: 'aws' }) ?? 0;
    const createErrors = Object.values(sumBy(scraped, 'karpenter_cloudprovider_errors_total', 'error', { cluster, method: 'Create' })).reduce((a, b) => a + b, 0);
    expect(creates - createErrors).toBeGreaterThanOrEqual(claims.length + 1);
    expect(samplesOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster, controller: 'planBatch', method: 'GetInstanceTypes' }).length).toBe(1);
    // at least the two batches that planned these claims ran the packing core
    expect(valueOf(scraped, 'karpenter_scheduler_scheduling_duration_seconds_count', { cluster, controller: 'provisioner' })).toBeGreaterThanOrEqual(2);

    // the state gauges: the web pool's nodes with what they report allocatable, its pods Running
    const nodes = await Promise.all(nodeNames.map((name) => lh.guest.core.readNode({ name })));
    const allocatable = samplesOf(scraped, 'karpenter_nodes_allocatable', { cluster, nodepool: pool });
    expect([...new Set(allocatable.map((s) => s.labels.node_name))].sort()).toEqual(nodeNames);
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      const cpu = allocatable.find((s) => s.labels.node_name === name && s.labels.resource_type === 'cpu');
      expect(cpu?.value).toBeCloseTo(baseUnits(node.status?.allocatable?.cpu ?? 'NaN'), 9);
      expect(cpu?.labels.instance_type).toBe(node.metadata?.labels?.['node.kubernetes.io/instance-type']);
    }
    const onPoolNodes = (await lh.guest.core.listPodForAllNamespaces()).items.filter((p) => nodeNames.includes(p.spec?.nodeName ?? ''));
    expect(sumBy(scraped, 'karpenter_pods_state', 'phase', { cluster, nodepool: pool })).toEqual(count(onPoolNodes, (p) => p.status?.phase ?? 'Unknown'));
    expect(valueOf(scraped, 'karpenter_pods_state', { cluster, nodepool: pool, phase: 'Running' })).toBeGreaterThanOrEqual(5);
    expect(valueOf(scraped, 'autonode_cluster_state_observed_timestamp_seconds', { cluster })).toBeGreaterThan(Date.now() / 1000 - 300);
    expect(sumBy(scraped, 'karpenter_nodeclaims_terminated_total', 'nodepool', { cluster })).toEqual({});

    // 3. the web pods go and their claims are deleted: each life ends, each counted once
    await apps.deleteNamespacedDeployment({ namespace, name: 'web' });
    for (const claim of claims) {
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name: claim.metadata.name });
    }
    await eventually('the web pool\'s claims gone', async () => (await claimsOf(pool)).length === 0, 180_000);
    scraped = await eventually('the terminations counted', async () => {
      const now = await scrape();
      return valueOf(now, 'karpenter_nodeclaims_terminated_total', { cluster, nodepool: pool }) === claims.length ? now : undefined;
    }, 30_000);
    expect(valueOf(scraped, 'karpenter_nodeclaims_terminated_total', { cluster, nodepool: probePool })).toBeUndefined();
    expect(samplesOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster, controller: 'terminateClaimInstance', method: 'Delete' }).map((s) => s.value)[0]).toBeGreaterThanOrEqual(claims.length);
    // nothing was created twice on the way (a retried activity, a restarted batch)
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster, reason: 'provisioning', nodepool: pool })).toBe(claims.length);
    expect(Object.values(sumBy(scraped, 'autonode_nodeclaims_launched_total', 'nodepool', { cluster, nodepool: pool }))).toEqual([claims.length]);

    // 4. the probes: alive, and ready while the workers poll
    expect((await fetch(`${lh.metricsUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${lh.metricsUrl}/readyz`);
    expect([ready.status, (await ready.text()).split('\n').filter(Boolean)]).toEqual([200, Object.values(lh.taskQueues).map((q) => `${q} RUNNING`)]);
    // the format Prometheus reads: every family typed (docs/metrics.md lists the 14)
    const text = await (await fetch(`${lh.metricsUrl}/metrics`)).text();
    expect(z.array(z.string()).parse(text.match(/^# TYPE \S+ (counter|gauge|histogram)$/gm)).length).toBe(14);
  });
});
