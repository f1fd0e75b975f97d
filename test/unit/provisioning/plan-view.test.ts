// The packing activity's planning without the API server (plan-view.ts): what a batch plans
// for waiting pods, what it tells them, and how the pools' status counts the new claims.
import { solve } from '../../../core/packing';
import { planView, type PodEventType } from '../../../activities/provisioner/plan-view';
import { claimManifest, parsePlannedPods, PLANNED_PODS_ANNOTATION, PLANNED_PODS_BUDGET_BYTES } from '../../../core/provisioning';
import { benchCatalog, BENCH_NOW, planningOf, worldOf, type SimCluster } from '../../bench/disruption-cluster';

const pool = { types: ['m5.large', 'm5.xlarge'], zones: ['us-east-1a'], budget: '10%' };
const empty: SimCluster = { pool, catalog: benchCatalog(pool), nodes: new Map(), pods: new Map(), launched: 0 };
const pending = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'app' },
  spec: { containers: [{ name: 'main', resources: { requests: { cpu: '500m', memory: '1Gi' } } }] },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
});

it('plans a claim for the waiting pods, tells each where it goes, and counts the claim in its pool', async () => {
  const world = { ...worldOf(empty), provisionable: [pending('a'), pending('b')] };
  const told: [string, PodEventType, string, string][] = [];
  const stages: string[] = [];
  const { planned, plan } = await planView(planningOf(empty, world, 'batch-1'), {
    now: BENCH_NOW,
    solve: async (input) => solve(input),
    tell: (...event) => told.push(event),
    heartbeat: (stage) => stages.push(stage),
  });
  expect(planned.claims).toHaveLength(1);
  const [claim] = planned.claims;
  expect(planned.optionLists[claim!.options]?.[0]).toBe('m5.large');
  expect(planned.pricePerHour).toBeCloseTo(0.096, 6);
  expect(planned.nominated).toBe(2);
  expect(plan?.nodeClaims[0]?.pods).toEqual(['app/a', 'app/b']);
  expect(told).toEqual([
    ['app/a', 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${claim!.name}`],
    ['app/b', 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${claim!.name}`],
  ]);
  expect(planned.poolStatus.map((p) => [p.name, p.resources.nodes])).toEqual([['default', '1']]);
  expect(stages).toEqual(['plan']);
});

it('with nothing waiting, solves nothing and reports the pools as they are', async () => {
  let solved = 0;
  const { planned, plan } = await planView(planningOf(empty, worldOf(empty), 'batch-2'), { now: BENCH_NOW, solve: async (input) => (solved++, solve(input)) });
  expect(solved).toBe(0);
  expect(plan).toBeUndefined();
  expect(planned.claims).toEqual([]);
  expect(planned.poolStatus.map((p) => [p.name, p.resources.nodes, p.conditions.map((c) => `${c.type}=${c.status}`)])).toEqual([['default', '0', ['ValidationSucceeded=True', 'NodeClassReady=True']]]);
});

describe("a claim's planned pods, for nominations at registration (annotation autonode.io/planned-pods)", () => {
  const manyPending = (count: number) => Array.from({ length: count }, (_, i) => pending(`p-${i}`));

  it('carries each claim\'s pods while the batch is within its budget, and the manifest writes them on the claim', async () => {
    const world = { ...worldOf(empty), provisionable: manyPending(6) };
    const { planned, plan } = await planView(planningOf(empty, world, 'batch-3'), { now: BENCH_NOW, solve: async (input) => solve(input), podNamesBudget: PLANNED_PODS_BUDGET_BYTES });
    expect(planned.claims.length).toBeGreaterThan(0);
    expect(planned.claims.map((c) => c.podNames)).toEqual(plan?.nodeClaims.map((c) => c.pods));
    const claim = planned.claims[0]!;
    const template = planned.templates.find((t) => t.pool === claim.pool)!;
    const manifest = claimManifest(claim, template, planned.optionLists[claim.options] ?? [], 'batch-3');
    expect(parsePlannedPods(manifest.metadata.annotations?.[PLANNED_PODS_ANNOTATION])).toEqual(claim.podNames!.map((key) => ({ namespace: 'app', name: key.slice('app/'.length) })));
  });

  it('leaves the names off claims past the budget (the plan is a history payload), and off every claim without one', async () => {
    const world = { ...worldOf(empty), provisionable: manyPending(12) };
    const planning = () => planningOf(empty, world, 'batch-4');
    const unbudgeted = await planView(planning(), { now: BENCH_NOW, solve: async (input) => solve(input) });
    expect(unbudgeted.planned.claims.length).toBeGreaterThan(1);
    expect(unbudgeted.planned.claims.every((c) => c.podNames === undefined)).toBe(true);
    // exactly the first claim's names (3 bytes a name for quotes and comma)
    const firstClaimBytes = (unbudgeted.plan?.nodeClaims[0]?.pods ?? []).reduce((n, key) => n + key.length + 3, 0);
    const { planned } = await planView(planning(), { now: BENCH_NOW, solve: async (input) => solve(input), podNamesBudget: firstClaimBytes });
    expect(planned.claims[0]?.podNames).toEqual(unbudgeted.plan?.nodeClaims[0]?.pods);
    expect(planned.claims.slice(1).map((c) => c.podNames)).toEqual(planned.claims.slice(1).map(() => undefined));
    const template = planned.templates[0]!;
    const later = planned.claims[1]!;
    expect(claimManifest(later, template, [], 'batch-4').metadata.annotations?.[PLANNED_PODS_ANNOTATION]).toBeUndefined();
  });

  it.each<[string | undefined, { namespace: string; name: string }[]]>([
    [undefined, []],
    ['', []],
    ['app/web-0', [{ namespace: 'app', name: 'web-0' }]],
    ['app/web-0,kube-system/dns.x-1', [{ namespace: 'app', name: 'web-0' }, { namespace: 'kube-system', name: 'dns.x-1' }]],
    ['app/web-0,no-slash,Upper/x,a/b/c,/x,app/', [{ namespace: 'app', name: 'web-0' }]],
  ])('reads the annotation %j as %j (anything not namespace/name is dropped)', (annotation, expected) => {
    expect(parsePlannedPods(annotation)).toEqual(expected);
  });
});
