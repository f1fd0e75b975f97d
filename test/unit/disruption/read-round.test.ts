import { MockActivityEnvironment } from '@temporalio/testing';
import { createDisruptionActivities, readRound } from '../../../activities/disruption/activity';
import { disruptionRound } from '../../../core/disruption';
import { aNodePool } from '../api/builders';
import { FakeCloudProvider } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';

// readRound turns the guest's objects into the round's snapshot. Here: which claims count as
// going. A claim whose own workflow ends its life (expireAfter, a `disrupt` Update) drains
// before the claim is deleted — Karpenter deletes it first — so its Drained condition is
// what says it is going.

const initializedAt = '2026-11-24T12:00:00Z';
const now = new Date('2026-11-24T12:10:00Z');

const aClaim = (name: string, node: string, conditions: Record<string, string>[] = []) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name, labels: { 'karpenter.sh/nodepool': 'a', 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'on-demand', 'topology.kubernetes.io/zone': 'us-east-1a' } },
  spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
  status: { nodeName: node, providerID: `aws:///us-east-1a/i-${name}`, conditions: [{ type: 'Initialized', status: 'True', reason: 'Initialized', lastTransitionTime: initializedAt }, ...conditions] },
});
const aNode = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'karpenter.sh/nodepool': 'a' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const aPod = (name: string, nodeName: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Running' } });

describe('readRound: a claim its own workflow is ending counts as going', () => {
  let guest: FakeGuest;
  beforeEach(async () => {
    guest = await startFakeGuest();
    const pool = aNodePool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s', budgets: [{ nodes: '1' }] } });
    guest.put('/apis/karpenter.sh/v1/nodepools/a', { ...pool, metadata: { name: 'a' } });
    guest.put('/api/v1/nodes/n1', aNode('n1'));
    guest.put('/api/v1/nodes/n2', aNode('n2'));
    // n1 runs a pod its drain cannot evict yet; n2 is empty
    guest.put('/api/v1/pods/held', aPod('held', 'n1'));
  });
  afterEach(async () => guest.close());

  it('an expired claim draining (Drained=False): not a candidate, and it uses the pool’s budget of one — the empty node stays', async () => {
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', aClaim('a-1', 'n1', [{ type: 'Drained', status: 'False', reason: 'Draining', message: 'expireAfter elapsed', lastTransitionTime: '2026-11-24T12:02:00Z' }]));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-2', aClaim('a-2', 'n2'));
    const read = await readRound(guest.kube, now, {}, 10_000);
    expect(read.input.pools.get('a')?.counts).toEqual({ nodes: 2, disrupting: 1 });
    expect(read.input.nodes.find((n) => n.nodeClaim === 'a-1')?.deleting).toBe(true);
    const round = disruptionRound(read.input);
    expect(round.command).toBeUndefined();
    expect(round.blocked).toContainEqual({ nodeClaim: 'a-2', method: 'emptiness', reason: 'budget allows 1 Empty disruption(s) and 1 node(s) are already disrupting' });
  });

  it('without a drain under way the same budget lets the empty node go', async () => {
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', aClaim('a-1', 'n1'));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-2', aClaim('a-2', 'n2'));
    const read = await readRound(guest.kube, now, {}, 10_000);
    expect(read.input.pools.get('a')?.counts).toEqual({ nodes: 2, disrupting: 0 });
    expect(disruptionRound(read.input).command).toEqual(expect.objectContaining({ method: 'emptiness', candidates: [{ nodeClaim: 'a-2', node: 'n2', nodePool: 'a' }] }));
  });

  const disruptedTaint = { spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } };
  const heldUntil = (iso: string) => ({ annotations: { 'autonode.io/disrupted-until': iso } });

  it('a node another command tainted karpenter.sh/disrupted (an interruption replacing it first) is no candidate; the untainted one is', async () => {
    guest.put('/api/v1/nodes/n2', { ...aNode('n2'), metadata: { ...aNode('n2').metadata, ...heldUntil('2026-11-24T12:15:00Z') }, ...disruptedTaint });
    guest.put('/api/v1/nodes/n3', aNode('n3'));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-2', aClaim('a-2', 'n2'));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-3', aClaim('a-3', 'n3'));
    const read = await readRound(guest.kube, now, {}, 10_000);
    expect(read.input.nodes.find((n) => n.nodeClaim === 'a-2')?.disruptedElsewhere).toBe(true);
    const round = disruptionRound(read.input);
    expect(round.command).toEqual(expect.objectContaining({ method: 'emptiness', candidates: [{ nodeClaim: 'a-3', node: 'n3', nodePool: 'a' }] }));
    expect(read.leftoverTaints).toEqual([]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['without the annotation an interruption writes (a command that ended mid-way)', {}],
    ['past the time its interruption held it until', heldUntil('2026-11-24T12:09:59Z')],
  ])('a disrupted taint %s is a leftover: the node is a candidate like any other', async (_name, annotations) => {
    guest.put('/api/v1/nodes/n2', { ...aNode('n2'), metadata: { ...aNode('n2').metadata, ...annotations }, ...disruptedTaint });
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', aClaim('a-1', 'n1'));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-2', aClaim('a-2', 'n2'));
    const read = await readRound(guest.kube, now, {}, 10_000);
    expect(read.input.nodes.find((n) => n.nodeClaim === 'a-2')?.disruptedElsewhere).toBeUndefined();
    expect(read.leftoverTaints).toEqual([{ nodeClaim: 'a-2', node: 'n2' }]);
    expect(disruptionRound(read.input).command).toEqual(expect.objectContaining({ method: 'emptiness', candidates: [{ nodeClaim: 'a-2', node: 'n2', nodePool: 'a' }] }));
  });

  it('the taint of a node its own claim is draining is no leftover', async () => {
    guest.put('/api/v1/nodes/n1', { ...aNode('n1'), ...disruptedTaint });
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', aClaim('a-1', 'n1', [{ type: 'Drained', status: 'False', reason: 'Draining', message: 'expireAfter elapsed', lastTransitionTime: '2026-11-24T12:02:00Z' }]));
    const read = await readRound(guest.kube, now, {}, 10_000);
    expect(read.leftoverTaints).toEqual([]);
  });

  it('planRound takes a leftover taint off the node and says so with an Event; a held one stays', async () => {
    guest.put('/api/v1/nodes/n1', { ...aNode('n1'), metadata: { ...aNode('n1').metadata, ...heldUntil('2026-11-24T12:15:00Z') }, ...disruptedTaint });
    guest.put('/api/v1/nodes/n2', { ...aNode('n2'), ...disruptedTaint });
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', aClaim('a-1', 'n1'));
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-2', aClaim('a-2', 'n2'));
    const activities = createDisruptionActivities({ resolve: async () => ({ guest: guest.kube, cloud: new FakeCloudProvider([]) }), now: () => now });
    await new MockActivityEnvironment({ activityType: 'planRound' }).run(() => activities.planRound({ cluster: { name: 'c1', region: 'us-east-1' } }));
    const taints = (name: string) => (((guest.get(`/api/v1/nodes/${name}`)?.spec ?? {}) as { taints?: { key: string }[] }).taints ?? []).map((t) => t.key);
    expect(taints('n1')).toEqual(['karpenter.sh/disrupted']);
    expect(taints('n2')).toEqual([]);
    const events = guest.requests.filter((r) => r.method === 'POST' && r.url.pathname.endsWith('/events')).map((r) => (r.body as { reason?: string; involvedObject?: { name?: string } }));
    expect(events.filter((e) => e.reason === 'DisruptionTaintRemoved').map((e) => e.involvedObject?.name)).toEqual(['n2']);
  });
});
