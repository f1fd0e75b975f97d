import { backoffDelayMs, callEc2, type RetryEvent } from '../../../activities/cloud/retry';
import { isAuthorizationError, isTransientCloudError, silentLogger } from '../../../activities/cloud';

function aFakeClock() {
  const slept: number[] = [];
  return { slept, clock: { now: () => new Date(0), sleep: async (ms: number) => void slept.push(ms) } };
}

const anAwsError = (code: string, status: number) =>
  Object.assign(new Error(code), { name: code, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });

/** Fails with the given errors in turn, then succeeds. */
function flaky<T>(errors: Error[], value: T) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    fn: async () => {
      const error = errors[calls++];
      if (error) throw error;
      return value;
    },
  };
}

describe('callEc2', () => {
  const policy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 250 };

  it('retries throttling and 5xx with capped exponential backoff, reporting each retry', async () => {
    const { clock, slept } = aFakeClock();
    const events: RetryEvent[] = [];
    const call = flaky([anAwsError('RequestLimitExceeded', 503), anAwsError('InternalError', 500), anAwsError('RequestLimitExceeded', 503)], 'ok');

    await expect(callEc2('DescribeInstances', call.fn, { policy, clock, logger: silentLogger, onRetry: (e) => events.push(e), random: () => 0.999 })).resolves.toBe('ok');

    expect(call.calls).toBe(4);
    expect(slept).toEqual([99, 199, 249]);
    expect(events.map((e) => `${e.attempt}:${e.code}`)).toEqual(['1:RequestLimitExceeded', '2:InternalError', '3:RequestLimitExceeded']);
  });

  it('gives up after the budget with a retryable typed error', async () => {
    const { clock } = aFakeClock();
    const call = flaky(Array.from({ length: 10 }, () => anAwsError('RequestLimitExceeded', 503)), 'never');
    const error = await callEc2('CreateFleet', call.fn, { policy, clock, logger: silentLogger }).catch((e: unknown) => e);
    if (!isTransientCloudError(error)) throw error;
    expect(error).toMatchObject({ retryable: true, attempts: 4, awsCode: 'RequestLimitExceeded' });
    expect(call.calls).toBe(4);
  });

  it('does not retry an authorisation error', async () => {
    const { clock, slept } = aFakeClock();
    const call = flaky([anAwsError('UnauthorizedOperation', 403)], 'never');
    const error = await callEc2('CreateFleet', call.fn, { policy, clock, logger: silentLogger }).catch((e: unknown) => e);
    expect(isAuthorizationError(error)).toBe(true);
    expect(call.calls).toBe(1);
    expect(slept).toEqual([]);
  });
});

describe('backoffDelayMs', () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 250],
    [10, 250],
  ])('attempt %i waits at most %i ms', (attempt, ceiling) => {
    expect(backoffDelayMs({ maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 250 }, attempt, () => 1)).toBe(ceiling);
    expect(backoffDelayMs({ maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 250 }, attempt, () => 0)).toBe(0);
  });
});
