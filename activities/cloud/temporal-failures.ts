/**
 * Maps CloudErrors to Temporal ApplicationFailures at the activity boundary: the failure
 * type is the error kind (workflows branch on it), permanent kinds are non-retryable, and
 * exhausted offerings travel as details so the provisioner can remember them.
 */
import { ApplicationFailure } from '@temporalio/common';
import { type FailureType } from '../../core/lifecycle';
import { type CloudError, isAuthorizationError, isCloudError } from './errors';
import { assertNever } from '../../core/assert';

export function toApplicationFailure(error: CloudError): ApplicationFailure {
  const details = failureDetails(error);
  return ApplicationFailure.create({
    type: error.kind satisfies FailureType,
    message: error.message,
    nonRetryable: !error.retryable,
    details: [details],
    cause: error,
  });
}

function failureDetails(error: CloudError): Record<string, unknown> {
  switch (error.kind) {
    case 'InsufficientCapacity':
      return { offerings: error.offerings };
    case 'NotFound':
      return { resource: error.resource, reason: error.reason };
    case 'Authorization':
      return { operation: error.operation, missingPermissions: error.missingPermissions, awsCode: error.awsCode };
    case 'Transient':
      return { operation: error.operation, awsCode: error.awsCode, attempts: error.attempts };
    case 'InvalidRequest':
      return { operation: error.operation, awsCode: error.awsCode };
    case 'InstanceTypesUnavailable':
      return {
        region: error.region,
        source: error.source,
        ...(isAuthorizationError(error.cause) ? { missingPermissions: error.cause.missingPermissions } : {}),
      };
    default:
      return assertNever(error);
  }
}

/** Wraps an activity body so its CloudErrors leave as typed ApplicationFailures. */
export async function withCloudFailures<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (isCloudError(error)) throw toApplicationFailure(error);
    throw error;
  }
}
