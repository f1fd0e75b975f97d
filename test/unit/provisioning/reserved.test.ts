// Pods an earlier batch planned onto a claim still coming up are held there, not planned
// again (issue 12, "Which pods"; core/provisioning/reserved.ts).
import { solve } from '../../../core/packing';
import { planView } from '../../../activities/provisioner/plan-view';
import { worldFrom } from '../../../activities/provisioner/world';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../../core/api/nodeclaim';
import { claimInFlight, claimManifest, PLANNED_PODS_ANNOTATION, PLANNED_PODS_BUDGET_BYTES, reserveForInFlightClaims } from '../../../core/provisioning';
import { benchCatalog, BENCH_NOW, planningOf, worldOf, type SimCluster } from '../../bench/disruption-cluster';

const pending = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'app', labels: { app: 'spread' } },
  spec: { containers: [{ name: 'main', resources: { requests: { cpu: '500m', memory: '1Gi' } } }], ...extra },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
});

const stored = (name: string, planned: string[], more: { created?: string; nodeName?: string; initialized?: boolean; deleting?: boolean } = {}): StoredNodeClaim => StoredNodeClaimSchema.parse({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: {
    name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: more.created ?? '2026-11-24T10:00:00Z',
    annotations: { [PLANNED_PODS_ANNOTATION]: planned.join(',') },
    ...(more.deleting ? { deletionTimestamp: '2026-11-24T10:05:00Z' } : {}),
  },
  spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
  status: {
    ...(more.nodeName ? { nodeName: more.nodeName } : {}),
    conditions: more.initialized ? [{ type: 'Initialized', status: 'True', reason: 'Initialized', message: '', lastTransitionTime: '2026-11-24T10:02:00Z' }] : [],
  },
});

const heldBy = (pods: unknown[], claims: StoredNodeClaim[]) => {
  const { provisionable, reserved } = reserveForInFlightClaims(pods, claims);
  return {
    provisionable: provisionable.map((p) => (p as { metadata: { name: string } }).metadata.name),
    reserved: reserved.map((p) => { const r = p as { metadata: { name: string }; spec: { nodeName: string } }; return `${r.metadata.name}@${r.spec.nodeName}`; }),
  };
};

describe('reserveForInFlightClaims', () => {
  it.each<[string, StoredNodeClaim[], { provisionable: string[]; reserved: string[] }]>([
    ['a claim not launched holds its planned pods, bound to its name', [stored('c1', ['app/a', 'app/b'])], { provisionable: ['x'], reserved: ['a@c1', 'b@c1'] }],
    ['a registered claim holds them on its node', [stored('c1', ['app/a'], { nodeName: 'ip-1' })], { provisionable: ['b', 'x'], reserved: ['a@ip-1'] }],
    ['an initialized claim holds nothing: kube-scheduler had its chance', [stored('c1', ['app/a', 'app/b'], { nodeName: 'ip-1', initialized: true })], { provisionable: ['a', 'b', 'x'], reserved: [] }],
    ['a claim being deleted (a failed launch) holds nothing', [stored('c1', ['app/a', 'app/b'], { deleting: true })], { provisionable: ['a', 'b', 'x'], reserved: [] }],
    ['of two claims listing a pod, the newer holds it', [stored('new', ['app/a'], { created: '2026-11-24T11:00:00Z' }), stored('old', ['app/a', 'app/b'])], { provisionable: ['x'], reserved: ['a@new', 'b@old'] }],
    ['another namespace\'s pod of the same name is not held', [stored('c1', ['other/a'])], { provisionable: ['a', 'b', 'x'], reserved: [] }],
  ])('%s', (_name, claims, expected) => {
    expect(heldBy([pending('a'), pending('b'), pending('x')], claims)).toEqual(expected);
  });

  it('claimInFlight: not initialized and not deleting', () => {
    expect([stored('a', []), stored('b', [], { initialized: true }), stored('c', [], { deleting: true })].map(claimInFlight)).toEqual([true, false, false]);
  });
});

describe('a second batch while the first one\'s claims are in flight', () => {
  const pool = { types: ['m5.large', 'm5.xlarge', 'm5.2xlarge'], zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], budget: '10%' };
  const cluster: SimCluster = { pool, catalog: benchCatalog(pool), nodes: new Map(), pods: new Map(), launched: 0 };
  const spread = { topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } }] };
  const first = Array.from({ length: 9 }, (_, i) => pending(`first-${i}`, spread));

  it('holds the first batch\'s pods on its claims and plans only for the pods that arrived since', async () => {
    const base = worldOf(cluster);
    const batch1 = await planView(planningOf(cluster, { ...base, provisionable: first }, 'batch-1'), { now: BENCH_NOW, solve: async (input) => solve(input), podNamesBudget: PLANNED_PODS_BUDGET_BYTES });
    expect(batch1.planned.claims.length).toBeGreaterThan(0);
    const claims = batch1.planned.claims.map((claim) => {
      const template = batch1.planned.templates.find((t) => t.pool === claim.pool)!;
      const manifest = claimManifest(claim, template, batch1.planned.optionLists[claim.options] ?? [], 'batch-1');
      return StoredNodeClaimSchema.parse({ ...manifest, metadata: { ...manifest.metadata, uid: `uid-${claim.name}`, resourceVersion: '1', creationTimestamp: '2026-11-24T10:00:00Z' } });
    });

    const later = [pending('later-0', spread), pending('later-1', spread)];
    const world = worldFrom({ pods: [...first, ...later], nodes: [], daemonSets: base.daemonSets, nodeClaims: claims, nodePools: base.nodePools, nodeClasses: base.nodeClasses });
    expect(world.awaiting).toBe(first.length);
    const batch2 = await planView(planningOf(cluster, world, 'batch-2'), { now: BENCH_NOW, solve: async (input) => solve(input), podNamesBudget: PLANNED_PODS_BUDGET_BYTES });
    expect(batch2.planned.pending).toBe(2);
    expect(batch2.planned.awaiting).toBe(first.length);
    // every pod of batch 2's plan is one that arrived since; the first batch's pods are placed nowhere again
    const placed = [...(batch2.plan?.nodeClaims.flatMap((c) => c.pods) ?? []), ...(batch2.plan?.inFlightNodeClaims.flatMap((p) => p.pods) ?? [])];
    expect(placed.sort()).toEqual(['app/later-0', 'app/later-1']);
  });
});
