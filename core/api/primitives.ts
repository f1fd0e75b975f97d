import { z } from 'zod';
import { LABEL_VALUE_PATTERN, labelKeySyntaxError } from './labels';
import { reportIssue } from './issues';

// Building blocks shared by every kind. Each schema carries its CRD shape in `.meta()`
// where zod's JSON Schema would not be structural (int-or-string, opaque metadata), so
// crd.ts needs no knowledge of individual fields.

export const DURATION_OR_NEVER = /^(([0-9]+(s|m|h))+|Never)$/;
export const DURATION = /^([0-9]+(s|m|h))+$/;
/** The pattern controller-gen emits for resource.Quantity. */
export const QUANTITY =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

export const durationOrNeverSchema = z
  .string()
  .regex(DURATION_OR_NEVER, { error: 'must be a duration such as 30s, 5m, 720h or 1h30m, or Never' });

export const durationSchema = z
  .string()
  .regex(DURATION, { error: 'must be a duration such as 30s, 5m, 720h or 1h30m' });

/**
 * A Kubernetes quantity, written as a YAML number (`cpu: 1`) or string (`memory: 5Gi`),
 * normalised to its string form so later code never sees numbers.
 */
export const quantitySchema = z
  .union([z.string(), z.number()], { error: 'must be a quantity such as 500m, 2, 4Gi or 100M' })
  .transform((value) => String(value))
  .pipe(z.string().regex(QUANTITY, { error: 'is not a Kubernetes quantity; write e.g. 500m, 2, 1.5, 4Gi or 100M' }))
  .meta({ 'x-kubernetes-int-or-string': true, pattern: QUANTITY.source });

export const resourceListSchema = z.record(z.string(), quantitySchema);

export const labelKeySchema = z
  .string()
  .max(316)
  .superRefine((key, ctx) => {
    const reason = labelKeySyntaxError(key);
    if (reason) reportIssue(ctx, { message: `invalid label key: ${reason}`, fix: 'use a key such as "example.com/team" or "team"' });
  });

export const labelValueSchema = z
  .string()
  .max(63)
  .regex(LABEL_VALUE_PATTERN, { error: 'invalid label value: use at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric' });

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

export const taintSchema = z.strictObject({
  key: labelKeySchema,
  value: z.string().optional(),
  effect: z.enum(TAINT_EFFECTS),
  timeAdded: z.string().optional(),
});
export type Taint = z.output<typeof taintSchema>;

const ownerReferenceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/**
 * Object metadata: what autonode reads. Unknown keys (managedFields, …) are dropped, not
 * rejected, since objects read back from the API server carry them. The CRD keeps
 * metadata opaque, as the API server requires.
 */
export const objectMetaSchema = z
  .object({
    name: z.string().min(1).max(253).optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
    ownerReferences: z.array(ownerReferenceSchema).optional(),
  })
  .superRefine((meta, ctx) => {
    if (meta.name === undefined && meta.generateName === undefined) {
      reportIssue(ctx, { path: ['name'], message: 'name is required', fix: 'set metadata.name' });
    }
  })
  .meta({ crd: { type: 'object' } });
export type ObjectMeta = z.output<typeof objectMetaSchema>;

export const conditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.output<typeof conditionSchema>;

/** Label map checked key by key, so errors point at `labels["bad key"]`. */
export const labelMapSchema = z.record(z.string(), labelValueSchema).superRefine((labels, ctx) => {
  for (const key of Object.keys(labels)) {
    const reason = labelKeySyntaxError(key);
    if (reason) reportIssue(ctx, { path: [key], message: `invalid label key: ${reason}`, fix: 'use a key such as "example.com/team"' });
  }
});
