/**
 * Typed errors of the cloud-provider port. Every error the port throws is a `CloudError`:
 * a discriminated union on `kind`, so callers switch exhaustively instead of matching
 * messages, and the Temporal mapping (temporal-failures.ts) knows which are permanent.
 */
import { type CapacityType } from './domain';

/** One pool that could not deliver: Karpenter's unavailable-offerings cache key. */
export interface ExhaustedOffering {
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  /** EC2's error code, e.g. InsufficientInstanceCapacity or MaxSpotInstanceCountExceeded */
  reason: string;
}

abstract class CloudErrorBase extends Error {
  abstract readonly kind: string;
  abstract readonly retryable: boolean;
  override get name(): string {
    return `${this.kind}Error`;
  }
}

/** No instance could be launched for capacity or quota reasons; re-plan without these. */
export class InsufficientCapacityError extends CloudErrorBase {
  readonly kind = 'InsufficientCapacity' as const;
  // The same request would fail the same way: the caller must re-plan, not retry.
  readonly retryable = false;
  constructor(
    readonly offerings: readonly ExhaustedOffering[],
    message = describeExhausted(offerings),
  ) {
    super(message);
  }
}

export type NotFoundReason = 'absent' | 'terminated' | 'not-owned';

export class NotFoundError extends CloudErrorBase {
  readonly kind = 'NotFound' as const;
  readonly retryable = false;
  constructor(
    readonly resource: string,
    readonly reason: NotFoundReason,
    message: string,
    /** the AWS error code, when an AWS answer said so (InvalidLaunchTemplateId.NotFound, …) */
    readonly awsCode?: string,
  ) {
    super(message);
  }
}

/** The credentials lack a permission: retrying cannot help, an operator must act. */
export class AuthorizationError extends CloudErrorBase {
  readonly kind = 'Authorization' as const;
  readonly retryable = false;
  constructor(
    readonly operation: string,
    readonly missingPermissions: readonly string[],
    readonly awsCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** Throttling, 5xx or a lost connection that outlived the retry budget. */
export class TransientCloudError extends CloudErrorBase {
  readonly kind = 'Transient' as const;
  readonly retryable = true;
  constructor(
    readonly operation: string,
    readonly awsCode: string,
    readonly attempts: number,
    message: string,
  ) {
    super(message);
  }
}

/** The request itself is wrong (bad parameter, missing launch template…). */
export class InvalidRequestError extends CloudErrorBase {
  readonly kind = 'InvalidRequest' as const;
  readonly retryable = false;
  constructor(
    readonly operation: string,
    readonly awsCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** Which EC2 read an instance-type snapshot comes from. */
export type InstanceTypeSource = 'DescribeInstanceTypes' | 'DescribeInstanceTypeOfferings' | 'DescribeSpotPriceHistory';

/**
 * The region's instance types could not be read and nothing is cached to fall back on
 * (a failed refresh with a cached snapshot serves the snapshot instead). `cause` is the
 * CloudError of the failed read, or the parse error of a response we do not understand.
 */
export class InstanceTypesUnavailableError extends CloudErrorBase {
  readonly kind = 'InstanceTypesUnavailable' as const;
  readonly retryable: boolean;
  constructor(
    readonly region: string,
    readonly source: InstanceTypeSource,
    override readonly cause: unknown,
    message: string,
  ) {
    super(message);
    // Transient causes heal by retrying; denied permissions and responses we cannot parse
    // need an operator, and retrying them only delays the message.
    this.retryable = cause instanceof TransientCloudError;
  }
}

export type CloudError =
  | InsufficientCapacityError
  | NotFoundError
  | AuthorizationError
  | TransientCloudError
  | InvalidRequestError
  | InstanceTypesUnavailableError;

export const isCloudError = (e: unknown): e is CloudError => e instanceof CloudErrorBase;
export const isInsufficientCapacityError = (e: unknown): e is InsufficientCapacityError =>
  e instanceof InsufficientCapacityError;
export const isNotFoundError = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
export const isAuthorizationError = (e: unknown): e is AuthorizationError => e instanceof AuthorizationError;
export const isTransientCloudError = (e: unknown): e is TransientCloudError => e instanceof TransientCloudError;
export const isInvalidRequestError = (e: unknown): e is InvalidRequestError => e instanceof InvalidRequestError;
export const isInstanceTypesUnavailableError = (e: unknown): e is InstanceTypesUnavailableError =>
  e instanceof InstanceTypesUnavailableError;

function describeExhausted(offerings: readonly ExhaustedOffering[]): string {
  if (offerings.length === 0) return 'insufficient capacity: EC2 launched nothing and named no offering';
  const pools = offerings.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType} (${o.reason})`);
  return `insufficient capacity in ${offerings.length} offering(s): ${pools.join(', ')}`;
}
