import { classifyAwsError, missingPermissions } from '../../../activities/cloud/classify';
import { toCloudError } from '../../../activities/cloud/retry';
import { isAuthorizationError, isInsufficientCapacityError, isNotFoundError, isTransientCloudError, isInvalidRequestError } from '../../../activities/cloud';

/** What the SDK throws for a service error: the AWS code is the name. */
function anAwsError(code: string, status: number, fault: 'client' | 'server' = status >= 500 ? 'server' : 'client', message = `${code} happened`) {
  return Object.assign(new Error(message), { name: code, $fault: fault, $metadata: { httpStatusCode: status } });
}

describe('classifyAwsError', () => {
  it.each([
    ['RequestLimitExceeded', 503, 'throttled'],
    ['Throttling', 400, 'throttled'],
    ['InternalError', 500, 'server'],
    ['ServiceUnavailable', 503, 'server'],
    ['SomethingNew', 502, 'server'],
    ['UnauthorizedOperation', 403, 'unauthorized'],
    ['AuthFailure', 401, 'unauthorized'],
    ['InvalidInstanceID.NotFound', 400, 'not-found'],
    ['InvalidLaunchTemplateName.NotFoundException', 400, 'not-found'],
    ['IdempotentParameterMismatch', 400, 'idempotency-mismatch'],
    ['InsufficientInstanceCapacity', 500, 'capacity'],
    ['VcpuLimitExceeded', 400, 'capacity'],
    ['InvalidParameterValue', 400, 'invalid'],
    ['RequestExpired', 400, 'server'],
  ] as const)('%s (HTTP %i) is %s', (code, status, kind) => {
    expect(classifyAwsError(anAwsError(code, status))).toMatchObject({ kind, code });
  });

  it.each([
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a hung-up socket', Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' })],
    ['the SDK wrapper of a foreign-realm socket error', Object.assign(new Error('AWS SDK error wrapper for TimeoutError: socket hang up'), { $metadata: {} })],
  ])('%s is a network error', (_, error) => {
    expect(classifyAwsError(error)).toMatchObject({ kind: 'network' });
  });

  it('degrades a value that is not an error shape to unknown', () => {
    expect(classifyAwsError(42)).toMatchObject({ kind: 'unknown' });
  });
});

describe('toCloudError', () => {
  it('names the missing permission for an authorisation failure', () => {
    const error = toCloudError('TerminateInstances', classifyAwsError(anAwsError('UnauthorizedOperation', 403, 'client', 'You are not authorized to perform this operation.')), 1);
    if (!isAuthorizationError(error)) throw error;
    expect(error.retryable).toBe(false);
    expect(error.missingPermissions).toEqual(['ec2:TerminateInstances']);
    expect(error.message).toContain('need ec2:TerminateInstances');
  });

  it('prefers the permission AWS names in its message', () => {
    expect(missingPermissions('CreateFleet', 'User: arn:aws:iam::1:user/x is not authorized to perform: iam:PassRole on resource: role')).toEqual(['iam:PassRole']);
    expect(missingPermissions('CreateFleet', 'You are not authorized.')).toEqual(['ec2:CreateFleet', 'ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole']);
  });

  it.each([
    ['throttled', anAwsError('RequestLimitExceeded', 503), isTransientCloudError],
    ['not-found', anAwsError('InvalidInstanceID.NotFound', 400), isNotFoundError],
    ['capacity', anAwsError('InsufficientInstanceCapacity', 500), isInsufficientCapacityError],
    ['invalid', anAwsError('InvalidParameterValue', 400), isInvalidRequestError],
  ])('maps %s to its typed error', (_, raw, is) => {
    expect(is(toCloudError('CreateFleet', classifyAwsError(raw), 3))).toBe(true);
  });
});
