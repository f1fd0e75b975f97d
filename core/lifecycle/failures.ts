import { z } from 'zod';

/**
 * The one failure vocabulary of autonode's activities and workflows. An activity that
 * fails throws an ApplicationFailure whose `type` is one of these; a workflow's retry
 * policy names the permanent ones from the same list, and the lifecycle decides how a
 * claim's life ends from the type (and details decoded with the schemas below), never by
 * matching a string repeated somewhere else.
 */
export const FAILURE_TYPES = [
  /** no offering asked for could be had (capacity or quota): re-plan without them */
  'InsufficientCapacity',
  /** the NodeClaim this work is for no longer exists or is being deleted */
  'NodeClaimGone',
  /** the request is wrong as written (spec, class reference, resources): a person must fix it */
  'Invalid',
  /** the cloud refused the request's shape (EC2's InvalidParameter…) */
  'InvalidRequest',
  /** a permission is missing: an operator must act */
  'Authorization',
  /** a cloud resource is absent, terminated or not ours */
  'NotFound',
  /** throttling, 5xx, network: retried with backoff */
  'Transient',
  /** the region's instance types could not be read */
  'InstanceTypesUnavailable',
  /** the EC2NodeClass is missing or not ready yet: retried until the launch timeout */
  'NodeClassNotReady',
  /** the instance exists but lacks what registration needs (its private DNS name) yet */
  'InstanceNotReady',
  /** a workflow whose own ending could not complete (a step of the drain or termination failed for good) */
  'LifecycleFailed',
] as const;
export type FailureType = (typeof FAILURE_TYPES)[number];
export const FailureTypeSchema = z.enum(FAILURE_TYPES);

/** Failure types no retry can fix, per task queue's kind of work. */
export const PERMANENT_FAILURES = {
  kube: ['NodeClaimGone', 'Invalid'],
  cloud: ['InsufficientCapacity', 'Authorization', 'NodeClaimGone', 'Invalid', 'InvalidRequest', 'NotFound', 'InstanceTypesUnavailable'],
} as const satisfies Record<string, readonly FailureType[]>;

export const OfferingRefSchema = z.object({
  instanceType: z.string(),
  zone: z.string(),
  capacityType: z.string(),
});
export type OfferingRef = z.infer<typeof OfferingRefSchema>;

/** Details an `InsufficientCapacity` failure carries (its first details entry). */
export const InsufficientCapacityDetailsSchema = z.object({
  offerings: z.array(OfferingRefSchema.extend({ reason: z.string().optional() })),
});

/**
 * A failure as a workflow sees it, reduced to plain data: what decide() is given when an
 * activity fails. `timedOut` is a Temporal timeout (e.g. the launch's schedule-to-close).
 */
export const ActivityFailureInfoSchema = z.object({
  type: z.string().optional(),
  message: z.string(),
  timedOut: z.boolean().default(false),
  nonRetryable: z.boolean().default(false),
  details: z.unknown().optional(),
});
export type ActivityFailureInfo = z.input<typeof ActivityFailureInfoSchema>;

/** The exhausted offerings of an InsufficientCapacity failure; empty when they are unreadable. */
export function exhaustedOfferings(details: unknown): OfferingRef[] {
  const parsed = InsufficientCapacityDetailsSchema.safeParse(details);
  return parsed.success ? parsed.data.offerings.map(({ instanceType, zone, capacityType }) => ({ instanceType, zone, capacityType })) : [];
}

export function isFailureType(type: string | undefined, expected: FailureType): boolean {
  return type === expected;
}
