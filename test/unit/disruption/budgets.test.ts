// Budget rules, one row each (karpenter.md §1.5 "Budgets"; nodepool.go Budget.IsActive /
// GetAllowedDisruptions / GetAllowedDisruptionsByReason).
import { budgetSchema } from '../../../core/api/disruption';
import { UNBOUNDED, allowedByReason, budgetActive, budgetAllows, budgetBlock, disruptionsLeft } from '../../../core/disruption';

const b = (o: Record<string, unknown>) => budgetSchema.parse(o);
const at = (iso: string) => new Date(iso);

describe('budgetActive: active for `duration` after each firing of the UTC schedule', () => {
  const weekdays9to5 = { schedule: '0 9 * * mon-fri', duration: '8h' };
  it.each([
    ['Tuesday 09:00 exactly (fires now)', '2026-11-24T09:00:00Z', true],
    ['Tuesday 12:30', '2026-11-24T12:30:00Z', true],
    ['Tuesday 16:59', '2026-11-24T16:59:00Z', true],
    ['Tuesday 17:00 (window over)', '2026-11-24T17:00:00Z', false],
    ['Tuesday 08:59', '2026-11-24T08:59:00Z', false],
    ['Saturday noon', '2026-11-28T12:00:00Z', false],
  ])('%s → %s', (_name, now, active) => {
    expect(budgetActive(weekdays9to5, at(now))).toBe(active);
  });
  it('without a schedule a budget is always active', () => {
    expect(budgetActive({}, at('2026-11-24T03:00:00Z'))).toBe(true);
  });
  it("robfig's macros: @midnight as @daily, @annually as @yearly", () => {
    expect(budgetActive({ schedule: '@midnight', duration: '1h' }, at('2026-11-24T00:30:00Z'))).toBe(true);
    expect(budgetActive({ schedule: '@midnight', duration: '1h' }, at('2026-11-24T01:30:00Z'))).toBe(false);
    expect(budgetActive({ schedule: '@annually', duration: '24h' }, at('2027-01-01T10:00:00Z'))).toBe(true);
    expect(budgetActive({ schedule: '@annually', duration: '24h' }, at('2027-01-02T10:00:00Z'))).toBe(false);
  });
  it('hours and minutes: 1h30m', () => {
    expect(budgetActive({ schedule: '0 0 * * *', duration: '1h30m' }, at('2026-11-24T01:29:00Z'))).toBe(true);
    expect(budgetActive({ schedule: '0 0 * * *', duration: '1h30m' }, at('2026-11-24T01:31:00Z'))).toBe(false);
  });
  it('an unparsable schedule throws, naming the field and a fix', () => {
    expect(() => budgetActive({ schedule: 'every day at nine', duration: '1h' }, at('2026-11-24T09:00:00Z'))).toThrow(/spec\.disruption\.budgets\[\]\.schedule/);
  });
});

describe('budgetAllows: counts, percentages rounded up, fail closed', () => {
  it.each([
    ['5', 20, 5],
    ['0', 20, 0],
    ['10%', 20, 2],
    ['5%', 10, 1], // rounded up, as a PDB's maxUnavailable: 0.5 → 1
    ['10%', 0, 0],
    ['100%', 7, 7],
    ['0%', 7, 0],
  ])('nodes %s of %d → %d', (nodes, count, allowed) => {
    expect(budgetAllows(b({ nodes }), count, at('2026-11-24T09:00:00Z'))).toBe(allowed);
  });
  it('an inactive budget allows anything', () => {
    expect(budgetAllows(b({ nodes: '0', schedule: '0 9 * * *', duration: '1h' }), 10, at('2026-11-24T12:00:00Z'))).toBe(UNBOUNDED);
  });
  it('a budget whose schedule does not parse allows nothing (fails closed)', () => {
    expect(budgetAllows({ nodes: '10', schedule: 'nonsense x y z w', duration: '1h' }, 10, at('2026-11-24T12:00:00Z'))).toBe(0);
  });
});

describe('allowedByReason: the most restrictive active budget that applies to the reason', () => {
  const budgets = [b({ nodes: '20%' }), b({ nodes: '0', reasons: ['Drifted'] }), b({ nodes: '1', reasons: ['Underutilized', 'Empty'], schedule: '0 9 * * *', duration: '8h' })];
  it.each([
    ['Drifted', '2026-11-24T12:00:00Z', 0],
    ['Empty', '2026-11-24T12:00:00Z', 1],
    ['Empty', '2026-11-24T20:00:00Z', 2], // scheduled budget inactive: 20% of 10
    ['Underutilized', '2026-11-24T12:00:00Z', 1],
  ] as const)('%s at %s → %d', (reason, now, allowed) => {
    expect(allowedByReason(budgets, reason, 10, at(now))).toBe(allowed);
  });
  it('no budgets: unbounded', () => {
    expect(allowedByReason([], 'Empty', 10, at('2026-11-24T12:00:00Z'))).toBe(UNBOUNDED);
  });
});

describe('disruptionsLeft: nodes already disrupting count against the budget', () => {
  it.each([
    [{ nodes: 10, disrupting: 0 }, 1],
    [{ nodes: 10, disrupting: 1 }, 0],
    [{ nodes: 10, disrupting: 3 }, 0], // never below 0
    [{ nodes: 30, disrupting: 1 }, 2],
  ])('10%% with %j → %d', (counts, left) => {
    expect(disruptionsLeft([b({ nodes: '10%' })], 'Empty', counts, at('2026-11-24T12:00:00Z'))).toBe(left);
  });
  it('budgetBlock says why, with the window', () => {
    const blocking = [b({ nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }), b({ nodes: '10%' })];
    expect(budgetBlock(blocking, 'Drifted', { nodes: 10, disrupting: 0 }, at('2026-11-24T10:00:00Z'))).toBe('budget allows 0 Drifted disruptions now (schedule "0 9 * * mon-fri" for 8h)');
    expect(budgetBlock(blocking, 'Drifted', { nodes: 10, disrupting: 0 }, at('2026-11-24T18:00:00Z'))).toBeUndefined();
    expect(budgetBlock(blocking, 'Drifted', { nodes: 10, disrupting: 1 }, at('2026-11-24T18:00:00Z'))).toBe('budget allows 1 Drifted disruption(s) and 1 node(s) are already disrupting');
  });
});
