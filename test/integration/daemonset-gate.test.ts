// The DaemonSet gate on the real stack (core/provisioning/daemonset-gate.ts): a node its
// DaemonSet pods belong on registers cordoned, kube-controller-manager's DaemonSet controller
// and kube-scheduler place those pods through the cordon, and initialization opens the node
// once they are bound — or after DAEMONSET_GATE_MAX_MS when one can never be, with a Warning.
import { AppsV1Api, type V1Node } from '@kubernetes/client-node';
import { DAEMONSET_GATE_ANNOTATION, DAEMONSET_GATE_MAX_MS } from '../../core/provisioning/daemonset-gate';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(240_000);

describe('the DaemonSet gate (Temporal + guest kube-apiserver, kube-controller-manager, kube-scheduler + moto)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `gate-${lh.id}`;
    await lh.createNamespace(namespace);
  });
  afterAll(async () => {
    await lh?.close();
  });

  // the harness's claims are all of pool `default`: each DaemonSet here belongs on their nodes only
  const createDaemonSet = (name: string, cpu: string) =>
    apps.createNamespacedDaemonSet({
      namespace,
      body: {
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { nodeSelector: { 'karpenter.sh/nodepool': 'default' }, containers: [{ name: 'c', image: 'registry.example/agent:1', resources: { requests: { cpu, memory: '16Mi' } } }] } },
        },
      },
    });
  const conditionOf = async (claim: string, type: string) => (await lh.claims.get(claim))?.status?.conditions?.find((c) => c.type === type);
  const nodeOf = async (claim: string): Promise<V1Node | undefined> => {
    const nodeName = (await lh.claims.get(claim))?.status?.nodeName;
    return nodeName ? lh.guest.core.readNode({ name: nodeName }) : undefined;
  };
  const warnings = async (claim: string) => (await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `involvedObject.name=${claim}` })).items.filter((e) => e.type === 'Warning');

  it('holds a node cordoned while a DaemonSet pod that can never fit waits, then opens it with a Warning', async () => {
    await createDaemonSet('huge', '64'); // more CPU than any m5.large has
    const name = `gate-${lh.id}-huge`;
    const started = Date.now();
    await lh.startLifecycle(name, await lh.createNodeClaim(name));

    const held = await eventually('the node registered cordoned, the claim waiting for the DaemonSet pod', async () => {
      const [node, initialized] = await Promise.all([nodeOf(name), conditionOf(name, 'Initialized')]);
      return node?.spec?.unschedulable === true && node.metadata?.annotations?.[DAEMONSET_GATE_ANNOTATION] && initialized?.reason === 'AwaitingDaemonSetPods' ? { node, initialized } : undefined;
    });
    expect(held.initialized.message).toContain(`${namespace}/huge`);
    // kube-scheduler judged the DaemonSet pod against the node (through the cordon) and found no room
    const pod = await eventually('the DaemonSet pod judged unschedulable', async () => {
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=huge' })).items;
      return pods.find((p) => JSON.stringify(p.spec?.affinity ?? {}).includes(held.node.metadata?.name ?? '-') && p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    });
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toMatch(/Insufficient cpu/);

    await eventually('the node opened after the gate\'s limit', async () => (await conditionOf(name, 'Initialized'))?.status === 'True', 120_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DAEMONSET_GATE_MAX_MS);
    const opened = await nodeOf(name);
    expect(opened?.spec?.unschedulable ?? false).toBe(false);
    expect(opened?.metadata?.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();
    expect((await warnings(name)).map((e) => [e.reason, e.message])).toContainEqual(['DaemonSetPodsNotPlaced', expect.stringContaining(`${namespace}/huge`)]);
    await apps.deleteNamespacedDaemonSet({ namespace, name: 'huge' });
  });

  it('opens the node as soon as its DaemonSet pod is bound, with no Warning', async () => {
    await eventually('the huge DaemonSet gone', async () => (await apps.listNamespacedDaemonSet({ namespace })).items.length === 0);
    await createDaemonSet('agent', '50m');
    const name = `gate-${lh.id}-agent`;
    await lh.startLifecycle(name, await lh.createNodeClaim(name));
    await eventually('Initialized', async () => (await conditionOf(name, 'Initialized'))?.status === 'True', 60_000);
    const node = await nodeOf(name);
    const nodeName = node?.metadata?.name ?? '';
    expect(node?.spec?.unschedulable ?? false).toBe(false);
    expect(node?.metadata?.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();
    // the gate opened only after the pod was bound: it is on the node now
    const onNode = (await lh.guest.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${nodeName}` })).items;
    expect(onNode.map((p) => p.metadata?.labels?.app)).toEqual(['agent']);
    expect((await warnings(name)).map((e) => e.reason)).not.toContain('DaemonSetPodsNotPlaced');
  });
});
