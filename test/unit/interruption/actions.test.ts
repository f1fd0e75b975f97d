// What each kind of interruption does to the claim it names (Karpenter's actionForMessage,
// plus replacement-first for a spot warning with time to spare): one row per rule.
import {
  SPOT_WARNING_MS,
  claimAction,
  eventTimeOf,
  interruptedOffering,
  matchMessage,
  noticeEvent,
  INTERRUPTION_KINDS,
  type ActionContext,
  type ClaimAction,
  type InterruptibleClaim,
  type InterruptionKind,
} from '../../../core/interruption';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function aClaim(o: Partial<InterruptibleClaim> = {}): InterruptibleClaim {
  return { name: 'spot-abc12', instanceId: 'i-0abc', nodeName: 'ip-10-0-0-1.ec2.internal', nodePool: 'spot', instanceType: 'c6a.large', zone: 'us-east-1a', capacityType: 'spot', deleting: false, disrupting: false, ...o };
}
function aContext(o: Partial<ActionContext> = {}): ActionContext {
  return { now: T0 + 5_000, eventTime: T0, replacing: new Set(), drainReserveMs: 60_000, ...o };
}

describe('claimAction', () => {
  const drainBy = T0 + SPOT_WARNING_MS - 60_000;
  const rows: [rule: string, kind: InterruptionKind, claim: InterruptibleClaim, context: ActionContext, expected: ClaimAction['kind'] | ClaimAction][] = [
    ['a rebalance recommendation only tells', 'rebalance_recommendation', aClaim(), aContext(), 'notify'],
    ['… also for a claim already draining (the Event still goes out)', 'rebalance_recommendation', aClaim({ deleting: true }), aContext(), 'notify'],
    ['a spot warning with time to spare: replacement first, draining by warning + 2 min − reserve', 'spot_interrupted', aClaim(), aContext(), { kind: 'replaceFirst', drainBy }],
    ['a spot warning that arrived after the drain should have begun: drain now', 'spot_interrupted', aClaim(), aContext({ now: drainBy }), 'drain'],
    ['a spot warning for a claim with no node yet (nothing to move): drain now', 'spot_interrupted', aClaim({ nodeName: undefined }), aContext(), 'drain'],
    ['a spot warning for a node a disruption command is moving already: drain now, no second replacement', 'spot_interrupted', aClaim({ disrupting: true }), aContext(), 'drain'],
    ['a spot warning for a claim being replaced already (a duplicate message): nothing', 'spot_interrupted', aClaim(), aContext({ replacing: new Set(['spot-abc12']) }), 'none'],
    ['a spot warning for a claim already draining: nothing (never deleted twice)', 'spot_interrupted', aClaim({ deleting: true }), aContext(), 'none'],
    ['an EC2 scheduled change: drain', 'scheduled_change', aClaim(), aContext(), 'drain'],
    ['… not for a claim already draining', 'scheduled_change', aClaim({ deleting: true }), aContext(), 'none'],
    ['an instance stopping: drain', 'instance_stopped', aClaim(), aContext(), 'drain'],
    ['an instance terminating: drain, even while its replacement is being launched', 'instance_terminated', aClaim(), aContext({ replacing: new Set(['spot-abc12']) }), 'drain'],
    ['… not for a claim already draining', 'instance_terminated', aClaim({ deleting: true }), aContext(), 'none'],
  ];

  it.each(rows)('%s', (_rule, kind, claim, context, expected) => {
    const action = claimAction(kind, claim, context);
    if (typeof expected === 'string') expect(action.kind).toBe(expected);
    else expect(action).toEqual(expected);
  });

  it('a larger reserve drains earlier; a reserve of the whole warning never replaces first', () => {
    expect(claimAction('spot_interrupted', aClaim(), aContext({ drainReserveMs: 90_000 }))).toEqual({ kind: 'replaceFirst', drainBy: T0 + 30_000 });
    expect(claimAction('spot_interrupted', aClaim(), aContext({ drainReserveMs: SPOT_WARNING_MS })).kind).toBe('drain');
  });
});

describe('noticeEvent: Karpenter\'s Event for each kind', () => {
  it.each(INTERRUPTION_KINDS)('%s has a reason and a message', (kind) => {
    const e = noticeEvent(kind);
    expect(e.reason).toMatch(/^[A-Z][A-Za-z]+$/);
    expect(e.message.length).toBeGreaterThan(10);
  });
  it('a spot interruption warns; a rebalance recommendation is Normal', () => {
    expect(noticeEvent('spot_interrupted')).toEqual({ type: 'Warning', reason: 'SpotInterrupted', message: 'Spot interruption warning was triggered' });
    expect(noticeEvent('rebalance_recommendation').type).toBe('Normal');
  });
});

describe('interruptedOffering', () => {
  it('a spot interruption takes the claim\'s spot offering away (instance type and zone from its labels)', () => {
    expect(interruptedOffering('spot_interrupted', aClaim())).toEqual({ instanceType: 'c6a.large', zone: 'us-east-1a', capacityType: 'spot' });
  });
  it('no other kind does, nor a claim without those labels', () => {
    expect(interruptedOffering('instance_terminated', aClaim())).toBeUndefined();
    expect(interruptedOffering('rebalance_recommendation', aClaim())).toBeUndefined();
    expect(interruptedOffering('spot_interrupted', aClaim({ zone: undefined }))).toBeUndefined();
  });
});

describe('matchMessage', () => {
  const claims = new Map([['i-0abc', aClaim()]]);
  it('matches by instance id, once per instance, and counts the rest as unmatched', () => {
    const out = matchMessage({ kind: 'scheduled_change', id: 'e', instanceIds: ['i-0abc', 'i-0abc', 'i-other'] }, claims);
    expect([out.matched.map((c) => c.name), out.unmatched]).toEqual([['spot-abc12'], ['i-other']]);
  });
  it('an instance of another cluster matches nothing', () => {
    expect(matchMessage({ kind: 'spot_interrupted', id: 'e', instanceIds: ['i-elsewhere'] }, claims)).toEqual({ matched: [], unmatched: ['i-elsewhere'] });
  });
});

describe('eventTimeOf', () => {
  it('is the event\'s own time, else when SQS took the message, else when it was received', () => {
    expect(eventTimeOf({ time: '2026-01-01T00:00:00Z' }, T0 + 1, T0 + 2)).toBe(T0);
    expect(eventTimeOf({}, T0 + 1, T0 + 2)).toBe(T0 + 1);
    expect(eventTimeOf({}, undefined, T0 + 2)).toBe(T0 + 2);
  });
});
