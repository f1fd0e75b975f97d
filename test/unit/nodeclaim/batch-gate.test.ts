// The batch gate in the lifecycle's activities (core/provisioning/batch-gate.ts), behind the
// real client against the fake guest: a gated claim's node registers cordoned and waits for
// its batch; the last one up nominates every waiting sibling's planned pods and opens every
// node; a node opens alone past BATCH_GATE_MAX_MS; two claims arriving together do not both wait.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimKubeActivities } from '../../../activities/nodeclaim/kube';
import { AWAITING_BATCH_REASON, BATCH_GATE_ANNOTATION, BATCH_GATE_MAX_MS, BATCH_LABEL, PLANNED_PODS_ANNOTATION } from '../../../core/provisioning';
import { DAEMONSET_GATE_ANNOTATION } from '../../../core/provisioning/daemonset-gate';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { cluster, instance, policy, resolverFor } from './support';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const SELF_NODE = instance.privateDnsName;
const SIBLING_NODE = 'ip-10-0-0-9.ec2.internal';
const CLAIMS = '/apis/karpenter.sh/v1/nodeclaims';

type Doc = { metadata: { annotations?: Record<string, string>; labels?: Record<string, string> }; spec: { unschedulable?: boolean }; status?: { nominatedNodeName?: string; conditions?: { type: string; status: string; reason?: string }[] } };

describe('the batch gate in registration and initialization', () => {
  let guest: FakeGuest;
  let clock = T0;
  const make = () => createNodeClaimKubeActivities({ resolve: resolverFor(guest), reviewNodeCsrs: async () => ({ approved: [], denied: [], failed: [] }), now: () => new Date(clock), daemonSetGatePollMs: 0 });
  const run = <T>(type: string, fn: () => Promise<T>) => new MockActivityEnvironment({ activityType: type, workflowType: 'nodeClaimWorkflow' }).run(fn);
  const register = () => run('reviewRegistration', () => make().reviewRegistration({ cluster, name: 'a-1', instance, policy }));
  const initialize = (activities = make()) => run('reviewInitialization', () => activities.reviewInitialization({ cluster, name: 'a-1', nodeName: SELF_NODE, policy }));
  const doc = (path: string) => guest.get(path) as unknown as Doc;
  const node = (name: string) => doc(`/api/v1/nodes/${name}`);
  const claimStatus = (name: string) => doc(`${CLAIMS}/${name}`).status;
  const events = () => guest.requests.filter((r) => r.method === 'POST' && /events$/.test(r.url.pathname)).map((r) => r.body as { type: string; reason: string; message: string });
  const batchLists = () => guest.requests.filter((r) => r.method === 'GET' && r.url.pathname === CLAIMS && r.url.searchParams.get('labelSelector') === `${BATCH_LABEL}=b1`).length;

  const putClaim = (name: string, pod: string, status?: object) => guest.put(`${CLAIMS}/${name}`, {
    apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim',
    metadata: { name, uid: `u-${name}`, labels: { 'karpenter.sh/nodepool': 'a', [BATCH_LABEL]: 'b1' }, annotations: { [BATCH_GATE_ANNOTATION]: 'true', [PLANNED_PODS_ANNOTATION]: `app/${pod}` } },
    spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' }, requirements: [] },
    ...(status ? { status } : {}),
  });
  const putNode = (name: string, extra: { cordoned?: boolean; providerID?: string } = {}) => guest.put(`/api/v1/nodes/${name}`, {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/os': 'linux' }, ...(extra.cordoned ? { annotations: { [DAEMONSET_GATE_ANNOTATION]: new Date(T0).toISOString() } } : {}) },
    spec: { ...(extra.providerID ? { providerID: extra.providerID } : {}), ...(extra.cordoned ? { unschedulable: true } : { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }) },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-29T11:59:00Z' }], allocatable: { cpu: '2', memory: '8Gi', pods: '110' } },
  });
  const putPod = (name: string) => guest.put(`/api/v1/namespaces/app/pods/${name}`, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'app', name }, spec: { containers: [] }, status: { phase: 'Pending' } });
  /** the sibling, registered and initialized in every other respect: waiting at the gate */
  const siblingAtGate = () => putClaim('a-2', 'p2', { nodeName: SIBLING_NODE, conditions: [{ type: 'Initialized', status: 'Unknown', reason: AWAITING_BATCH_REASON, lastTransitionTime: '2026-11-29T12:00:00Z' }] });

  beforeEach(async () => {
    clock = T0;
    guest = await startFakeGuest();
    putClaim('a-1', 'p1');
    putClaim('a-2', 'p2'); // launching: no status yet
    putNode(SELF_NODE, { providerID: instance.providerId });
    putNode(SIBLING_NODE, { cordoned: true });
    putPod('p1');
    putPod('p2');
  });
  afterEach(async () => guest.close());

  it('registers a gated claim\'s node cordoned, and holds it while a sibling is on its way', async () => {
    expect(await register()).toEqual(expect.objectContaining({ registered: true }));
    expect(node(SELF_NODE).spec.unschedulable).toBe(true);
    expect(node(SELF_NODE).metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBe(new Date(T0).toISOString());
    clock = T0 + 2_000;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: false, blocker: expect.stringContaining('waiting for a-2') }));
    expect(claimStatus('a-1')?.conditions).toContainEqual(expect.objectContaining({ type: 'Initialized', status: 'Unknown', reason: AWAITING_BATCH_REASON }));
    expect(node(SELF_NODE).spec.unschedulable).toBe(true);
    expect(events().map((e) => e.reason)).not.toContain('BatchNodesOpened');
  });

  it('the last one up nominates every waiting sibling\'s planned pods and its own, then opens every node', async () => {
    await register();
    siblingAtGate();
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    for (const name of [SELF_NODE, SIBLING_NODE]) {
      expect(node(name).spec.unschedulable).toBe(false);
      expect(node(name).metadata.annotations?.[DAEMONSET_GATE_ANNOTATION]).toBeUndefined();
    }
    expect(doc('/api/v1/namespaces/app/pods/p1').status?.nominatedNodeName).toBe(SELF_NODE);
    expect(doc('/api/v1/namespaces/app/pods/p2').status?.nominatedNodeName).toBe(SIBLING_NODE);
    expect(events()).toContainEqual(expect.objectContaining({ type: 'Normal', reason: 'BatchNodesOpened', message: expect.stringContaining('Opened 2 nodes of batch b1') }));
    // every nomination was written before the first cordon was lifted
    const writes = guest.requests.filter((r) => r.method === 'PATCH' || r.method === 'PUT').map((r) => r.url.pathname);
    const lastNomination = Math.max(...writes.map((p, i) => (p.endsWith('/pods/p1/status') || p.endsWith('/pods/p2/status') ? i : -1)));
    const firstOpening = writes.findIndex((p, i) => i > writes.findIndex((q) => q.endsWith(`${CLAIMS}/a-1/status`)) && p.startsWith('/api/v1/nodes/'));
    expect(lastNomination).toBeGreaterThanOrEqual(0);
    expect(firstOpening).toBeGreaterThan(lastNomination);
  });

  it('opens alone once BATCH_GATE_MAX_MS has passed since registration, with a Warning naming who is missing', async () => {
    await register();
    clock = T0 + BATCH_GATE_MAX_MS - 1_000;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: false }));
    clock = T0 + BATCH_GATE_MAX_MS;
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    expect(node(SELF_NODE).spec.unschedulable).toBe(false);
    expect(node(SIBLING_NODE).spec.unschedulable).toBe(true);
    expect(events()).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'BatchNodesNotUp', message: expect.stringContaining('a-2 not up') }));
  });

  it('two arriving together: the sibling marking itself between this one\'s two reads is seen, and the batch opens', async () => {
    await register();
    // the sibling's own mark lands just after this claim marked itself waiting
    guest.afterRequest = (request) => {
      if (request.method === 'PATCH' && request.url.pathname === `${CLAIMS}/a-1/status`) {
        guest.afterRequest = undefined;
        siblingAtGate();
      }
    };
    expect(await initialize()).toEqual(expect.objectContaining({ initialized: true }));
    expect(node(SIBLING_NODE).spec.unschedulable).toBe(false);
    expect(batchLists()).toBe(2);
  });

  it('a claim already waiting reads its batch through the process\'s short-lived cache', async () => {
    await register();
    const activities = make();
    await initialize(activities); // arrives: reads afresh, marks itself, reads again
    expect(batchLists()).toBe(2);
    clock = T0 + 2_000;
    await initialize(activities); // waiting: the arrival's read is 2 s old, still good
    expect(batchLists()).toBe(2);
    clock = T0 + 6_000;
    await initialize(activities);
    clock = T0 + 7_000;
    await initialize(activities);
    expect(batchLists()).toBe(3); // one read for both waiting reviews past the first's lifetime
    expect(node(SELF_NODE).spec.unschedulable).toBe(true);
  });
});
