// The batch gate (core/provisioning/batch-gate.ts): which batches open their nodes together,
// and which siblings a waiting node still waits for.
import { solve } from '../../../core/packing';
import { planView } from '../../../activities/provisioner/plan-view';
import { AWAITING_BATCH_REASON, BATCH_GATE_ANNOTATION, batchGateNeeded, batchToCreate, claimManifest, PLANNED_PODS_BUDGET_BYTES, siblingsNotAtGate, type BatchSibling } from '../../../core/provisioning';
import { karpenterExact } from '../../bench/karpenter-exact';
import { benchCatalog, BENCH_NOW, planningOf, worldOf, type SimCluster } from '../../bench/disruption-cluster';

describe('batchGateNeeded', () => {
  const input = karpenterExact(50);
  const byKind = (prefix: string) => input.pods.filter((p) => p.name.startsWith(prefix)).map((p) => `${p.namespace}/${p.name}`);

  it.each([
    ['generic', false],
    ['host-spread', true],
    ['zone-spread', true],
    ['zone-affinity', true],
    ['host-anti', true],
  ])('two claims holding %s pods: %s', (kind, expected) => {
    const pods = byKind(kind);
    expect(pods.length).toBeGreaterThan(1);
    expect(batchGateNeeded([{ pods: pods.slice(0, 1) }, { pods: pods.slice(1) }], input.pods)).toBe(expected);
  });

  it('not for one claim, nor for rules only on pods the new claims do not hold', () => {
    const spread = byKind('zone-spread');
    expect(batchGateNeeded([{ pods: spread }], input.pods)).toBe(false);
    expect(batchGateNeeded([{ pods: byKind('generic').slice(0, 2) }, { pods: byKind('generic').slice(2) }], input.pods)).toBe(false);
  });

  it('not for a ScheduleAnyway spread (it never keeps a pod Pending)', () => {
    const soft = input.pods.map((p) => ({ ...p, topologySpread: p.topologySpread.map((c) => ({ ...c, whenUnsatisfiable: 'ScheduleAnyway' as const })) }));
    const spread = byKind('zone-spread');
    expect(batchGateNeeded([{ pods: spread.slice(0, 1) }, { pods: spread.slice(1) }], soft)).toBe(false);
  });
});

describe('siblingsNotAtGate', () => {
  const gated = { [BATCH_GATE_ANNOTATION]: 'true' };
  const claim = (name: string, extra: { deleting?: boolean; nodeName?: string; initialized?: [string, string?]; annotations?: Record<string, string> } = {}): BatchSibling => ({
    metadata: { name, annotations: extra.annotations ?? gated, ...(extra.deleting ? { deletionTimestamp: '2026-11-29T00:00:00Z' } : {}) },
    status: {
      ...(extra.nodeName ? { nodeName: extra.nodeName } : {}),
      conditions: extra.initialized ? [{ type: 'Initialized', status: extra.initialized[0], ...(extra.initialized[1] ? { reason: extra.initialized[1] } : {}) }] : [],
    },
  });

  it('waits for siblings launching, registering or held by their DaemonSet pods; not for itself, those at the gate, initialized or going', () => {
    const siblings = [
      claim('self', { nodeName: 'n0', initialized: ['Unknown', AWAITING_BATCH_REASON] }),
      claim('launching'),
      claim('daemonsets', { nodeName: 'n1', initialized: ['Unknown', 'AwaitingDaemonSetPods'] }),
      claim('at-gate', { nodeName: 'n2', initialized: ['Unknown', AWAITING_BATCH_REASON] }),
      claim('opened', { nodeName: 'n3', initialized: ['True'] }),
      claim('failed-launch', { deleting: true }),
      claim('by-hand', { annotations: {} }),
      // at the gate by its condition, but with no node recorded: not openable, so still waited for
      claim('no-node', { initialized: ['Unknown', AWAITING_BATCH_REASON] }),
    ];
    expect(siblingsNotAtGate(siblings, 'self')).toEqual(['daemonsets', 'launching', 'no-node']);
    expect(siblingsNotAtGate(siblings.filter((c) => ['self', 'at-gate', 'opened', 'failed-launch'].includes(c.metadata.name)), 'self')).toEqual([]);
  });
});

describe('a provisioner batch carries the gate to its claims', () => {
  const pool = { types: ['m5.large', 'm5.xlarge'], zones: ['us-east-1a', 'us-east-1b'], budget: '10%' };
  const empty: SimCluster = { pool, catalog: benchCatalog(pool), nodes: new Map(), pods: new Map(), launched: 0 };
  const pod = (name: string, antiAffinity: boolean) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'app', labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'main', resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
      ...(antiAffinity ? { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } } } : {}),
    },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
  });
  const plan = async (antiAffinity: boolean, podNamesBudget?: number) => planView(planningOf(empty, { ...worldOf(empty), provisionable: [pod('a', antiAffinity), pod('b', antiAffinity)] }, 'batch-g'), {
    now: BENCH_NOW,
    solve: async (input) => solve(input),
    ...(podNamesBudget !== undefined ? { podNamesBudget } : {}),
  });

  it('hostname anti-affinity on two claims: gated, and every manifest says so', async () => {
    const { planned } = await plan(true, PLANNED_PODS_BUDGET_BYTES);
    expect(planned.claims).toHaveLength(2);
    expect(planned.batchGate).toBe(true);
    const create = batchToCreate(planned);
    expect(create.batchGate).toBe(true);
    for (const claim of create.claims) {
      const manifest = claimManifest(claim, create.templates[0]!, create.optionLists[claim.options] ?? [], create.batchId, [], { batchGate: create.batchGate === true });
      expect(manifest.metadata.annotations?.[BATCH_GATE_ANNOTATION]).toBe('true');
    }
  });

  it('no rules, or a batch that nominates nothing (a disruption\'s replacements): not gated', async () => {
    const plain = await plan(false, PLANNED_PODS_BUDGET_BYTES);
    expect(plain.planned.batchGate).toBeUndefined();
    expect('batchGate' in batchToCreate(plain.planned)).toBe(false);
    const replacements = await plan(true);
    expect(replacements.planned.claims).toHaveLength(2);
    expect(replacements.planned.batchGate).toBeUndefined();
    const claim = replacements.planned.claims[0]!;
    expect(claimManifest(claim, replacements.planned.templates[0]!, [], 'batch-g').metadata.annotations?.[BATCH_GATE_ANNOTATION]).toBeUndefined();
  });
});
