// Issue 12 test 8 on the product's own path: a topology-heavy workload goes through the
// provisioner (watch → batch → solve → NodeClaims → launch → join, nominations at
// registration), and the real kube-scheduler binds every pod. No pod may be left Pending for
// a spread or affinity rule the plan believed satisfied: such a pod would stay Pending for
// good, since the next batch would believe it again.
//
// The workload carries the traps Karpenter's own benchmark has: plain pods counted by
// another Deployment's zone-spread selector, zone spread, hostname spread, hostname
// anti-affinity and zone self-affinity, in one namespace, arriving together.
import { AppsV1Api, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { PLANNED_PODS_ANNOTATION, parsePlannedPods } from '../../core/provisioning';
import { provisionerWorkflowId } from '../../core/lifecycle';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { watchWorkflowId } from '../../workflows/watch';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(600_000);

interface Workload {
  readonly name: string;
  readonly replicas: number;
  readonly requests: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly rule: 'zone-spread' | 'zone-spread-tier' | 'hostname-spread' | 'hostname-anti' | 'zone-affinity' | 'none';
}

// 70 pods. `tier: web` is counted by front's zone spread, which the plain `web` pods do not
// carry themselves (Karpenter's benchmark draws selectors independently of the pod's labels).
const WORKLOADS: readonly Workload[] = [
  { name: 'web', replicas: 12, requests: { cpu: '250m', memory: '256Mi' }, labels: { tier: 'web' }, rule: 'none' },
  { name: 'front', replicas: 9, requests: { cpu: '500m', memory: '512Mi' }, labels: { tier: 'web' }, rule: 'zone-spread-tier' },
  { name: 'zs', replicas: 10, requests: { cpu: '700m', memory: '1Gi' }, rule: 'zone-spread' },
  { name: 'hs', replicas: 12, requests: { cpu: '300m', memory: '256Mi' }, rule: 'hostname-spread' },
  { name: 'ha', replicas: 7, requests: { cpu: '600m', memory: '1Gi' }, rule: 'hostname-anti' },
  { name: 'za', replicas: 6, requests: { cpu: '500m', memory: '768Mi' }, rule: 'zone-affinity' },
  { name: 'batch', replicas: 14, requests: { cpu: '1', memory: '1536Mi' }, rule: 'none' },
];

function affinityOf(w: Workload): Record<string, unknown> {
  const self = { matchLabels: { app: w.name } };
  switch (w.rule) {
    case 'zone-spread': return { topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: self }] };
    case 'zone-spread-tier': return { topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { tier: 'web' } } }] };
    case 'hostname-spread': return { topologySpreadConstraints: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule', labelSelector: self }] };
    case 'hostname-anti': return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: self }] } } };
    case 'zone-affinity': return { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: self }] } } };
    case 'none': return {};
  }
}

describe('provisioner, topology-heavy workload: every pod the plans placed is bound by kube-scheduler (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `topo-${lh.id}`;
    pool = `topo-${lh.id}`;
    await lh.createNamespace(namespace);
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }],
    });
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: pool },
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              requirements: [
                // small types, so hostname rules and zone counts decide the plan, not one big node
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge', 'c5.large', 'c5.xlarge', 'r5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
              expireAfter: 'Never',
            },
          },
          disruption: { consolidateAfter: 'Never' },
        },
      },
    });
  });
  afterAll(async () => {
    await lh?.close();
  });

  function deployment(w: Workload): V1Deployment {
    return {
      metadata: { name: w.name },
      spec: {
        replicas: w.replicas,
        selector: { matchLabels: { app: w.name } },
        template: {
          metadata: { labels: { app: w.name, ...w.labels } },
          spec: {
            nodeSelector: { 'karpenter.sh/nodepool': pool },
            tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
            containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: w.requests } }],
            terminationGracePeriodSeconds: 0,
            ...affinityOf(w),
          },
        },
      },
    };
  }

  it('binds every pod on nodes autonode launched; prints how many bound where their plan put them and what follow-up batches launched', async () => {
    const total = WORKLOADS.reduce((sum, w) => sum + w.replicas, 0);
    // every nominatedNodeName and the moment each pod was bound, as the API server reported them
    const nominations = new Map<string, string[]>();
    const boundAt = new Map<string, number>();
    const start = Date.now();
    const watching = await lh.guest.watch.watch(`/api/v1/namespaces/${namespace}/pods`, {}, (_type: string, object: V1Pod) => {
      const name = object.metadata?.name ?? '';
      const nominated = object.status?.nominatedNodeName ?? '';
      if (nominated !== '' && !(nominations.get(name) ?? []).includes(nominated)) nominations.set(name, [...(nominations.get(name) ?? []), nominated]);
      if (object.spec?.nodeName && !boundAt.has(name)) boundAt.set(name, Date.now() - start);
    }, () => undefined);
    for (const w of WORKLOADS) await apps.createNamespacedDeployment({ namespace, body: deployment(w) });
    const listPods = async (): Promise<V1Pod[]> => (await lh.guest.core.listNamespacedPod({ namespace })).items;
    let last: V1Pod[] = [];
    const pods = await eventually(`all ${total} pods Running`, async () => {
      last = await listPods();
      return last.length === total && last.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName) ? last : undefined;
    }, 480_000).catch((error: unknown) => {
      const pending = last.filter((p) => !p.spec?.nodeName);
      const why = pending.map((p) => `${p.metadata?.name}: ${p.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '(no condition)'}`);
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${pending.length} Pending:\n${why.join('\n')}`);
    }).finally(() => watching.abort());

    const claims = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
    const nodeOfClaim = new Map(claims.map((c) => [c.metadata.name, c.status?.nodeName ?? '']));
    const plannedNode = new Map<string, string>();
    // a pod re-planned by a later batch is that batch's: the newest claim naming it wins
    const byAge = [...claims].sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')));
    for (const claim of byAge) {
      for (const planned of parsePlannedPods(claim.metadata.annotations?.[PLANNED_PODS_ANNOTATION])) {
        plannedNode.set(planned.name, nodeOfClaim.get(claim.metadata.name) ?? '');
      }
    }
    const asPlanned = pods.filter((p) => plannedNode.get(p.metadata?.name ?? '') === p.spec?.nodeName).length;
    const elsewhere = pods.filter((p) => plannedNode.get(p.metadata?.name ?? '') !== p.spec?.nodeName);
    const neverNominated = elsewhere.filter((p) => (nominations.get(p.metadata?.name ?? '') ?? []).length === 0).length;
    const bindTimes = [...boundAt.values()].sort((a, b) => a - b);
    const used = new Set(pods.map((p) => p.spec?.nodeName));
    const idle = claims.filter((c) => !used.has(c.status?.nodeName));
    const status = await lh.t.client.workflow.getHandle(provisionerWorkflowId(lh.h.cluster.name)).query<ProvisionerStatus>('status');
    // the batch gate (core/provisioning/batch-gate.ts): a batch with these rules opens its nodes together
    const claimNames = new Set(claims.map((c) => c.metadata.name));
    const gateEvents = async (reason: string) => (await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `reason=${reason}` })).items.filter((e) => claimNames.has(e.involvedObject.name ?? ''));
    const opened = await gateEvents('BatchNodesOpened');
    const notUp = await gateEvents('BatchNodesNotUp');
    console.log([
      `topology-heavy via the provisioner: ${total} pods Running on ${claims.length} claims from ${status.batches} batch(es)`,
      `${asPlanned} bound to the node their plan named, ${total - asPlanned} elsewhere (${neverNominated} of those bound before their planned node registered, never nominated); ${plannedNode.size} planned pod names recorded`,
      `first bind ${((bindTimes[0] ?? 0) / 1000).toFixed(1)} s, last ${((bindTimes.at(-1) ?? 0) / 1000).toFixed(1)} s after the Deployments were created`,
      `claims holding none of the workload: ${idle.map((c) => c.metadata.name).join(', ') || 'none'}`,
      `batch gate: ${opened.map((e) => e.message).join('; ') || 'no batch opened together'}; ${notUp.length} node(s) opened without their batch`,
    ].join('\n'));
    expect(opened.length).toBeGreaterThan(0);

    // Every pod ran on a node of this pool that autonode launched for it.
    const nodes = new Set(nodeOfClaim.values());
    for (const pod of pods) expect(nodes.has(pod.spec?.nodeName ?? '')).toBe(true);
    // Every rule holds where kube-scheduler put the pods (it enforced them; this checks our reading).
    const zoneOf = new Map<string, string>();
    for (const node of (await lh.guest.core.listNode({ labelSelector: `karpenter.sh/nodepool=${pool}` })).items) {
      zoneOf.set(node.metadata?.name ?? '', node.metadata?.labels?.['topology.kubernetes.io/zone'] ?? '');
    }
    const byApp = (app: string) => pods.filter((p) => p.metadata?.labels?.app === app);
    const perNode = (list: V1Pod[]) => [...countBy(list, (p) => p.spec?.nodeName ?? '').values()];
    expect(Math.max(...perNode(byApp('ha')))).toBe(1);
    const za = new Set(byApp('za').map((p) => zoneOf.get(p.spec?.nodeName ?? '')));
    expect(za.size).toBe(1);
  });
});

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
