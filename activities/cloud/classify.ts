/**
 * Classifies what the AWS SDK throws into the few cases the retry layer and the typed
 * errors care about. Pure: the SDK error is zod-parsed, never cast, so an unexpected
 * shape degrades to `unknown` (retried a bounded number of times) instead of crashing.
 */
import { z } from 'zod';
import { assertNever } from '../../core/assert';

export type AwsErrorClass =
  | { kind: 'throttled'; code: string; message: string }
  | { kind: 'server'; code: string; message: string }
  | { kind: 'network'; code: string; message: string }
  | { kind: 'unauthorized'; code: string; message: string }
  | { kind: 'not-found'; code: string; message: string }
  | { kind: 'idempotency-mismatch'; code: string; message: string }
  | { kind: 'capacity'; code: string; message: string }
  | { kind: 'invalid'; code: string; message: string }
  | { kind: 'unknown'; code: string; message: string };

const SdkErrorShape = z.object({
  name: z.string().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
  $fault: z.enum(['client', 'server']).optional(),
  $metadata: z.object({ httpStatusCode: z.number().optional() }).optional(),
});

const THROTTLING_CODES = new Set([
  'RequestLimitExceeded', 'Throttling', 'ThrottlingException', 'ThrottledException', 'RequestThrottled',
  'RequestThrottledException', 'TooManyRequestsException', 'BandwidthLimitExceeded', 'SlowDown',
  'EC2ThrottledException', 'PriorRequestNotComplete',
]);
const SERVER_CODES = new Set(['InternalError', 'InternalFailure', 'ServiceUnavailable', 'Unavailable']);
// Expired credentials or clock skew heal on the next attempt (the provider refreshes).
const REFRESHABLE_AUTH_CODES = new Set(['ExpiredToken', 'ExpiredTokenException', 'RequestExpired', 'RequestTimeTooSkewed']);
const UNAUTHORIZED_CODES = new Set([
  'UnauthorizedOperation', 'AuthFailure', 'AccessDenied', 'AccessDeniedException', 'Blocked', 'OptInRequired',
  'UnrecognizedClientException', 'InvalidClientTokenId', 'SignatureDoesNotMatch', 'IncompleteSignature',
]);
// SSM names its misses without the EC2 `.NotFound` suffix; so does SQS (JSON and query protocol).
const NOT_FOUND_CODES = new Set(['ParameterNotFound', 'ParameterVersionNotFound', 'QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * Codes meaning "this offering cannot be had now": Karpenter's unfulfillable-capacity set
 * (`pkg/errors`), plus quota codes, which must mark offerings rather than block a node.
 */
export const CAPACITY_ERROR_CODES: ReadonlySet<string> = new Set([
  'InsufficientInstanceCapacity', 'InsufficientCapacity', 'InsufficientHostCapacity', 'UnfulfillableCapacity',
  'VcpuLimitExceeded', 'MaxSpotInstanceCountExceeded', 'InstanceLimitExceeded', 'SpotMaxPriceTooLow',
  'InsufficientFreeAddressesInSubnet', 'ReservationCapacityExceeded', 'Unsupported',
]);

export function classifyAwsError(error: unknown): AwsErrorClass {
  const parsed = SdkErrorShape.safeParse(error);
  if (!parsed.success) return { kind: 'unknown', code: 'Unknown', message: String(error) };
  const { code: nodeCode, $fault, $metadata } = parsed.data;
  // The SDK wraps a non-Error it cannot recognise (e.g. a socket error from another realm,
  // as under jest) as "AWS SDK error wrapper for <name>: <message>"; read the inner error.
  const wrapped = /^AWS SDK error wrapper for (\w+): (.*)$/s.exec(parsed.data.message ?? '');
  const name = wrapped?.[1] ?? parsed.data.name;
  const message = wrapped?.[2] ?? parsed.data.message ?? '';
  const status = $metadata?.httpStatusCode;
  // Node's socket errors carry `code`; SDK service errors carry the AWS code as `name`.
  if (nodeCode !== undefined && NETWORK_CODES.has(nodeCode)) return { kind: 'network', code: nodeCode, message };
  if (name === 'TimeoutError' || name === 'RequestTimeout' || message === 'socket hang up') {
    return { kind: 'network', code: nodeCode ?? name ?? 'Network', message };
  }
  const code = name ?? 'Unknown';
  if (THROTTLING_CODES.has(code) || status === 429) return { kind: 'throttled', code, message };
  if (REFRESHABLE_AUTH_CODES.has(code)) return { kind: 'server', code, message };
  if (UNAUTHORIZED_CODES.has(code) || (status === 403 && $fault === 'client')) return { kind: 'unauthorized', code, message };
  if (code === 'IdempotentParameterMismatch') return { kind: 'idempotency-mismatch', code, message };
  if (CAPACITY_ERROR_CODES.has(code)) return { kind: 'capacity', code, message };
  if (NOT_FOUND_CODES.has(code) || code.endsWith('.NotFound') || code.endsWith('NotFoundException') || code.endsWith('.Malformed.NotFound')) {
    return { kind: 'not-found', code, message };
  }
  if (SERVER_CODES.has(code) || (status !== undefined && status >= 500) || $fault === 'server') {
    return { kind: 'server', code, message };
  }
  if ($fault === 'client' || (status !== undefined && status >= 400)) return { kind: 'invalid', code, message };
  return { kind: 'unknown', code, message };
}

export function isRetryableClass(cls: AwsErrorClass): boolean {
  switch (cls.kind) {
    case 'throttled':
    case 'server':
    case 'network':
    case 'unknown':
      return true;
    case 'unauthorized':
    case 'not-found':
    case 'idempotency-mismatch':
    case 'capacity':
    case 'invalid':
      return false;
    default:
      return assertNever(cls);
  }
}

/**
 * The IAM permissions an operator must grant. Real EC2 names the action in the message
 * ("is not authorized to perform: ec2:CreateFleet"); otherwise we name what the call needs.
 */
export function missingPermissions(operation: string, awsMessage: string, service = 'ec2'): string[] {
  const named = [...awsMessage.matchAll(/perform:\s*([a-z0-9-]+:[A-Za-z0-9]+)/g)].map((m) => m[1] ?? '');
  if (named.length > 0) return [...new Set(named.filter((p) => p !== ''))];
  const needed = [`${service}:${operation}`];
  // CreateFleet is authorised action by action on what it creates (AWS "Fleet prerequisites").
  if (service === 'ec2' && operation === 'CreateFleet') needed.push('ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole');
  return needed;
}
