import { z } from 'zod';
import { assertNever } from './assert';
import { reportIssue } from './issues';
import { LABEL_VALUE_PATTERN, restrictedLabelCelRules, restrictedLabelReason } from './labels';
import { labelKeySchema } from './primitives';

export const REQUIREMENT_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'] as const;
export type RequirementOperator = (typeof REQUIREMENT_OPERATORS)[number];

const NON_NEGATIVE_INTEGER = /^[0-9]+$/;

/** Checks every key against the restricted domains, as the CRD's CEL rules do. */
const restrictedKeySchema = labelKeySchema
  .superRefine((key, ctx) => {
    const reason = restrictedLabelReason(key, 'requirement');
    if (reason) reportIssue(ctx, { message: reason, fix: 'constrain a well-known label or a label in your own domain' });
  })
  .meta({ 'x-kubernetes-validations': restrictedLabelCelRules('self', 'requirement') });

/**
 * A NodeSelectorRequirement with Karpenter's `minValues`. The per-operator rules are
 * checked here in TypeScript and, for the API server, by the CEL rules on the list.
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
        if (values.length !== 1 || only === undefined || !NON_NEGATIVE_INTEGER.test(only)) {
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
  });
export type Requirement = z.output<typeof requirementSchema>;


/** CEL rules Karpenter puts on requirement lists, extended to Gte/Lte. */
export const REQUIREMENTS_CEL_RULES = [
  {
    message: "requirements with operator 'In' must have a value defined",
    rule: "self.all(x, x.operator == 'In' ? (has(x.values) && x.values.size() != 0) : true)",
  },
  {
    message: "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",
    rule:
      "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? " +
      "(has(x.values) && x.values.size() == 1 && x.values[0].matches('^[0-9]+$')) : true)",
  },
  {
    message: "requirements with operator 'Exists' or 'DoesNotExist' must not have values",
    rule: "self.all(x, (x.operator == 'Exists' || x.operator == 'DoesNotExist') ? (!has(x.values) || x.values.size() == 0) : true)",
  },
  {
    message: "requirements with 'minValues' must have at least that many values specified in the 'values' field",
    rule: "self.all(x, (x.operator == 'In' && has(x.minValues)) ? (has(x.values) && x.values.size() >= x.minValues) : true)",
  },
];

export const requirementsSchema = z
  .array(requirementSchema)
  .max(100)
  .meta({ 'x-kubernetes-validations': REQUIREMENTS_CEL_RULES });
