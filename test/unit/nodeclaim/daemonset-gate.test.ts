// The DaemonSet gate in the lifecycle's activities, behind the real client against the fake
// guest: registration cordons a node its DaemonSet pods belong on (and no node an admin
// cordoned), initialization waits for those pods and then opens the node — at once when they
// are bound, after DAEMONSET_GATE_MAX_MS with a Warning when they are not.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimKubeActivities } from '../../../activities/nodeclaim/kube';
import { DAEMONSET_GATE_ANNOTATION, DAEMONSET_GATE_LAG_MAX_MS, DAEMONSET_GATE_MAX_MS } from '../../../core/provisioning/daemonset-gate';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { cluster, instance, policy, putClaim, resolverFor } from './support';

const NODE = `/api/v1/nodes/${instance.privateDnsName}`;
const T0 = Date.parse('2026-11-28T12:00:00Z');

type Node = { metadata: { annotations?: Record<string, string>; labels?: Record<string, string> }; spec: { unschedulable?: boolean; taints?: { key: string; effect: string }[] } };

describe('the DaemonSet gate in registration and initialization', () => {
  let guest: FakeGuest;
  let clock = T0;
  const activities = () => createNodeClaimKubeActivities({ resolve: resolverFor(guest), reviewNodeCsrs: async () => ({ approved: [], denied: [], failed: [] }), now: () => new Date(clock), daemonSetGatePollMs: 0 });
  const run = <T>(type: string, fn: () => Promise<T>) => new MockActivityEnvironment({ activityType: type, workflowType: 'nodeClaimWorkflow' }).run(fn);
  const register = () => run('reviewRegistration', () => activities().reviewRegistration({ cluster, name: 'a-1', instance, policy }));
  const initialize = () => run('reviewInitialization', () => activities().reviewInitialization({ cluster, name: 'a-1', nodeName: instance.privateDnsName, policy }));
  const node = () => guest.get(NODE) as unknown as Node;
  const warnings = () => guest.requests.filter((r) => r.method === 'POST' && /events$/.test(r.url.pathname)).map((r) => r.body as { type: string; reason: string; message: string }).filter((e) => e.type === 'Warning');
  const putDaemonSet = (name: string, nodeSelector: Record<string, string>) =>
    guest.put(`/apis/apps/v1/namespaces/ops/daemonsets/${name}`, {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { namespace: 'ops', name },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { nodeSelector, containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '50m' } } }] } } },
    });

  beforeEach(async () => {
    clock = T0;
    guest = await startFakeGuest();
    putClaim(guest);
    guest.put(NODE, {
      apiVersion: 'v1', kind: 'Node', metadata: { name: instance.privateDnsName, labels: { 'kubernetes.io/os': 'linux' } },
      spec: { providerID: instance.providerId, taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-28T11:59:00Z' }], allocatable: { cpu: '2', memory: '8Gi', pods: '110' } },
    });
  });
  afterEach(async () => guest.close());

  it('registers a node cordoned, marked as autonode\'s, when a DaemonSet\'s pods belong on it (the claim\'s labels count)', async () => {
    putDaemonSet('agent', { 'karpenter.sh/nodepool': 'a' });
    expect(await register()).toEqual(expect.objectContaining({ registered: true }));
    expect(node().spec.unschedulable).toBe(true);
    expect(node().metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBe(new Date(T0).toISOString());
  });

  it('leaves the node schedulable when no DaemonSet belongs on it, and never marks an admin\'s cordon as its own', async () => {
    putDaemonSet('elsewhere', { 'karpenter.sh/nodepool': 'b' });
    await register();
    expect(node().spec.unschedulable).toBeUndefined();
    expect(node().metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();

    await guest.close();
    guest = await startFakeGuest();
    putClaim(guest);
    guest.put(NODE, { apiVersion: 'v1', kind: 'Node', metadata: { name: instance.privateDnsName }, spec: { providerID: instance.providerId, unschedulable: true }, status: {} });
    putDaemonSet('agent', { 'karpenter.sh/nodepool': 'a' });
    await register();
    expect(node().spec.unschedulable).toBe(true);
    expect(node().metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();
  });

  it('keeps the node cordoned until the DaemonSet pod is bound, then opens it without a Warning', async () => {
    putDaemonSet('agent', { 'karpenter.sh/nodepool': 'a' });
    await register();
    clock = T0 + 2_000;
    const waiting = await initialize();
    expect(waiting).toEqual(expect.objectContaining({ initialized: false, blocker: expect.stringContaining('waiting for ops/agent') }));
    expect(node().spec.unschedulable).toBe(true);
    const claim = guest.get('/apis/karpenter.sh/v1/nodeclaims/a-1') as { status?: { conditions?: { type: string; reason: string }[] } };
    expect(claim.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Initialized', reason: 'AwaitingDaemonSetPods' }));

    // the node lifecycle controller's taint for the cordon, beside an admin's own taint
    const cordoned = node();
    guest.put(NODE, { ...cordoned, spec: { ...cordoned.spec, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, { key: 'team', effect: 'NoSchedule' }] } });
    guest.put('/api/v1/namespaces/ops/pods/agent-x', { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ops', name: 'agent-x', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'uid-agent' }] }, spec: { nodeName: instance.privateDnsName, containers: [] } });
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    expect(node().spec.unschedulable).toBe(false);
    expect(node().spec.taints).toEqual([{ key: 'team', effect: 'NoSchedule' }]);
    expect(node().metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();
    expect(node().metadata.labels?.['karpenter.sh/initialized']).toBe('true');
    expect(warnings()).toEqual([]);
  });

  const putUnboundAgentPod = (judged: boolean) => guest.put('/api/v1/namespaces/ops/pods/agent-y', {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { namespace: 'ops', name: 'agent-y', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'uid-agent' }] },
    // the DaemonSet controller pins its pod to the node by a metadata.name field term
    spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [instance.privateDnsName] }] }] } } }, containers: [] },
    status: judged ? { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' }] } : { phase: 'Pending' },
  });

  it('opens the node after the short wait once kube-scheduler has judged the DaemonSet pod unschedulable, with a Warning', async () => {
    putDaemonSet('agent', { 'karpenter.sh/nodepool': 'a' });
    await register();
    putUnboundAgentPod(true);
    clock = T0 + DAEMONSET_GATE_MAX_MS;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    expect(node().spec.unschedulable).toBe(false);
    expect(warnings()).toEqual([expect.objectContaining({ reason: 'DaemonSetPodsNotPlaced', message: expect.stringContaining('ops/agent') })]);
  });

  it('holds past the short wait while the DaemonSet pod is not created or not yet tried, and opens at the lag limit', async () => {
    putDaemonSet('agent', { 'karpenter.sh/nodepool': 'a' });
    await register();
    clock = T0 + DAEMONSET_GATE_MAX_MS;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: false, blocker: expect.stringContaining('not yet created or scheduled') }));
    putUnboundAgentPod(false);
    clock = T0 + DAEMONSET_GATE_LAG_MAX_MS - 1_000;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: false }));
    expect(node().spec.unschedulable).toBe(true);
    expect(warnings()).toEqual([]);
    clock = T0 + DAEMONSET_GATE_LAG_MAX_MS;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    expect(node().spec.unschedulable).toBe(false);
    expect(warnings()).toEqual([expect.objectContaining({ reason: 'DaemonSetPodsNotPlaced', message: expect.stringContaining('after 300 s') })]);
  });
});
