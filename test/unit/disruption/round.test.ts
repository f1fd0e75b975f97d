// One round's emptiness command: budgets per pool, order, blocked reasons, validation.
import { budgetSchema, disruptionSchema } from '../../../core/api/disruption';
import { disruptionRound, stillValid, type CandidateNode, type RoundInput, type RoundPool } from '../../../core/disruption';

const now = Date.parse('2026-11-24T12:00:00Z');
const emptyNode = (name: string, o: Partial<CandidateNode> = {}): CandidateNode => ({
  nodeClaim: name,
  node: `node-${name}`,
  nodePool: 'default',
  initialized: true,
  deleting: false,
  doNotDisrupt: false,
  labels: {},
  consolidatableAt: now - 1,
  pods: [{ namespace: 'kube-system', name: `ds-${name}`, doNotDisrupt: false, reschedulable: false }],
  ...o,
});
const busy = (name: string) => emptyNode(name, { pods: [{ namespace: 'app', name: `web-${name}`, doNotDisrupt: false, reschedulable: true }] });
const pool = (budgets: Record<string, unknown>[] = [{ nodes: '10%' }], nodes = 10, disrupting = 0, name = 'default'): RoundPool => ({
  name,
  disruption: disruptionSchema.parse({}),
  budgets: budgets.map((b) => budgetSchema.parse(b)),
  counts: { nodes, disrupting },
});
const input = (nodes: CandidateNode[], pools: RoundPool[] = [pool()]): RoundInput => ({ now, nodes, pools: new Map(pools.map((p) => [p.name, p])) });

it('no empty node, no command', () => {
  const r = disruptionRound(input([busy('a'), busy('b')]));
  expect(r.command).toBeUndefined();
  expect(r.considered.emptiness).toBe(0);
});

it('every empty node within budget goes in one command', () => {
  const r = disruptionRound(input([emptyNode('a'), busy('b'), emptyNode('c')], [pool([{ nodes: '5' }])]));
  expect(r.command).toEqual({ method: 'emptiness', reason: 'Empty', candidates: [{ nodeClaim: 'a', node: 'node-a', nodePool: 'default' }, { nodeClaim: 'c', node: 'node-c', nodePool: 'default' }], replace: false, summary: '2 empty node(s)' });
});

it('the budget caps each pool; the rest are blocked with the reason', () => {
  const r = disruptionRound(input([emptyNode('a'), emptyNode('b'), emptyNode('c')], [pool([{ nodes: '1' }], 10)]));
  expect(r.command?.candidates.map((c) => c.nodeClaim)).toEqual(['a']);
  expect(r.blocked).toEqual([
    { nodeClaim: 'b', method: 'emptiness', reason: 'budget of NodePool default allows 1 Empty disruption(s) this round' },
    { nodeClaim: 'c', method: 'emptiness', reason: 'budget of NodePool default allows 1 Empty disruption(s) this round' },
  ]);
});

it('nodes already disrupting use the budget up', () => {
  const r = disruptionRound(input([emptyNode('a')], [pool([{ nodes: '1' }], 10, 1)]));
  expect(r.command).toBeUndefined();
  expect(r.blocked).toEqual([{ nodeClaim: 'a', method: 'emptiness', reason: 'budget allows 1 Empty disruption(s) and 1 node(s) are already disrupting' }]);
});

it('a budget for Drifted only does not hold empty nodes', () => {
  const r = disruptionRound(input([emptyNode('a')], [pool([{ nodes: '0', reasons: ['Drifted'] }])]));
  expect(r.command?.candidates).toHaveLength(1);
});

it('a zero budget inside its window blocks; outside it does not', () => {
  const windowed = [{ nodes: '0', schedule: '0 9 * * *', duration: '8h' }];
  expect(disruptionRound(input([emptyNode('a')], [pool(windowed)])).command).toBeUndefined();
  expect(disruptionRound({ ...input([emptyNode('a')], [pool(windowed)]), now: Date.parse('2026-11-24T20:00:00Z') }).command?.candidates).toHaveLength(1);
});

it('do-not-disrupt on an empty node is reported as blocked', () => {
  const r = disruptionRound(input([emptyNode('a', { doNotDisrupt: true })]));
  expect(r.command).toBeUndefined();
  expect(r.blocked).toEqual([{ nodeClaim: 'a', method: 'emptiness', reason: 'it has karpenter.sh/do-not-disrupt' }]);
});

it('pools are budgeted separately', () => {
  const r = disruptionRound(input([emptyNode('a'), emptyNode('b', { nodePool: 'other' })], [pool([{ nodes: '0' }]), pool([{ nodes: '1' }], 10, 0, 'other')]));
  expect(r.command?.candidates.map((c) => c.nodeClaim)).toEqual(['b']);
});

describe('validation after the delay', () => {
  it('holds when the candidates are still empty and within budget', () => {
    const command = disruptionRound(input([emptyNode('a')])).command!;
    expect(stillValid(command, input([emptyNode('a')]))).toEqual({ ok: true });
  });
  it('fails when a pod landed on a candidate meanwhile, saying which', () => {
    const command = disruptionRound(input([emptyNode('a'), emptyNode('b')], [pool([{ nodes: '5' }])])).command!;
    expect(stillValid(command, input([emptyNode('a'), busy('b')], [pool([{ nodes: '5' }])]))).toEqual({ ok: false, reason: 'b: it runs pods that would have to move' });
  });
  it('fails when a candidate is gone', () => {
    const command = disruptionRound(input([emptyNode('a')])).command!;
    expect(stillValid(command, input([]))).toEqual({ ok: false, reason: 'a: it is gone' });
  });
});

describe('drift', () => {
  const drifted = (name: string, since: number, o: Partial<CandidateNode> = {}): CandidateNode => ({ ...busy(name), drifted: { reason: 'AMIDrift', since }, ...o });
  it('one drifted node per round: empty ones first, then the oldest', () => {
    const r = disruptionRound(input([drifted('old', 1), drifted('older', 0), drifted('empty', 5, { pods: [], consolidatableAt: now + 60_000 })]));
    expect(r.command).toEqual({ method: 'drift', reason: 'Drifted', candidates: [{ nodeClaim: 'empty', node: 'node-empty', nodePool: 'default' }], replace: false, summary: 'drifted (AMIDrift), empty' });
    const next = disruptionRound(input([drifted('old', 1), drifted('older', 0)]));
    expect(next.command).toEqual(expect.objectContaining({ candidates: [expect.objectContaining({ nodeClaim: 'older' })], replace: true }));
  });
  it('emptiness goes before drift', () => {
    expect(disruptionRound(input([drifted('d', 0), emptyNode('e')])).command?.method).toBe('emptiness');
  });
  it('passes do-not-disrupt pods and PDBs by (eventual), but not a do-not-disrupt node', () => {
    const pinned = drifted('p', 0, { pods: [{ namespace: 'app', name: 'db', doNotDisrupt: true, reschedulable: true, blockingPdb: 'PodDisruptionBudget app/db' }] });
    expect(disruptionRound(input([pinned])).command?.candidates[0]?.nodeClaim).toBe('p');
    expect(disruptionRound(input([drifted('n', 0, { doNotDisrupt: true })])).command).toBeUndefined();
  });
  it('a budget for Drifted holds drift and says so; one for Empty does not', () => {
    const r = disruptionRound(input([drifted('d', 0)], [pool([{ nodes: '0', reasons: ['Drifted'] }])]));
    expect(r.command).toBeUndefined();
    expect(r.blocked).toEqual([{ nodeClaim: 'd', method: 'drift', reason: 'budget allows 0 Drifted disruptions now' }]);
    expect(disruptionRound(input([drifted('d', 0)], [pool([{ nodes: '0', reasons: ['Empty'] }])])).command?.method).toBe('drift');
  });
  it('validation: still drifted and within budget, else why not', () => {
    const command = disruptionRound(input([drifted('d', 0)])).command!;
    expect(stillValid(command, input([drifted('d', 0)]))).toEqual({ ok: true });
    expect(stillValid(command, input([busy('d')]))).toEqual({ ok: false, reason: 'd: it has not drifted' });
    expect(stillValid(command, input([drifted('d', 0)], [pool([{ nodes: '1' }], 10, 1)]))).toEqual({ ok: false, reason: 'd: budget allows 1 Drifted disruption(s) and 1 node(s) are already disrupting' });
  });
});
