import { ApplicationFailure } from '@temporalio/common';
import { type FailureType } from '../core/lifecycle';

/**
 * How activities fail: always with a type from the one vocabulary (core/lifecycle/
 * failures.ts), so retry policies and the lifecycle's decide() read the same names.
 */
export const failWith = {
  /** no retry can fix it: the workflow decides what it means (e.g. the claim's life ends) */
  permanent: (type: FailureType, message: string, details?: unknown) => ApplicationFailure.create({ type, message, nonRetryable: true, ...(details === undefined ? {} : { details: [details] }) }),
  /** retried under the activity's retry policy */
  retryable: (type: FailureType, message: string) => ApplicationFailure.create({ type, message, nonRetryable: false }),
};
