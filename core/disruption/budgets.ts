import { CronExpressionParser } from 'cron-parser';
import { type Budget, type DISRUPTION_REASONS } from '../api/disruption';
import { durationToMs } from '../lifecycle';

export type DisruptionReason = (typeof DISRUPTION_REASONS)[number];

/** Karpenter's "unbounded" (math.MaxInt32): no active budget limits this reason. */
export const UNBOUNDED = 2_147_483_647;

/**
 * robfig/cron's standard parser (Karpenter's) knows two macros cron-parser does not; both
 * mean the same as one it does.
 */
const MACRO_ALIASES: Record<string, string> = { '@midnight': '@daily', '@annually': '@yearly' };

export class BudgetScheduleError extends Error {
  constructor(
    readonly schedule: string,
    cause: unknown,
  ) {
    super(`budget schedule ${JSON.stringify(schedule)} is not a valid cron expression (${cause instanceof Error ? cause.message : String(cause)}); fix spec.disruption.budgets[].schedule, e.g. "0 9 * * mon-fri" or @daily`);
  }
}

/**
 * Whether a budget applies now. Without a schedule, always. With one (UTC, as Karpenter
 * reads it), a budget is active for `duration` after each time the schedule fires: walk
 * back `duration` from now and ask whether the schedule's next firing after that point
 * has already come. Throws BudgetScheduleError for a schedule that does not parse.
 */
export function budgetActive(budget: Pick<Budget, 'schedule' | 'duration'>, now: Date): boolean {
  if (budget.schedule === undefined || budget.duration === undefined) return true;
  const durationMs = durationToMs(budget.duration);
  if (durationMs === undefined) return true;
  const schedule = budget.schedule.trim();
  let next: Date;
  try {
    const expression = CronExpressionParser.parse(MACRO_ALIASES[schedule] ?? schedule, { currentDate: new Date(now.getTime() - durationMs), tz: 'UTC' });
    next = expression.next().toDate();
  } catch (err) {
    throw new BudgetScheduleError(budget.schedule, err);
  }
  return next.getTime() <= now.getTime();
}

/**
 * What one budget allows out of `nodes` nodes now: unbounded when inactive, else its count
 * or its percentage rounded up (as Kubernetes rounds a PDB's maxUnavailable: 5 % of 10
 * nodes allows 1, not 0). A schedule that does not parse fails closed: 0.
 */
export function budgetAllows(budget: Budget, nodes: number, now: Date): number {
  let active: boolean;
  try {
    active = budgetActive(budget, now);
  } catch {
    return 0;
  }
  if (!active) return UNBOUNDED;
  const percent = /^(\d+)%$/.exec(budget.nodes);
  if (percent) return Math.ceil((Number(percent[1]) * nodes) / 100);
  return Number(budget.nodes);
}

/**
 * The most restrictive of a NodePool's budgets for one reason: budgets without `reasons`
 * apply to every reason.
 */
export function allowedByReason(budgets: readonly Budget[], reason: DisruptionReason, nodes: number, now: Date): number {
  let allowed = UNBOUNDED;
  for (const budget of budgets) {
    if (budget.reasons !== undefined && !budget.reasons.includes(reason)) continue;
    allowed = Math.min(allowed, budgetAllows(budget, nodes, now));
  }
  return allowed;
}

export interface PoolNodeCounts {
  /** managed, initialized nodes of the pool, not counting ones whose instance is terminating */
  nodes: number;
  /** of those, how many are already being disrupted (NotReady or marked for deletion) */
  disrupting: number;
}

/**
 * How many more nodes of a pool may be disrupted for `reason` in this round: what the
 * budgets allow, less the nodes already disrupting, never below 0.
 */
export function disruptionsLeft(budgets: readonly Budget[], reason: DisruptionReason, counts: PoolNodeCounts, now: Date): number {
  return Math.max(allowedByReason(budgets, reason, counts.nodes, now) - counts.disrupting, 0);
}

/** Why a budget blocks a pool now, for status and Events; undefined when it does not. */
export function budgetBlock(budgets: readonly Budget[], reason: DisruptionReason, counts: PoolNodeCounts, now: Date): string | undefined {
  const allowed = allowedByReason(budgets, reason, counts.nodes, now);
  if (allowed - counts.disrupting > 0) return undefined;
  const schedules = budgets.filter((b) => (b.reasons === undefined || b.reasons.includes(reason)) && b.schedule !== undefined && budgetAllows(b, counts.nodes, now) === allowed);
  const window = schedules.length > 0 ? ` (schedule ${JSON.stringify(schedules[0]!.schedule)} for ${schedules[0]!.duration})` : '';
  return allowed === 0 ? `budget allows 0 ${reason} disruptions now${window}` : `budget allows ${allowed} ${reason} disruption(s) and ${counts.disrupting} node(s) are already disrupting${window}`;
}
