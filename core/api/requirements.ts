import { z } from 'zod';
import { assertNever } from '../assert';
import { reportIssue } from './issues';
import { LABEL_VALUE_PATTERN, restrictedLabelCelRules, restrictedLabelReason } from './labels';
import { labelKeySchema } from './primitives';

export const REQUIREMENT_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'] as const;
export type RequirementOperator = (typeof REQUIREMENT_OPERATORS)[number];

/** One RE2/ECMAScript pattern for both checks, so `autonode validate` and the API server agree. */
const NON_NEGATIVE_INTEGER = '^[0-9]+$';
const nonNegativeInteger = new RegExp(NON_NEGATIVE_INTEGER);

/**
 * Karpenter's requirement rules (karpenter.md §1.1), extended to Gte/Lte. Upstream puts
 * them on the list (`self.all(x, …)`), so the API server can only blame
 * `requirements`; on each item, with a fieldPath, it names `requirements[1].values` — the
 * same path `autonode validate` reports.
 */
const REQUIREMENT_CEL_RULES = [
  {
    message: "requirements with operator 'In' must have a value defined",
    rule: "self.operator != 'In' || (has(self.values) && self.values.size() != 0)",
    fieldPath: '.values',
  },
  {
    message: "requirements with operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single non-negative integer value",
    rule:
      "!(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) || " +
      `(has(self.values) && self.values.size() == 1 && self.values[0].matches('${NON_NEGATIVE_INTEGER}'))`,
    fieldPath: '.values',
  },
  {
    message: "requirements with operator 'Exists' or 'DoesNotExist' must not have values",
    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || self.values.size() == 0",
    fieldPath: '.values',
  },
  {
    message: "requirements with 'minValues' must have at least that many values specified in the 'values' field",
    rule: "!(self.operator == 'In' && has(self.minValues)) || (has(self.values) && self.values.size() >= self.minValues)",
    fieldPath: '.minValues',
  },
];

/** Checks every key against the restricted domains, as the CRD's CEL rules do. */
const restrictedKeySchema = labelKeySchema
  .superRefine((key, ctx) => {
    const reason = restrictedLabelReason(key, 'requirement');
    if (reason) reportIssue(ctx, { message: reason, fix: 'constrain a well-known label or a label in your own domain' });
  })
  .meta({ 'x-kubernetes-validations': restrictedLabelCelRules('self', 'requirement') });

/**
 * A NodeSelectorRequirement with Karpenter's `minValues`. The per-operator rules are
 * checked here in TypeScript and, for the API server, by REQUIREMENT_CEL_RULES.
 */
export const requirementSchema = z
  .strictObject({
    key: restrictedKeySchema,
    operator: z.enum(REQUIREMENT_OPERATORS),
    values: z
      .array(z.string().max(63).regex(LABEL_VALUE_PATTERN, { error: 'is not a valid label value' }))
      .optional(),
    minValues: z.number().int().min(1).max(50).optional(),
  })
  .superRefine((req, ctx) => {
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (values.length === 0) {
          reportIssue(ctx, {
            path: ['values'],
            message: `operator In needs at least one value`,
            fix: `list the allowed values of ${req.key}, or use operator Exists`,
          });
        }
        if (req.minValues !== undefined && values.length < req.minValues) {
          reportIssue(ctx, {
            path: ['minValues'],
            message: `minValues ${req.minValues} exceeds the ${values.length} value(s) listed`,
            fix: `list at least ${req.minValues} values or lower minValues`,
          });
        }
        return;
      case 'NotIn':
        return;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          reportIssue(ctx, {
            path: ['values'],
            message: `operator ${req.operator} takes no values`,
            fix: `remove values, or use operator ${req.operator === 'Exists' ? 'In' : 'NotIn'} to name them`,
          });
        }
        return;
      case 'Gt':
      case 'Lt':
      case 'Gte':
      case 'Lte': {
        const [only] = values;
        if (values.length !== 1 || only === undefined || !nonNegativeInteger.test(only)) {
          reportIssue(ctx, {
            path: ['values'],
            message: `operator ${req.operator} needs exactly one non-negative integer value`,
            fix: `write values: ["4"] (a single whole number, quoted)`,
          });
        }
        return;
      }
      default:
        return assertNever(req.operator);
    }
  })
  .meta({ 'x-kubernetes-validations': REQUIREMENT_CEL_RULES });
export type Requirement = z.output<typeof requirementSchema>;

export const requirementsSchema = z.array(requirementSchema).max(100);
