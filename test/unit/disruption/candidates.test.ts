// Candidate rules, one failing case per rule (karpenter.md §1.5 "Candidate filtering").
import { disruptionSchema } from '../../../core/api/disruption';
import { candidateVerdict, consolidatableAt, disruptionCost, driftOrder, evictionCost, nominationWindowMs, type CandidateNode, type CandidatePod, type CandidatePool, type DisruptionMethod } from '../../../core/disruption';

const now = Date.parse('2026-11-24T12:00:00Z');
const pod = (o: Partial<CandidatePod> = {}): CandidatePod => ({ namespace: 'app', name: 'web-1', doNotDisrupt: false, reschedulable: true, ...o });
const node = (o: Partial<CandidateNode> = {}): CandidateNode => ({
  nodeClaim: 'default-abcde',
  node: 'ip-10-0-0-1.ec2.internal',
  nodePool: 'default',
  initialized: true,
  deleting: false,
  doNotDisrupt: false,
  labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'on-demand', 'topology.kubernetes.io/zone': 'us-east-1a' },
  consolidatableAt: now - 1,
  pods: [pod()],
  ...o,
});
const pool = (disruption: Record<string, unknown> = {}): CandidatePool => ({ name: 'default', disruption: disruptionSchema.parse(disruption) });
const verdict = (n: CandidateNode, method: DisruptionMethod, p: CandidatePool | undefined = pool()) => candidateVerdict(n, p, method, now);

describe('every method refuses a node that is not a candidate at all', () => {
  it.each([
    ['not registered', { node: undefined }, /not registered/],
    ['not initialized', { initialized: false }, /not initialized/],
    ['being deleted', { deleting: true }, /being deleted/],
    ['tainted karpenter.sh/disrupted by another command', { disruptedElsewhere: true }, /karpenter\.sh\/disrupted by another command/],
    ['nominated within the window', { nominatedUntil: now + 5_000 }, /nominated/],
    ['do-not-disrupt on the node', { doNotDisrupt: true }, /karpenter\.sh\/do-not-disrupt/],
    ['no nodepool label', { nodePool: undefined }, /no karpenter\.sh\/nodepool/],
  ] as const)('%s', (_name, change, reason) => {
    for (const method of ['emptiness', 'drift', 'consolidation'] as const) {
      const v = verdict(node({ ...change, pods: [], drifted: { reason: 'NodePoolDrifted', since: now - 1 } }), method);
      expect(v).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    }
  });
  it('a nomination that has run out no longer protects the node', () => {
    expect(verdict(node({ nominatedUntil: now - 1 }), 'consolidation')).toEqual({ ok: true });
  });
  it('a NodePool that no longer exists', () => {
    expect(candidateVerdict(node(), undefined, 'consolidation', now)).toEqual({ ok: false, reason: 'its NodePool default does not exist' });
  });
  it('the nomination window is max(2 × batchMax, 10 s)', () => {
    expect(nominationWindowMs(10_000)).toBe(20_000);
    expect(nominationWindowMs(1_000)).toBe(10_000);
  });
});

describe('pods: graceful methods stop at do-not-disrupt and blocking PDBs; eventual ones do not', () => {
  const dnd = node({ pods: [pod({ doNotDisrupt: true })] });
  const pdb = node({ pods: [pod({ blockingPdb: 'PodDisruptionBudget app/web' })] });
  it.each([
    ['consolidation', dnd, false],
    ['consolidation', pdb, false],
    ['drift', node({ ...dnd, drifted: { reason: 'AMIDrift', since: now } }), true],
    ['drift', node({ ...pdb, drifted: { reason: 'AMIDrift', since: now } }), true],
    ['consolidation', node({ ...pdb, terminationGracePeriod: '1h' }), true],
  ] as const)('%s on %# → ok %s', (method, n, ok) => {
    expect(verdict(n, method).ok).toBe(ok);
  });
  it('says which pod and which PDB', () => {
    expect(verdict(pdb, 'consolidation')).toEqual({ ok: false, reason: 'pod app/web-1 is protected by PodDisruptionBudget app/web' });
  });
});

describe('emptiness', () => {
  const empty = node({ pods: [pod({ reschedulable: false, name: 'fluentd-x' })] });
  it('an empty, consolidatable node is a candidate (DaemonSet pods do not count)', () => {
    expect(verdict(empty, 'emptiness')).toEqual({ ok: true });
  });
  it.each([
    ['pods that must move', node(), /would have to move/],
    ['consolidateAfter not elapsed', node({ ...empty, consolidatableAt: now + 1 }), /not consolidatable yet/],
    ['consolidateAfter Never', node({ ...empty, consolidatableAt: undefined }), /Never/],
  ])('%s', (_n, n, reason) => {
    const p = _n === 'consolidateAfter Never' ? pool({ consolidateAfter: 'Never' }) : pool();
    expect(verdict(n, 'emptiness', p)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });
});

describe('consolidation', () => {
  it('a busy, consolidatable node is a candidate', () => {
    expect(verdict(node(), 'consolidation')).toEqual({ ok: true });
  });
  it.each([
    ['missing zone label', node({ labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'spot' } }), pool(), /topology\.kubernetes\.io\/zone/],
    ['empty (emptiness handles it)', node({ pods: [] }), pool(), /emptiness handles it/],
    ['policy WhenEmpty', node(), pool({ consolidationPolicy: 'WhenEmpty' }), /WhenEmpty/],
    ['consolidateAfter Never', node(), pool({ consolidateAfter: 'Never' }), /Never/],
    ['not consolidatable yet', node({ consolidatableAt: now + 60_000 }), pool(), /not consolidatable yet/],
  ])('%s', (_n, n, p, reason) => {
    expect(verdict(n, 'consolidation', p)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });
});

describe('drift', () => {
  it('only drifted nodes', () => {
    expect(verdict(node(), 'drift')).toEqual({ ok: false, reason: 'it has not drifted' });
    expect(verdict(node({ drifted: { reason: 'NodePoolDrifted', since: now } }), 'drift')).toEqual({ ok: true });
  });
  it('oldest first, empty nodes first', () => {
    const a = node({ nodeClaim: 'a', drifted: { reason: 'x', since: 3 } });
    const b = node({ nodeClaim: 'b', drifted: { reason: 'x', since: 1 } });
    const c = node({ nodeClaim: 'c', drifted: { reason: 'x', since: 5 }, pods: [] });
    expect(driftOrder([a, b, c]).map((n) => n.nodeClaim)).toEqual(['c', 'b', 'a']);
  });
});

describe('Consolidatable and costs', () => {
  it('consolidateAfter after the last pod event, or after initialization', () => {
    expect(consolidatableAt({ initializedAt: 1_000, consolidateAfter: '30s' })).toBe(31_000);
    expect(consolidatableAt({ initializedAt: 1_000, lastPodEventAt: 50_000, consolidateAfter: '30s' })).toBe(80_000);
    expect(consolidatableAt({ initializedAt: 1_000, consolidateAfter: 'Never' })).toBeUndefined();
    expect(consolidatableAt({ consolidateAfter: '0s' })).toBeUndefined();
  });
  it('eviction cost: 1 + deletion-cost/2^27 + priority/2^25, clamped to [-10, 10]', () => {
    expect(evictionCost({})).toBe(1);
    expect(evictionCost({ deletionCost: 2 ** 27 })).toBe(2);
    expect(evictionCost({ priority: 2 ** 25 * 4 })).toBe(5);
    expect(evictionCost({ priority: 2_000_000_000 })).toBe(10);
    expect(evictionCost({ deletionCost: -(2 ** 31) })).toBe(-10);
  });
  it('node cost: 1 plus its reschedulable pods, never negative ones', () => {
    expect(disruptionCost({ pods: [pod(), pod({ deletionCost: -(2 ** 31) }), pod({ reschedulable: false })] })).toBe(2);
  });
});
