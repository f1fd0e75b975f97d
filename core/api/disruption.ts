import { z } from 'zod';
import { reportIssue } from './issues';
import { durationOrNeverSchema } from './primitives';

// NodePool.spec.disruption in its three schemas (karpenter.md §1.1, §5).

export const BUDGET_NODES = /^((100|[0-9]{1,2})%|[0-9]+)$/;
const BUDGET_SCHEDULE = /^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$/;
const BUDGET_DURATION = /^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/;

export const DISRUPTION_REASONS = ['Underutilized', 'Empty', 'Drifted'] as const;

export const budgetSchema = z
  .strictObject({
    nodes: z
      .string()
      .regex(BUDGET_NODES, { error: 'must be a whole number of nodes ("5") or a percentage from 0% to 100% ("10%")' })
      .default('10%'),
    schedule: z
      .string()
      .regex(BUDGET_SCHEDULE, { error: 'must be a 5-field cron expression in UTC ("0 9 * * mon-fri") or a macro such as @daily' })
      .optional(),
    duration: z
      .string()
      .regex(BUDGET_DURATION, { error: 'must be hours and/or minutes, e.g. 8h, 30m or 1h30m' })
      .optional(),
    reasons: z.array(z.enum(DISRUPTION_REASONS)).optional(),
  })
  .superRefine((budget, ctx) => {
    if ((budget.schedule === undefined) !== (budget.duration === undefined)) {
      const missing = budget.schedule === undefined ? 'schedule' : 'duration';
      reportIssue(ctx, {
        path: [missing],
        message: `'schedule' and 'duration' must be set together; ${missing} is missing`,
        fix: `set ${missing} too, or remove ${missing === 'schedule' ? 'duration' : 'schedule'} for an always-active budget`,
      });
    }
  });
export type Budget = z.output<typeof budgetSchema>;

const budgetsSchema = z
  .array(budgetSchema)
  .max(50)
  .default([{ nodes: '10%' }])
  .meta({
    'x-kubernetes-validations': [
      { message: "'schedule' must be set with 'duration'", rule: 'self.all(x, has(x.schedule) == has(x.duration))' },
    ],
  });

export const CONSOLIDATION_POLICIES = ['WhenEmpty', 'WhenEmptyOrUnderutilized'] as const;
/** v1beta1's policy names plus v1's: either may be stored under either version. */
export const WIRE_CONSOLIDATION_POLICIES = ['WhenEmpty', 'WhenEmptyOrUnderutilized', 'WhenUnderutilized'] as const;

export const disruptionSchema = z
  .strictObject({
    consolidationPolicy: z.enum(CONSOLIDATION_POLICIES).default('WhenEmptyOrUnderutilized'),
    consolidateAfter: durationOrNeverSchema.default('0s'),
    budgets: budgetsSchema,
  })
  .prefault({ consolidateAfter: '0s' });
export type Disruption = z.output<typeof disruptionSchema>;

export const disruptionV1WireSchema = z
  .strictObject({
    consolidationPolicy: z.enum(WIRE_CONSOLIDATION_POLICIES).default('WhenEmptyOrUnderutilized'),
    consolidateAfter: durationOrNeverSchema.default('0s'),
    budgets: budgetsSchema,
    /** v1beta1's location of expireAfter, kept so that stored v1beta1 objects survive pruning. */
    expireAfter: durationOrNeverSchema.optional(),
  })
  .prefault({ consolidateAfter: '0s' });

/**
 * v1beta1 defaults: WhenUnderutilized and no consolidateAfter. expireAfter is *not*
 * defaulted here (upstream defaulted it to 720h) so that its presence always means the
 * user set it; core applies the same 720h when it is absent.
 */
export const disruptionV1Beta1WireSchema = z
  .strictObject({
    consolidationPolicy: z.enum(WIRE_CONSOLIDATION_POLICIES).default('WhenUnderutilized'),
    consolidateAfter: durationOrNeverSchema.optional(),
    budgets: budgetsSchema,
    expireAfter: durationOrNeverSchema.optional(),
  })
  .superRefine((disruption, ctx) => {
    if (disruption.consolidationPolicy === 'WhenEmpty' && disruption.consolidateAfter === undefined) {
      reportIssue(ctx, {
        path: ['consolidateAfter'],
        message: 'consolidateAfter must be specified with consolidationPolicy=WhenEmpty',
        fix: 'set consolidateAfter, e.g. 30s, or Never to keep empty nodes',
      });
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        message: 'consolidateAfter must be specified with consolidationPolicy=WhenEmpty',
        rule: "!has(self.consolidationPolicy) || self.consolidationPolicy != 'WhenEmpty' || has(self.consolidateAfter)",
        fieldPath: '.consolidateAfter',
      },
    ],
  })
  .prefault({ consolidationPolicy: 'WhenUnderutilized' });
