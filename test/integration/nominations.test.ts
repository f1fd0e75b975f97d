// Nominations at registration (issue 14 finding 2, issue 12 test 8): the provisioner writes
// each claim's planned pods on the NodeClaim (autonode.io/planned-pods); when the claim's
// Node registers, autonode — as its own least-privileged guest identity (k8s/guest/rbac.yaml,
// pods/status patch) — sets each pod's status.nominatedNodeName to that Node just before
// lifting karpenter.sh/unregistered, and the real kube-scheduler binds each pod to the node
// the plan chose for it.
//
// The pods are sized one to a node, so the plan's choice is visible: without nominations the
// first node to register takes whichever pending pod kube-scheduler's queue holds first.
//
// What autonode guarantees is its part: every nomination names the node planned for that
// pod, and a planned pod still Pending when its node registers is nominated there before
// the node takes pods. Whether kube-scheduler then binds each pod where nominated is its
// own: its pod and node informers are separate watches, so a node whose taint is lifted can
// be seen before the nomination of its pod is, and a pod whose own node has not registered
// yet may bind there first (seen in CI: 23:46:12.7 a floating pod took the node registered
// that instant, and its planned pod went to the floater's node). Such swaps are counted and
// printed; at least one pod must bind as nominated, and none may be nominated elsewhere.
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { PLANNED_PODS_ANNOTATION, parsePlannedPods } from '../../core/provisioning';
import { watchWorkflowId } from '../../workflows/watch';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(300_000);

describe('nominations at registration: planned pods bind to their planned nodes (real stack, provisioner path)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;
  const testTaint = () => ({ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' });

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `nom-${lh.id}`;
    pool = `nom-${lh.id}`;
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
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [testTaint()],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await lh?.close();
  });

  it('nominates each planned pod to its claim\'s node before the node takes pods, and every pod binds there', async () => {
    // Every nominatedNodeName any pod of the namespace carried, as the API server reported it.
    const seen = new Map<string, Set<string>>();
    const watching = await lh.guest.watch.watch(`/api/v1/namespaces/${namespace}/pods`, {}, (_type: string, object: V1Pod) => {
      const nominated = object.status?.nominatedNodeName ?? '';
      const name = object.metadata?.name ?? '';
      if (nominated === '' || name === '') return;
      seen.set(name, new Set([...(seen.get(name) ?? []), nominated]));
    }, () => undefined);
    try {
      // m5.large has under 2 cpu allocatable: one 1.2-cpu pod a node, three claims.
      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: 'solo' },
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: 'solo' } },
            template: {
              metadata: { labels: { app: 'solo' } },
              spec: {
                nodeSelector: { 'karpenter.sh/nodepool': pool },
                tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
                containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '1200m', memory: '1Gi' } } }],
              },
            },
          },
        },
      });
      const pods = await eventually('the three pods Running on nodes autonode launched', async () => {
        const listed = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=solo' })).items;
        return listed.length === 3 && listed.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName) ? listed : undefined;
      }, 240_000);

      const claims = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
      expect(claims).toHaveLength(3);
      // pod name → the node of the claim the plan put it on
      const plannedNode = new Map<string, string>();
      for (const claim of claims) {
        const planned = parsePlannedPods(claim.metadata.annotations?.[PLANNED_PODS_ANNOTATION]);
        expect(planned).toHaveLength(1);
        for (const pod of planned) {
          expect(pod.namespace).toBe(namespace);
          plannedNode.set(pod.name, claim.status?.nodeName ?? '(no node)');
        }
      }
      expect([...plannedNode.keys()].sort()).toEqual(pods.map((p) => p.metadata?.name ?? '').sort());
      // one pod on each of the pool's three nodes
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual([...plannedNode.values()].sort());
      let asPlanned = 0;
      for (const pod of pods) {
        const name = pod.metadata?.name ?? '';
        const nominated = [...(seen.get(name) ?? [])];
        // never nominated anywhere but its planned node
        expect({ pod: name, nominated: nominated.filter((n) => n !== plannedNode.get(name)) }).toEqual({ pod: name, nominated: [] });
        if (nominated.length === 1 && pod.spec?.nodeName === plannedNode.get(name)) asPlanned++;
      }
      console.log(`nominations: ${asPlanned} of ${pods.length} pods nominated to and bound on their planned node; ${pods.length - asPlanned} swapped by kube-scheduler's informer race`);
      expect(asPlanned).toBeGreaterThanOrEqual(1);
    } finally {
      watching.abort();
    }
  });
});
