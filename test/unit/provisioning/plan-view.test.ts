// The packing activity's planning without the API server (plan-view.ts): what a batch plans
// for waiting pods, what it tells them, and how the pools' status counts the new claims.
import { solve } from '../../../core/packing';
import { planView, type PodEventType } from '../../../activities/provisioner/plan-view';
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
