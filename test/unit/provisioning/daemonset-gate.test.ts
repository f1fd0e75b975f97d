// The DaemonSet gate's decisions (core/provisioning/daemonset-gate.ts): which DaemonSets
// belong on a node, which of them have no pod bound there yet, and the provisioner's view of
// a gated node (capacity on its way, not a cordoned node).
import { asPlannedCapacity } from '../../../core/provisioning';
import { DAEMONSET_GATE_ANNOTATION, DAEMONSET_GATE_LAG_MAX_MS, DAEMONSET_GATE_MAX_MS, daemonSetsFor, daemonSetsInFlight, daemonSetsWaiting, gateHeldMs, gateHolds } from '../../../core/provisioning/daemonset-gate';

const daemonSet = (namespace: string, name: string, podSpec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  metadata: { namespace, name, ...metadata },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }], ...podSpec } } },
});
const labels = { 'kubernetes.io/os': 'linux', 'karpenter.sh/nodepool': 'general', 'topology.kubernetes.io/zone': 'us-east-1a' };

describe('daemonSetsFor: the DaemonSets whose pod would run on the node', () => {
  it('takes those whose selector and affinity match the node and which tolerate the claim\'s taints, sorted', () => {
    const items = [
      daemonSet('kube-system', 'proxy'),
      daemonSet('b', 'agent', { tolerations: [{ operator: 'Exists' }] }),
      daemonSet('gpu', 'driver', { nodeSelector: { 'example.com/gpu': 'true' } }),
      daemonSet('a', 'zonal', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }, { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['general'] }] }] } } } }),
      daemonSet('a', 'windows', { nodeSelector: { 'kubernetes.io/os': 'windows' } }),
    ];
    expect(daemonSetsFor(items, labels, [])).toEqual(['a/zonal', 'b/agent', 'kube-system/proxy']);
    // a pool taint keeps off every DaemonSet that does not tolerate it
    expect(daemonSetsFor(items, labels, [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }])).toEqual(['b/agent']);
  });

  it('leaves out a DaemonSet being deleted and one that does not parse (never waited for)', () => {
    const items = [daemonSet('a', 'going', {}, { deletionTimestamp: '2026-11-28T00:00:00Z' }), { metadata: { name: 'broken' }, spec: 'nonsense' }, daemonSet('a', 'kept')];
    expect(daemonSetsFor(items, labels, [])).toEqual(['a/kept']);
  });
});

describe('daemonSetsWaiting: the expected DaemonSets without a pod bound to the node', () => {
  const pod = (namespace: string, owner: string, nodeName?: string) => ({ metadata: { namespace, name: `${owner}-x`, ownerReferences: [{ kind: 'DaemonSet', name: owner }] }, spec: nodeName ? { nodeName } : {} });

  it('counts a pod only on this node, in the DaemonSet\'s namespace, owned by it', () => {
    const pods = [
      pod('kube-system', 'proxy', 'n1'),
      pod('b', 'agent', 'n2'), // another node's
      pod('other', 'zonal', 'n1'), // a namesake in another namespace
      pod('a', 'zonal'), // not bound yet
      { metadata: { namespace: 'a', name: 'app', ownerReferences: [{ kind: 'ReplicaSet', name: 'zonal' }] }, spec: { nodeName: 'n1' } },
    ];
    expect(daemonSetsWaiting(['a/zonal', 'b/agent', 'kube-system/proxy'], pods, 'n1')).toEqual(['a/zonal', 'b/agent']);
    expect(daemonSetsWaiting(['a/zonal'], [...pods, pod('a', 'zonal', 'n1')], 'n1')).toEqual([]);
  });
});

describe('gateHeldMs', () => {
  it('is undefined without autonode\'s annotation, the time since it otherwise, and over when unreadable', () => {
    const now = Date.parse('2026-11-28T12:00:10Z');
    expect(gateHeldMs(undefined, now)).toBeUndefined();
    expect(gateHeldMs('2026-11-28T12:00:00Z', now)).toBe(10_000);
    expect(gateHeldMs('2026-11-28T12:00:20Z', now)).toBe(0);
    expect(gateHeldMs('yesterday-ish', now)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('asPlannedCapacity and the gate', () => {
  const node = (annotations: Record<string, string>, initialized: boolean) => ({
    metadata: { name: 'n1', labels: { 'karpenter.sh/nodepool': 'general', ...(initialized ? { 'karpenter.sh/initialized': 'true' } : {}) }, annotations },
    spec: { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
  });
  const taintsOf = (n: unknown) => (n as { spec: { taints: unknown[] } }).spec.taints;

  it('sees through the gate\'s cordon on a node coming up, and through nothing else', () => {
    expect(taintsOf(asPlannedCapacity(node({ [DAEMONSET_GATE_ANNOTATION]: '2026-11-28T12:00:00Z' }, false), []))).toEqual([]);
    // an admin's cordon (no annotation) is kept, as is any cordon of an initialized node
    expect(taintsOf(asPlannedCapacity(node({}, false), []))).toHaveLength(1);
    expect(taintsOf(asPlannedCapacity(node({ [DAEMONSET_GATE_ANNOTATION]: '2026-11-28T12:00:00Z' }, true), []))).toHaveLength(1);
  });
});

describe('daemonSetsInFlight and gateHolds: how long a pod not yet bound holds the gate', () => {
  const unbound = (owner: string, node: string, judged: boolean, namespace = 'ops') => ({
    metadata: { namespace, ownerReferences: [{ kind: 'DaemonSet', name: owner }] },
    spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } } } },
    status: judged ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } : {},
  });

  it('counts a DaemonSet as judged only by its own pod for this node, judged Unschedulable', () => {
    const waiting = ['ops/agent', 'ops/logs', 'ops/absent', 'other/agent'];
    const pods = [
      unbound('agent', 'n1', true),
      unbound('logs', 'n1', false), // created, not tried yet
      unbound('absent', 'n2', true), // another node's pod
      unbound('agent', 'n1', true, 'elsewhere'), // another namespace's DaemonSet of that name
      { metadata: { namespace: 'other', ownerReferences: [{ kind: 'ReplicaSet', name: 'agent' }] }, spec: {}, status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } },
      'not a pod',
    ];
    expect(daemonSetsInFlight(waiting, pods, 'n1')).toEqual(['ops/logs', 'ops/absent', 'other/agent']);
  });

  it('holds for the short wait whatever the pods, then only while one is in flight, to the lag limit', () => {
    expect(gateHolds(DAEMONSET_GATE_MAX_MS - 1, ['a/x'], [])).toBe(true);
    expect(gateHolds(DAEMONSET_GATE_MAX_MS, ['a/x'], [])).toBe(false);
    expect(gateHolds(DAEMONSET_GATE_MAX_MS, ['a/x'], ['a/x'])).toBe(true);
    expect(gateHolds(DAEMONSET_GATE_LAG_MAX_MS - 1, ['a/x'], ['a/x'])).toBe(true);
    expect(gateHolds(DAEMONSET_GATE_LAG_MAX_MS, ['a/x'], ['a/x'])).toBe(false);
    expect(gateHolds(0, [], [])).toBe(false);
    expect(gateHolds(Number.POSITIVE_INFINITY, ['a/x'], ['a/x'])).toBe(false);
  });
});
