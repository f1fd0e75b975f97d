/**
 * How the watch workflow remembers failed garbage-collection rounds. A round that still
 * fails after its activity's retries does not end the workflow — the next round tries
 * again — but it must not go unnoticed (STYLE.md 9): the `status` query shows the latest
 * error, and each run of failures gets one Warning Event, not one per round. Pure, so the
 * rules are unit-tested without a Temporal server; carried across continue-as-new, so a
 * long outage is one run of failures, not one per workflow run.
 */
import { z } from 'zod';

export const GcFailureSchema = z.object({
  /** what the last failed round reported (the activity failure's cause) */
  message: z.string(),
  /** when that round failed (workflow time, ISO 8601) */
  at: z.string(),
  /** failed rounds in a row; 0 once a later round succeeded */
  consecutiveFailures: z.number().int().nonnegative(),
  /** whether this run of failures has its GarbageCollectionFailed Warning Event */
  warningEventRecorded: z.boolean(),
});
export type GcFailure = z.infer<typeof GcFailureSchema>;

export function gcRoundFailed(previous: GcFailure | undefined, failure: { message: string; at: string }): GcFailure {
  const failing = previous !== undefined && previous.consecutiveFailures > 0;
  return {
    message: failure.message,
    at: failure.at,
    consecutiveFailures: failing ? previous.consecutiveFailures + 1 : 1,
    // A run of failures that starts after a success gets its own Event; one whose Event
    // could not be written yet tries again on its next failure.
    warningEventRecorded: failing ? previous.warningEventRecorded : false,
  };
}

/** The last error stays visible (with its time) after GC works again; the run is over. */
export function gcRoundSucceeded(previous: GcFailure | undefined): GcFailure | undefined {
  return previous === undefined ? undefined : { ...previous, consecutiveFailures: 0 };
}
