// Disruption on the real stack, emptiness first: pods become nodes through the provisioner,
// the Deployment scales to zero, and the cluster's disruption workflow removes the empty
// nodes — no more at once than the NodePool's budget allows, never a node carrying
// karpenter.sh/do-not-disrupt — and their instances are terminated.
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { type DisruptionStatus } from '../../workflows/disruption';
import { watchWorkflowId } from '../../workflows/watch';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(400_000);

describe('disruption: empty nodes go, within budgets (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `dis-${lh.id}`;
    pool = `dis-${lh.id}`;
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', { taskQueue: lh.taskQueues.control, workflowId: watchWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }] });
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: pool },
        spec: {
          disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5s', budgets: [{ nodes: '1' }] },
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              // one 1500m pod per 2-vCPU node: three pods, three nodes
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              nodeSelector: { 'karpenter.sh/nodepool': pool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '1500m', memory: '512Mi' } } }],
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await lh?.close();
  });

  const claimsOfPool = async () => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);

  it('scale to zero → the empty nodes are removed one at a time (budget nodes: "1"), except the do-not-disrupt one until it is released', async () => {
    const claims = await eventually('three initialized nodes', async () => {
      const all = await claimsOfPool();
      return all.length === 3 && all.every((c) => c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True')) ? all : undefined;
    }, 240_000);
    const held = claims[0]!;
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    await lh.guest.core.patchNode({ name: held.status!.nodeName!, body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } } } }, mergePatch);
    const instances = new Map(claims.map((c) => [c.metadata.name, c.status!.providerID!.split('/').pop()!]));

    await apps.patchNamespacedDeploymentScale({ namespace, name: 'web', body: { spec: { replicas: 0 } } }, mergePatch);
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    const disruption = await lh.t.client.workflow.start('disruptionWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: disruptionWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, pollInterval: '2s', validationDelay: '3s' }],
    });

    // watch: never two of the pool's claims deleting at once
    let mostAtOnce = 0;
    const others = claims.filter((c) => c !== held).map((c) => c.metadata.name);
    await eventually('the two releasable claims gone', async () => {
      const now = await claimsOfPool();
      mostAtOnce = Math.max(mostAtOnce, now.filter((c) => c.metadata.deletionTimestamp !== undefined).length);
      return others.every((n) => !now.some((c) => c.metadata.name === n)) ? true : undefined;
    }, 180_000);
    expect(mostAtOnce).toBe(1);
    for (const name of others) expect(await lh.instanceState(instances.get(name)!)).toMatch(/shutting-down|terminated/);

    // the held node stays, and says why
    await new Promise((r) => setTimeout(r, 8_000));
    expect((await claimsOfPool()).map((c) => c.metadata.name)).toEqual([held.metadata.name]);
    const status = await disruption.query<DisruptionStatus>('status');
    expect(status.blocked).toEqual(expect.arrayContaining([{ nodeClaim: held.metadata.name, method: 'emptiness', reason: 'it has karpenter.sh/do-not-disrupt' }]));
    expect(status.commands).toBeGreaterThanOrEqual(2);
    const events = await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${held.metadata.name},reason=DisruptionBlocked` });
    expect(events.items.map((e) => e.message)).toContain('Cannot disrupt NodeClaim: it has karpenter.sh/do-not-disrupt');

    // released: it goes too
    await lh.guest.core.patchNode({ name: held.status!.nodeName!, body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': null } } } }, mergePatch);
    await eventually('the released claim gone', async () => ((await claimsOfPool()).length === 0 ? true : undefined), 120_000);
    expect(await lh.instanceState(instances.get(held.metadata.name)!)).toMatch(/shutting-down|terminated/);
  });
});
