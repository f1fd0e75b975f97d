/**
 * The one retry layer for EC2 calls (and the SSM reads behind AMI aliases). The SDK clients
 * are built with maxAttempts 1 (ec2-client.ts, ssm.ts) and every call goes through
 * `callEc2` / `callAws`, because:
 *  - retries must be observable (logged, counted, asserted by tests);
 *  - a launch must re-check by NodeClaim tag before resending CreateFleet: the SDK would
 *    resend blindly, and a server that does not honour ClientToken (moto, or EC2 after its
 *    idempotency window) would then start a second instance.
 * Rejected: the SDK's StandardRetryStrategy with a logging wrapper — it hides the
 * per-attempt decision and cannot interleave the lookup.
 */
import {
  AuthorizationError,
  InvalidRequestError,
  InsufficientCapacityError,
  NotFoundError,
  TransientCloudError,
  type CloudError,
} from './errors';
import { assertNever } from '../../core/assert';
import { type AwsErrorClass, classifyAwsError, isRetryableClass, missingPermissions } from './classify';
import { type Clock, type CloudLogger } from './ports';

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 6, baseDelayMs: 200, maxDelayMs: 10_000 };

export interface RetryEvent {
  operation: string;
  /** the attempt that failed, from 1 */
  attempt: number;
  delayMs: number;
  errorKind: AwsErrorClass['kind'];
  code: string;
}

export interface RetryDeps {
  policy: RetryPolicy;
  clock: Clock;
  logger: CloudLogger;
  /** called before each backoff sleep; metrics and tests hook in here */
  onRetry?: (event: RetryEvent) => void;
  /** [0,1); injectable so unit tests get exact delays */
  random?: () => number;
}

/** Full-jitter exponential backoff (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/** The AWS APIs called through this layer, by IAM prefix (`ec2:CreateFleet`, `ssm:GetParameter`). */
export type AwsService = 'ec2' | 'ssm' | 'pricing' | 'sqs';
const SERVICE_LABEL: Readonly<Record<AwsService, string>> = { ec2: 'EC2', ssm: 'SSM', pricing: 'Pricing', sqs: 'SQS' };

/**
 * Runs `call` until it succeeds, fails permanently, or the budget is spent; failures leave
 * as typed CloudErrors. Only throttling, 5xx, lost connections and unrecognised errors
 * are retried.
 */
export function callEc2<T>(operation: string, call: () => Promise<T>, deps: RetryDeps): Promise<T> {
  return callAws({ service: 'ec2', operation }, call, deps);
}

/** callEc2 for any service: SSM reads share the policy, the logging and the onRetry hook. */
export async function callAws<T>(target: { service: AwsService; operation: string }, call: () => Promise<T>, deps: RetryDeps): Promise<T> {
  const { service, operation } = target;
  const random = deps.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const cls = classifyAwsError(error);
      if (!isRetryableClass(cls)) throw toCloudError(operation, cls, attempt, service);
      if (attempt >= deps.policy.maxAttempts) throw toCloudError(operation, cls, attempt, service);
      const delayMs = backoffDelayMs(deps.policy, attempt, random);
      const event: RetryEvent = { operation, attempt, delayMs, errorKind: cls.kind, code: cls.code };
      deps.logger.warn(event, `${SERVICE_LABEL[service]} ${operation} failed (${cls.code}); retrying`);
      deps.onRetry?.(event);
      await deps.clock.sleep(delayMs);
    }
  }
}

export function toCloudError(operation: string, cls: AwsErrorClass, attempts: number, service: AwsService = 'ec2'): CloudError {
  const api = SERVICE_LABEL[service];
  switch (cls.kind) {
    case 'throttled':
    case 'server':
    case 'network':
    case 'unknown':
      return new TransientCloudError(
        operation,
        cls.code,
        attempts,
        `${api} ${operation} still failing after ${attempts} attempt(s): ${cls.code}: ${cls.message}`,
      );
    case 'unauthorized': {
      const missing = missingPermissions(operation, cls.message, service);
      return new AuthorizationError(
        operation,
        missing,
        cls.code,
        `${api} ${operation} denied (${cls.code}): the cluster's credentials need ${missing.join(', ')}. AWS said: ${cls.message}`,
      );
    }
    case 'not-found':
      return new NotFoundError(cls.code, 'absent', `${api} ${operation}: ${cls.code}: ${cls.message}`, cls.code);
    case 'capacity':
      // A top-level capacity error (not in CreateFleet's Errors) names no offering.
      return new InsufficientCapacityError([], `${api} ${operation}: ${cls.code}: ${cls.message}`);
    case 'idempotency-mismatch':
    case 'invalid':
      return new InvalidRequestError(operation, cls.code, `${api} ${operation} rejected: ${cls.code}: ${cls.message}`);
    default:
      return assertNever(cls);
  }
}
