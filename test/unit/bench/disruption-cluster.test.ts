// The disruption bench's in-memory cluster: a command is carried out exactly as planned or
// refused, so a bench figure never rests on a pod left behind or a node overfilled.
import { solve } from '../../../core/packing';
import { simulateMove } from '../../../activities/provisioner/plan-view';
import { applyCommand, benchCatalog, BENCH_NOW, CommandError, costOf, movedBy, planningOf, podKey, podsByNode, priceOf, worldOf, type ClusterCommand, type SimCluster, type SimNode, type SimPod } from '../../bench/disruption-cluster';
import { autonodeCommand } from '../../bench/disruption-autonode';

const pool = { types: ['m5.large', 'm5.xlarge', 'm5.2xlarge'], zones: ['us-east-1a'], budget: '100%' };
const catalog = benchCatalog(pool);

function aCluster(nodes: Record<string, string>, pods: Record<string, { node: string; cpu?: number; memory?: number }>): SimCluster {
  const simNodes = new Map<string, SimNode>(Object.entries(nodes).map(([name, instanceType]) => [name, { name, nodeClaim: name, instanceType, zone: 'us-east-1a', capacityType: 'on-demand', price: priceOf(catalog, instanceType, 'us-east-1a', 'on-demand') }]));
  const simPods = new Map<string, SimPod & { node: string }>(
    Object.entries(pods).map(([name, p]) => {
      const pod = { namespace: 'app', name, app: 'web', cpu: p.cpu ?? 500, memory: p.memory ?? 1024, node: p.node };
      return [podKey(pod), pod];
    }),
  );
  return { pool, catalog, nodes: simNodes, pods: simPods, launched: 0 };
}

const nodeOf = (cluster: SimCluster, pod: string) => cluster.pods.get(`app/${pod}`)?.node;

describe('applyCommand', () => {
  const cluster = aCluster({ n1: 'm5.xlarge', n2: 'm5.xlarge' }, { a: { node: 'n1' }, b: { node: 'n1' }, c: { node: 'n2' } });

  it('removes the candidates, launches the replacements and puts every moving pod where the plan put it', () => {
    const command: ClusterCommand = {
      remove: ['n1'],
      moves: [{ node: 'n2', pods: ['app/a'] }],
      launch: [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, pods: ['app/b'] }],
    };
    expect(movedBy(cluster, command)).toBe(2);
    const after = applyCommand(cluster, command);
    expect([...after.nodes.keys()].sort()).toEqual(['default-r0', 'n2']);
    expect([nodeOf(after, 'a'), nodeOf(after, 'b'), nodeOf(after, 'c')]).toEqual(['n2', 'default-r0', 'n2']);
    expect(after.launched).toBe(1);
    expect(costOf(after)).toBeCloseTo(0.192 + 0.096, 6);
    // the cluster given is left as it was
    expect([...cluster.nodes.keys()]).toEqual(['n1', 'n2']);
    expect(nodeOf(cluster, 'a')).toBe('n1');
  });

  it.each<[string, ClusterCommand, RegExp]>([
    ['a pod left on a removed node', { remove: ['n1'], moves: [{ node: 'n2', pods: ['app/a'] }], launch: [] }, /1 pod\(s\) would be left on removed nodes: app\/b/],
    ['a pod planned onto two nodes', { remove: ['n1'], moves: [{ node: 'n2', pods: ['app/a', 'app/b', 'app/a'] }], launch: [] }, /app\/a is planned onto two nodes/],
    ['pods planned onto a node the command removes', { remove: ['n1', 'n2'], moves: [{ node: 'n2', pods: ['app/a', 'app/b', 'app/c'] }], launch: [] }, /onto n2, which the command removes/],
    ['pods planned onto a node that is not there', { remove: ['n1'], moves: [{ node: 'n9', pods: ['app/a', 'app/b'] }], launch: [] }, /onto n9, which is not in the cluster/],
    ['a node the cluster does not have', { remove: ['n9'], moves: [], launch: [] }, /node n9 is not in the cluster/],
  ])('refuses %s', (_what, command, message) => {
    expect(() => applyCommand(cluster, command)).toThrow(CommandError);
    expect(() => applyCommand(cluster, command)).toThrow(message);
  });

  it('refuses to move a pod whose node stays', () => {
    expect(() => applyCommand(cluster, { remove: ['n1'], moves: [{ node: 'n2', pods: ['app/a', 'app/b'] }], launch: [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, pods: ['app/c'] }] })).toThrow(/app\/c runs on n2, which stays/);
  });

  it('refuses to fill a node past its allocatable cpu, memory or pod slots', () => {
    // m5.large: 1930m cpu, 6903Mi, 29 pods
    const full = aCluster({ big: 'm5.2xlarge', small: 'm5.large' }, { x: { node: 'big', cpu: 1500 }, y: { node: 'big', cpu: 500 }, z: { node: 'small', cpu: 100 } });
    expect(() => applyCommand(full, { remove: ['big'], moves: [{ node: 'small', pods: ['app/x', 'app/y'] }], launch: [] })).toThrow(/small \(m5.large\) would hold 2100m cpu/);
    const heavy = aCluster({ big: 'm5.2xlarge', small: 'm5.large' }, { x: { node: 'big', cpu: 100, memory: 7000 } });
    expect(() => applyCommand(heavy, { remove: ['big'], moves: [{ node: 'small', pods: ['app/x'] }], launch: [] })).toThrow(/7000Mi memory/);
    const many = aCluster({ big: 'm5.2xlarge', small: 'm5.large' }, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { node: 'big', cpu: 10, memory: 10 }])));
    expect(() => applyCommand(many, { remove: ['big'], moves: [{ node: 'small', pods: [...many.pods.keys()] }], launch: [] })).toThrow(/30 pods against .*, 29/);
  });
});

describe("a simulation's verdict carried out (plan-view.ts through autonodeCommand)", () => {
  const simulate = (cluster: SimCluster, leaving: string[]) =>
    simulateMove(planningOf(cluster, worldOf(cluster), 'test'), leaving.map((node) => ({ nodeClaim: node, node })), { spotToSpot: false, manyToMany: { minSavings: 0.05 } }, { now: BENCH_NOW, solve: async (input) => solve(input) });

  it('deletes two underused nodes whose pods fit on the third, each pod where the plan put it', async () => {
    const cluster = aCluster({ n1: 'm5.xlarge', n2: 'm5.xlarge', n3: 'm5.xlarge' }, { a: { node: 'n1' }, b: { node: 'n2' }, c: { node: 'n3' } });
    const sim = await simulate(cluster, ['n1', 'n2']);
    expect(sim.decision.kind).toBe('delete');
    const after = applyCommand(cluster, autonodeCommand(cluster, [{ node: 'n1' }, { node: 'n2' }], sim));
    expect([...after.nodes.keys()]).toEqual(['n3']);
    expect(podsByNode(after).get('n3')?.sort()).toEqual(['app/a', 'app/b', 'app/c']);
    expect(costOf(after)).toBeCloseTo(0.192, 6);
  });

  it('replaces an oversized node by the cheapest type that holds its pods', async () => {
    const cluster = aCluster({ n1: 'm5.2xlarge' }, { a: { node: 'n1' }, b: { node: 'n1' } });
    const sim = await simulate(cluster, ['n1']);
    expect(sim.decision.kind).toBe('replace');
    const command = autonodeCommand(cluster, [{ node: 'n1' }], sim);
    expect(command.launch.map((l) => [l.instanceType, l.capacityType, [...l.pods].sort()])).toEqual([['m5.large', 'on-demand', ['app/a', 'app/b']]]);
    expect(costOf(applyCommand(cluster, command))).toBeCloseTo(0.096, 6);
  });

  it('has no command for a rejected verdict', async () => {
    const cluster = aCluster({ n1: 'm5.large' }, { a: { node: 'n1', cpu: 1800 } });
    const sim = await simulate(cluster, ['n1']);
    expect(sim.decision.kind).toBe('reject');
    expect(() => autonodeCommand(cluster, [{ node: 'n1' }], sim)).toThrow(/no command/);
  });

  describe('pods already pending are simulated with the candidates (Karpenter SimulateScheduling)', () => {
    const pendingPod = (name: string, cpu: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'app', labels: { app: 'batch' } },
      spec: { containers: [{ name: 'main', resources: { requests: { cpu, memory: '256Mi' } } }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    });
    const simulateWith = (cluster: SimCluster, pending: unknown[], leaving: string[]) => {
      const world = worldOf(cluster);
      return simulateMove(planningOf(cluster, { ...world, provisionable: pending }, 'test'), leaving.map((node) => ({ nodeClaim: node, node })), { spotToSpot: false }, { now: BENCH_NOW, solve: async (input) => solve(input) });
    };
    // two m5.xlarge (3.92 cpu allocatable), 1 cpu used on each: n1's pod fits beside n2's; a
    // pending 3.5-cpu pod fits on neither now and needs a node of its own
    const cluster = aCluster({ n1: 'm5.xlarge', n2: 'm5.xlarge' }, { a: { node: 'n1', cpu: 1000 }, c: { node: 'n2', cpu: 1000 } });

    it('without pending pods, the underused node is deleted', async () => {
      expect((await simulateWith(cluster, [], ['n1'])).decision.kind).toBe('delete');
    });

    it('a pending pod that needs a new node holds consolidation back for now (simulated again next round)', async () => {
      const sim = await simulateWith(cluster, [pendingPod('wide', '3500m')], ['n1']);
      expect(sim.decision).toEqual({ kind: 'reject', reason: expect.stringMatching(/^1 pending pod\(s\) need new nodes/), transient: true });
    });

    it('a pending pod that fits nowhere at all does not block it (AllNonPendingPodsScheduled)', async () => {
      const sim = await simulateWith(cluster, [pendingPod('huge', '500')], ['n1']);
      expect(sim.decision.kind).toBe('delete');
    });
  });
});
