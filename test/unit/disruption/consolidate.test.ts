// Single-node consolidation's verdict, one failing case per rule.
import { disruptionSchema, budgetSchema } from '../../../core/api/disruption';
import { consolidationDecision, disruptionRound, type CandidateNode, type ConsolidationSimulation, type ReplacementOption, type RoundPool } from '../../../core/disruption';

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
] as const)('%s', (_name, s, expected) => {
  expect(consolidationDecision(s)).toEqual(expected);
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
  it.each([
    ['WhenEmpty', pool({ consolidationPolicy: 'WhenEmpty' })],
    ['consolidateAfter Never', pool({ consolidateAfter: 'Never' })],
    ['a zero Underutilized budget', pool({}, [{ nodes: '0', reasons: ['Underutilized'] } as never])],
  ])('none under %s', (_name, p) => {
    expect(round([node('a', 1)], p).consolidate ?? []).toEqual([]);
  });
});
