// Consolidation's verdicts — single-node, multi-node and many-to-many — one failing case per rule.
import { disruptionSchema, budgetSchema } from '../../../core/api/disruption';
import { consolidationDecision, decidedShape, disruptionRound, moveDecision, sameShape, worstLaunchPrice, type CandidateNode, type ConsolidationDecision, type ConsolidationSimulation, type DecidedShape, type MoveSimulation, type ReplacementOption, type RoundPool } from '../../../core/disruption';

const opt = (instanceType: string, price: number, capacityType: 'spot' | 'on-demand' = 'on-demand'): ReplacementOption => ({ instanceType, offerings: [{ zone: 'a', capacityType, price, available: true }] });
const types = new Map([opt('m5.large', 0.096), opt('m5.xlarge', 0.192), opt('m5.2xlarge', 0.384)].map((o) => [o.instanceType, o]));
const sim = (o: Partial<ConsolidationSimulation>): ConsolidationSimulation => ({ candidate: { price: 0.192, capacityType: 'on-demand' }, claims: [], unschedulable: 0, types, ...o });
const claim = (options: string[]) => ({ name: 'r-1', options, capacityTypes: ['on-demand' as const] });

it.each([
  ['pods fit on the rest: delete, saving its price', sim({}), { kind: 'delete', savingsPerHour: 0.192 }],
  ['a pod would fit nowhere', sim({ unschedulable: 1 }), { kind: 'reject', reason: '1 pod(s) would fit nowhere without it' }],
  ['unknown current price', sim({ candidate: undefined }), { kind: 'reject', reason: 'its current offering has no known price' }],
  ['one node replaced by several: never', sim({ claims: [claim(['m5.large']), { ...claim(['m5.large']), name: 'r-2' }] }), { kind: 'reject', reason: 'its pods would need 2 new nodes (one node is never replaced by several)' }],
  ['one cheaper node: replace, keeping only the cheaper options', sim({ claims: [claim(['m5.large', 'm5.xlarge', 'm5.2xlarge'])] }), { kind: 'replace', claim: 'r-1', options: ['m5.large'], capacityTypes: ['on-demand'], savingsPerHour: expect.closeTo(0.096, 6) }],
  ['no cheaper node: keep it', sim({ claims: [claim(['m5.xlarge', 'm5.2xlarge'])] }), { kind: 'reject', reason: 'no replacement is cheaper than the $0.1920/h the node(s) cost' }],
  ['one node into two smaller, many-to-many off (Karpenter): never', sim({ candidate: { price: 0.384, capacityType: 'on-demand' }, claims: [claim(['m5.large']), { ...claim(['m5.large']), name: 'r-2' }] }), { kind: 'reject', reason: 'its pods would need 2 new nodes (one node is never replaced by several)' }],
] as const)('%s', (_name, s, expected) => {
  expect(consolidationDecision(s)).toEqual(expected);
});

describe('many-to-many: several nodes re-packed into a cheaper set', () => {
  const od = (price: number) => ({ price, capacityType: 'on-demand' as const });
  // two zones, the dearer one 10 % up: the worst launch price is what the rules count
  const zoned = (instanceType: string, price: number): ReplacementOption => ({
    instanceType,
    offerings: [
      { zone: 'a', capacityType: 'on-demand', price, available: true },
      { zone: 'b', capacityType: 'on-demand', price: price * 1.1, available: true },
    ],
  });
  const catalog = new Map([zoned('c5.large', 0.085), zoned('c5.xlarge', 0.17), zoned('m5.large', 0.096), zoned('m5.xlarge', 0.192), zoned('m5.2xlarge', 0.384)].map((o) => [o.instanceType, o]));
  const move = (o: Partial<MoveSimulation>): MoveSimulation => ({ candidates: [od(0.384), od(0.384), od(0.384)], claims: [], unschedulable: 0, types: catalog, ...o });
  const c = (name: string, options: string[]) => ({ name, options, capacityTypes: ['on-demand' as const] });
  const on = { spotToSpot: false, manyToMany: { minSavings: 0.05 } };

  it('three 2xlarge into two xlarge: a re-pack, every option sure to keep the 5 % saving', () => {
    const d = moveDecision(move({ claims: [c('r-1', ['m5.xlarge', 'm5.2xlarge']), c('r-2', ['c5.xlarge', 'm5.xlarge'])] }), on);
    expect(d).toEqual({
      kind: 'repack',
      claims: [
        { claim: 'r-1', options: ['m5.xlarge', 'm5.2xlarge'], capacityTypes: ['on-demand'] },
        { claim: 'r-2', options: ['c5.xlarge', 'm5.xlarge'], capacityTypes: ['on-demand'] },
      ],
      savingsPerHour: expect.closeTo(1.152 - 0.192 - 0.17, 6),
      // m5.2xlarge still fits r-1's share of the allowance in its dearer zone
      worstSavingsPerHour: expect.closeTo(1.152 - 0.384 * 1.1 - 0.192 * 1.1, 6),
      pricePerHour: expect.closeTo(0.362, 6),
    });
    if (d.kind !== 'repack') throw new Error('not a repack');
    // whatever zone each launch lands in, the move still saves at least 5 %
    const worst = d.claims.reduce((sum, k) => sum + Math.max(...k.options.map((o) => worstLaunchPrice(catalog.get(o)!, k.capacityTypes)!)), 0);
    expect(worst).toBeLessThanOrEqual(1.152 * 0.95);
  });
  it('off (Karpenter): two new nodes are refused', () => {
    expect(moveDecision(move({ claims: [c('r-1', ['m5.xlarge']), c('r-2', ['m5.xlarge'])] }), { spotToSpot: false })).toEqual({ kind: 'reject', reason: 'their pods would need 2 new nodes (many-to-many consolidation is off)' });
  });
  it('a saving under the threshold is refused (no churn for 2 %)', () => {
    const d = moveDecision(move({ candidates: [od(0.19), od(0.18)], claims: [c('r-1', ['m5.xlarge']), c('r-2', ['c5.xlarge'])] }), on);
    expect(d).toEqual({ kind: 'reject', reason: expect.stringMatching(/saves less than 5 %/) });
  });
  it('a share no option fits for sure is refused, naming the replacement', () => {
    // best case 0.36 of 0.384 is within 5 %, but m5.xlarge's dearer zone is not
    const d = moveDecision(move({ candidates: [od(0.384)], claims: [c('r-1', ['m5.xlarge']), c('r-2', ['c5.xlarge'])] }), { spotToSpot: false, manyToMany: { minSavings: 0.0 } });
    expect(d).toEqual({ kind: 'reject', reason: expect.stringMatching(/^replacement r-1: no option is sure to cost at most/) });
  });
  it('spot candidates re-packed onto spot need spot-to-spot', () => {
    const spot = { price: 0.1, capacityType: 'spot' as const };
    const d = moveDecision(move({ candidates: [spot, spot, spot], claims: [{ name: 'r-1', options: ['m5.large'], capacityTypes: ['spot', 'on-demand'] }, { name: 'r-2', options: ['m5.large'], capacityTypes: ['spot', 'on-demand'] }] }), on);
    expect(d).toEqual({ kind: 'reject', reason: 'replacing spot capacity with spot needs spot-to-spot consolidation turned on' });
  });
  it('several nodes whose pods fit on the rest: delete them all', () => {
    expect(moveDecision(move({}), on)).toEqual({ kind: 'delete', savingsPerHour: expect.closeTo(1.152, 6) });
  });
  it('one node of unknown price stops the move', () => {
    expect(moveDecision(move({ candidates: [od(0.384), undefined] }), on)).toEqual({ kind: 'reject', reason: '1 of the nodes have no known price' });
  });
});

describe('candidates in a round', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  const node = (name: string, pods: number, o: Partial<CandidateNode> = {}): CandidateNode => ({
    nodeClaim: name,
    node: `node-${name}`,
    nodePool: 'default',
    initialized: true,
    deleting: false,
    doNotDisrupt: false,
    labels: { 'node.kubernetes.io/instance-type': 'm5.xlarge', 'karpenter.sh/capacity-type': 'on-demand', 'topology.kubernetes.io/zone': 'a' },
    consolidatableAt: now - 1,
    pods: Array.from({ length: pods }, (_, i) => ({ namespace: 'app', name: `${name}-${i}`, doNotDisrupt: false, reschedulable: true })),
    ...o,
  });
  const pool = (disruption: Record<string, unknown> = {}, budgets = [{ nodes: '10%' }]): RoundPool => ({ name: 'default', disruption: disruptionSchema.parse(disruption), budgets: budgets.map((b) => budgetSchema.parse(b)), counts: { nodes: 10, disrupting: 0 } });
  const round = (nodes: CandidateNode[], p = pool()) => disruptionRound({ now, nodes, pools: new Map([[p.name, p]]) });
  it('busy consolidatable nodes, cheapest to disrupt first, when nothing else has a command', () => {
    const r = round([node('b', 3), node('a', 1)]);
    expect(r.command).toBeUndefined();
    expect(r.consolidate?.map((c) => c.nodeClaim)).toEqual(['a', 'b']);
  });
  it('multi-node candidates: the same order, as many per pool as the budget allows at once', () => {
    // 10 % of 10 nodes: 1 at once — no multi-node command
    expect(round([node('b', 3), node('a', 1), node('c', 2)]).multiNode).toEqual([]);
    const r = round([node('b', 3), node('a', 1), node('c', 2)], pool({}, [{ nodes: '2' }]));
    expect(r.multiNode?.map((c) => c.nodeClaim)).toEqual(['a', 'c']);
  });
  it('multi-node candidates are capped at 100', () => {
    const many = Array.from({ length: 150 }, (_, i) => node(`n${String(i).padStart(3, '0')}`, 1));
    const p = { ...pool({}, [{ nodes: '100%' }]), counts: { nodes: 150, disrupting: 0 } };
    expect(round(many, p).multiNode).toHaveLength(100);
  });
  it.each([
    ['WhenEmpty', pool({ consolidationPolicy: 'WhenEmpty' })],
    ['consolidateAfter Never', pool({ consolidateAfter: 'Never' })],
    ['a zero Underutilized budget', pool({}, [{ nodes: '0', reasons: ['Underutilized'] } as never])],
  ])('none under %s', (_name, p) => {
    expect(round([node('a', 1)], p).consolidate ?? []).toEqual([]);
  });
});

describe('sameShape: a consolidation re-simulated after the validation delay (validation.go)', () => {
  const repack = (claims: number, savingsPerHour: number): ConsolidationDecision => ({
    kind: 'repack',
    claims: Array.from({ length: claims }, (_, i) => ({ claim: `r-${i}`, options: ['m5.large'], capacityTypes: ['on-demand'] })),
    savingsPerHour,
    worstSavingsPerHour: savingsPerHour / 2,
    pricePerHour: 1,
  });
  const replace = (options: string[]): ConsolidationDecision => ({ kind: 'replace', claim: 'r', options, capacityTypes: ['on-demand'], savingsPerHour: 0.1 });
  it.each<[string, DecidedShape, ConsolidationDecision, boolean]>([
    ['a delete that is still a delete', { kind: 'delete' }, { kind: 'delete', savingsPerHour: 0.1 }, true],
    ['a delete whose pods now need a node', { kind: 'delete' }, replace(['m5.large']), false],
    ['a delete now rejected', { kind: 'delete' }, { kind: 'reject', reason: 'a pod fits nowhere' }, false],
    ['a replacement with the same options', { kind: 'replace', options: ['m5.large', 'c5.large'] }, replace(['m5.large', 'c5.large']), true],
    ['a replacement with fewer of the options', { kind: 'replace', options: ['m5.large', 'c5.large'] }, replace(['c5.large']), true],
    ['a replacement that now needs an option not decided', { kind: 'replace', options: ['c5.large'] }, replace(['c5.large', 'm5.xlarge']), false],
    ['a replacement that became a delete (Karpenter: another shape)', { kind: 'replace', options: ['c5.large'] }, { kind: 'delete', savingsPerHour: 0.2 }, false],
    ['a replacement whose pods now need two nodes', { kind: 'replace', options: ['c5.large'] }, repack(2, 0.3), false],
    ['a re-pack that still saves as much', { kind: 'repack', claims: 2, savingsPerHour: 0.2 }, repack(2, 0.2), true],
    ['a re-pack that now needs fewer nodes', { kind: 'repack', claims: 3, savingsPerHour: 0.2 }, repack(2, 0.25), true],
    ['a re-pack that became a delete', { kind: 'repack', claims: 2, savingsPerHour: 0.2 }, { kind: 'delete', savingsPerHour: 0.4 }, true],
    ['a re-pack that needs more nodes now', { kind: 'repack', claims: 2, savingsPerHour: 0.2 }, repack(3, 0.25), false],
    ['a re-pack that saves less now', { kind: 'repack', claims: 2, savingsPerHour: 0.2 }, repack(2, 0.15), false],
    ['a re-pack now below the threshold', { kind: 'repack', claims: 2, savingsPerHour: 0.2 }, { kind: 'reject', reason: 'saves 3 %, under 5 %' }, false],
  ])('%s → %s', (_name, decided, now, ok) => {
    const verdict = sameShape(decided, now);
    expect(verdict.ok).toBe(ok);
    if (!verdict.ok) expect(verdict.reason).toMatch(/^re-simulated after the validation delay: /);
  });

  it('decidedShape keeps what validation compares', () => {
    expect(decidedShape({ kind: 'delete', savingsPerHour: 1 })).toEqual({ kind: 'delete' });
    expect(decidedShape({ kind: 'replace', claim: 'r', options: ['a', 'b'], capacityTypes: ['spot'], savingsPerHour: 1 })).toEqual({ kind: 'replace', options: ['a', 'b'] });
    expect(decidedShape(repack(3, 0.5) as Exclude<ConsolidationDecision, { kind: 'reject' }>)).toEqual({ kind: 'repack', claims: 3, savingsPerHour: 0.5 });
  });
});
