// The interruption parser's rules (Karpenter's parser.go and messages/*): each rule with a
// case it accepts and a case it must not, then malformed bodies — none of which may throw.
import { parseInterruptionMessage, type ParsedMessage } from '../../../core/interruption';
import { aRebalanceRecommendation, aScheduledChange, aSpotInterruption, aStateChange, body } from '../../../dev/interruption-events';
import { mulberry32 } from '../../support/random';

const I = 'i-0123456789abcdef0';
const J = 'i-0fedcba9876543210';
const at = '2026-01-01T00:00:00.000Z';

/** A copy of `event` with `edit` applied (to delete or retype fields). */
function edited<T extends object>(event: T, edit: (e: Record<string, unknown> & { detail: Record<string, unknown> }) => void): T {
  const copy = structuredClone(event) as Record<string, unknown> & { detail: Record<string, unknown> };
  edit(copy);
  return copy as unknown as T;
}

const kindOf = (m: ParsedMessage) => m.kind;

describe('parseInterruptionMessage: one rule per row, a case it takes and one it must not', () => {
  const rows: [rule: string, input: unknown, expected: Partial<ParsedMessage> & { kind: ParsedMessage['kind'] }][] = [
    // aws.ec2 / EC2 Spot Instance Interruption Warning
    ['spot warning → spot_interrupted, its instance and time', aSpotInterruption(I), { kind: 'spot_interrupted', instanceIds: [I], time: at }],
    ['spot warning without an instance id → unparseable', edited(aSpotInterruption(I), (e) => delete e.detail['instance-id']), { kind: 'unparseable' }],
    // aws.ec2 / EC2 Instance Rebalance Recommendation
    ['rebalance recommendation → rebalance_recommendation', aRebalanceRecommendation(I), { kind: 'rebalance_recommendation', instanceIds: [I] }],
    ['rebalance recommendation with a numeric instance id → unparseable', edited(aRebalanceRecommendation(I), (e) => (e.detail['instance-id'] = 42)), { kind: 'unparseable' }],
    // aws.ec2 / EC2 Instance State-change Notification: stopping, stopped, shutting-down, terminated
    ['state change to stopping → instance_stopped', aStateChange(I, 'stopping'), { kind: 'instance_stopped', instanceIds: [I], state: 'stopping' }],
    ['state change to stopped → instance_stopped', aStateChange(I, 'stopped'), { kind: 'instance_stopped', state: 'stopped' }],
    ['state change to shutting-down → instance_terminated', aStateChange(I, 'shutting-down'), { kind: 'instance_terminated', state: 'shutting-down' }],
    ['state change to terminated → instance_terminated', aStateChange(I, 'terminated'), { kind: 'instance_terminated', state: 'terminated' }],
    ['state names are read case-insensitively (STOPPING)', aStateChange(I, 'STOPPING'), { kind: 'instance_stopped', state: 'stopping' }],
    ['state change to running → no_op', aStateChange(I, 'running'), { kind: 'no_op' }],
    ['state change to pending → no_op', aStateChange(I, 'pending'), { kind: 'no_op' }],
    ['state change without a state → unparseable', edited(aStateChange(I, 'stopping'), (e) => delete e.detail['state']), { kind: 'unparseable' }],
    // aws.health / AWS Health Event: EC2 scheduledChange only
    ['EC2 scheduled change → scheduled_change, every affected instance', aScheduledChange([I, J]), { kind: 'scheduled_change', instanceIds: [I, J] }],
    ['a scheduled change of another service → no_op', aScheduledChange([I], { service: 'RDS' }), { kind: 'no_op' }],
    ['an EC2 health issue (not a scheduled change) → no_op', aScheduledChange([I], { category: 'issue' }), { kind: 'no_op' }],
    ['a scheduled change naming no entities → scheduled_change of none (Karpenter: matches nothing)', edited(aScheduledChange([I]), (e) => delete e.detail['affectedEntities']), { kind: 'scheduled_change', instanceIds: [] }],
    ['affected entities that are not a list → unparseable', edited(aScheduledChange([I]), (e) => (e.detail['affectedEntities'] = 'i-1')), { kind: 'unparseable' }],
    // the envelope
    ['a known detail-type of another version → no_op (parsers are keyed by version too)', edited(aSpotInterruption(I), (e) => (e['version'] = '1')), { kind: 'no_op' }],
    ['a known detail-type from another source → no_op', edited(aSpotInterruption(I), (e) => (e['source'] = 'aws.autoscaling')), { kind: 'no_op' }],
    ['an event autonode does not handle (capacity reservation interruption) → no_op', edited(aSpotInterruption(I), (e) => (e['detail-type'] = 'EC2 Capacity Reservation Instance Interruption Warning')), { kind: 'no_op' }],
    ['an event without a time still parses (the queue\'s SentTimestamp stands in)', edited(aSpotInterruption(I), (e) => delete e['time']), { kind: 'spot_interrupted', instanceIds: [I] }],
    ['a time that is not RFC 3339 → unparseable (as Go\'s time.Time)', edited(aSpotInterruption(I), (e) => (e['time'] = 'yesterday')), { kind: 'unparseable' }],
    ['… also one a lenient date parser would take ("day 4")', edited(aSpotInterruption(I), (e) => (e['time'] = 'day 4')), { kind: 'unparseable' }],
    ['an RFC 3339 time with an offset and fractions is a time', edited(aSpotInterruption(I), (e) => (e['time'] = '2026-01-01T01:00:00.250+01:00')), { kind: 'spot_interrupted', time: '2026-01-01T00:00:00.250Z' }],
    ['a source that is not a string → unparseable', edited(aSpotInterruption(I), (e) => (e['source'] = 7)), { kind: 'unparseable' }],
  ];

  it.each(rows)('%s', (_rule, event, expected) => {
    expect(parseInterruptionMessage(body(event))).toEqual(expect.objectContaining(expected));
  });

  it('keeps the event id, for the logs and the status query', () => {
    expect(parseInterruptionMessage(body(aSpotInterruption(I, { id: 'evt-1' })))).toEqual({ kind: 'spot_interrupted', id: 'evt-1', time: at, instanceIds: [I] });
  });

  it('says which field made a known event unparseable', () => {
    const parsed = parseInterruptionMessage(body(edited(aSpotInterruption(I), (e) => delete e.detail['instance-id'])));
    expect(parsed).toEqual({ kind: 'unparseable', why: expect.stringContaining('detail.instance-id') });
  });
});

describe('parseInterruptionMessage: malformed bodies', () => {
  const malformed: [what: string, raw: string | undefined, kind: ParsedMessage['kind']][] = [
    ['no body at all', undefined, 'unparseable'],
    ['an empty body (Karpenter: no-op)', '', 'no_op'],
    ['not JSON', 'hello', 'unparseable'],
    ['truncated JSON', body(aSpotInterruption(I)).slice(0, 40), 'unparseable'],
    ['a number', '42', 'unparseable'],
    ['a string', '"EC2 Spot Instance Interruption Warning"', 'unparseable'],
    ['null', 'null', 'unparseable'],
    ['a list of events', body([aSpotInterruption(I)]), 'unparseable'],
    ['an empty object (no source, no detail-type)', '{}', 'no_op'],
    ['an SNS envelope around the event', body({ Type: 'Notification', Message: body(aSpotInterruption(I)) }), 'no_op'],
    ['a spot warning whose detail is a string', body({ ...aSpotInterruption(I), detail: I }), 'unparseable'],
  ];

  it.each(malformed)('%s → %s', (_what, raw, kind) => {
    expect(kindOf(parseInterruptionMessage(raw))).toBe(kind);
  });

  it('never throws, whatever the bytes (2,000 generated bodies)', () => {
    const random = mulberry32(16);
    const pieces = ['{', '}', '[', ']', '"', ':', ',', 'null', '0', '"version"', '"0"', '"source"', '"aws.ec2"', '"detail-type"', '"detail"', '"instance-id"', '\\', '\u0000', '\ud800', ' '];
    const valid = body(aSpotInterruption(I));
    for (let n = 0; n < 2_000; n++) {
      const raw =
        n % 2 === 0
          ? Array.from({ length: 1 + Math.floor(random() * 30) }, () => pieces[Math.floor(random() * pieces.length)]).join('')
          : // a valid event with one character changed
            ((i) => valid.slice(0, i) + pieces[Math.floor(random() * pieces.length)] + valid.slice(i + 1))(Math.floor(random() * valid.length));
      const parsed = parseInterruptionMessage(raw);
      expect(['spot_interrupted', 'no_op', 'unparseable']).toContain(parsed.kind);
    }
  });
});
