import {
  AssumeRoleError,
  assumeRoleCredentialsProvider,
  createAssumeRoleCredentialsFactory,
  isAssumeRoleError,
  sessionNameFor,
  staticCredentialsProvider,
  type AssumedRoleCredentials,
  type CloudLogger,
} from '../../../activities/cloud';
import { classifyAwsError } from '../../../activities/cloud/classify';
import { anAwsError, FakeSts } from './fake-sts';

const ROLE = 'arn:aws:iam::210987654321:role/autonode-team-a';
const T0 = Date.parse('2026-11-24T10:00:00Z');
const MINUTE = 60_000;

function aFakeClock(start = T0) {
  let t = start;
  return {
    now: () => new Date(t),
    sleep: async (ms: number) => void (t += ms),
    advance: (ms: number) => void (t += ms),
    set: (at: number) => void (t = at),
  };
}

/** A logger that keeps every line, to check what was said and that no secret was. */
function aRecordingLogger() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const logger: CloudLogger = {
    debug: (obj, msg) => void lines.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
  };
  return { logger, lines, text: () => JSON.stringify(lines) };
}

function aProvider(options: { refreshMarginMs?: number; durationSeconds?: number; retryAfterFailureMs?: number } = {}) {
  const clock = aFakeClock();
  const sts = new FakeSts(clock.now);
  const log = aRecordingLogger();
  const credentials = assumeRoleCredentialsProvider({ sts, roleArn: ROLE, sessionName: 'autonode-team-a', clock, logger: log.logger, ...options });
  return { clock, sts, log, credentials };
}

const expiryOf = (c: AssumedRoleCredentials) => c.expiration.getTime();

describe('assumeRoleCredentialsProvider', () => {
  it('assumes the role once, with the session name and duration, and hands back the temporary credentials', async () => {
    const { sts, credentials } = aProvider({ durationSeconds: 1800 });
    const c = await credentials();
    expect(sts.calls).toEqual([{ RoleArn: ROLE, RoleSessionName: 'autonode-team-a', DurationSeconds: 1800 }]);
    expect(c).toEqual({ accessKeyId: 'ASIAFAKE0001', secretAccessKey: 'secret-1-autonode-team-a', sessionToken: 'token-1-autonode-team-a', expiration: new Date(T0 + 1800_000) });
  });

  it('serves the cached credentials until the refresh margin (default 5 min) before expiry, then assumes the role again', async () => {
    const { clock, sts, credentials } = aProvider();
    const first = await credentials();
    clock.set(expiryOf(first) - 5 * MINUTE - 1);
    expect(await credentials()).toBe(first);
    expect(sts.calls).toHaveLength(1);

    clock.set(expiryOf(first) - 5 * MINUTE);
    const second = await credentials();
    expect(sts.calls).toHaveLength(2);
    expect(second.accessKeyId).toBe('ASIAFAKE0002');
    expect(expiryOf(second)).toBe(expiryOf(first) - 5 * MINUTE + 3600_000);
  });

  it('takes the margin it is given', async () => {
    const { clock, sts, credentials } = aProvider({ refreshMarginMs: MINUTE });
    const first = await credentials();
    clock.set(expiryOf(first) - 2 * MINUTE);
    expect(await credentials()).toBe(first);
    clock.set(expiryOf(first) - MINUTE);
    expect(await credentials()).not.toBe(first);
    expect(sts.calls).toHaveLength(2);
  });

  it('makes one AssumeRole call for many concurrent callers', async () => {
    const { sts, credentials } = aProvider();
    sts.hold();
    const callers = Array.from({ length: 8 }, () => credentials());
    await Promise.resolve();
    sts.release();
    const results = await Promise.all(callers);
    expect(sts.calls).toHaveLength(1);
    expect(new Set(results).size).toBe(1);
  });

  it('shares a refresh between callers that arrive while it runs', async () => {
    const { clock, sts, credentials } = aProvider();
    const first = await credentials();
    clock.set(expiryOf(first) - MINUTE);
    sts.hold();
    const during = [credentials(), credentials(), credentials()];
    sts.release();
    const refreshed = await Promise.all(during);
    expect(sts.calls).toHaveLength(2);
    expect(refreshed.every((c) => c === refreshed[0] && c !== first)).toBe(true);
  });

  it('serves the last good credentials while a refresh fails and they are still valid, and tries again later', async () => {
    const { clock, sts, log, credentials } = aProvider({ retryAfterFailureMs: 30_000 });
    const first = await credentials();
    clock.set(expiryOf(first) - 4 * MINUTE);
    sts.failNext(anAwsError('ServiceUnavailable', 503, 'STS is down'));

    expect(await credentials()).toBe(first);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      `refreshing credentials for ${ROLE} failed; serving the ones valid until ${first.expiration.toISOString()}`,
    ]);
    // no call per request while STS is down: the next attempt waits retryAfterFailureMs
    clock.advance(29_999);
    expect(await credentials()).toBe(first);
    expect(sts.calls).toHaveLength(2);

    clock.advance(1);
    const refreshed = await credentials();
    expect(sts.calls).toHaveLength(3);
    expect(refreshed.accessKeyId).toBe('ASIAFAKE0003');
  });

  it('fails, naming the role and keeping the AWS error code, when nothing valid is cached', async () => {
    const { sts, credentials } = aProvider();
    sts.failNext(anAwsError('AccessDenied', 403, 'User: arn:aws:iam::111111111111:user/worker is not authorized to perform: sts:AssumeRole on resource: ' + ROLE));
    const error: unknown = await credentials().catch((e: unknown) => e);
    if (!isAssumeRoleError(error)) throw new Error(`expected an AssumeRoleError, got ${String(error)}`);
    expect(error.roleArn).toBe(ROLE);
    expect(error.message).toContain(`sts:AssumeRole of ${ROLE} (session autonode-team-a) failed (AccessDenied)`);
    // the retry layer around the EC2 call sees it as the permission problem it is
    expect(classifyAwsError(error)).toEqual(expect.objectContaining({ kind: 'unauthorized', code: 'AccessDenied' }));
  });

  it('keeps throttling retryable for the retry layer', async () => {
    const { sts, credentials } = aProvider();
    sts.failNext(anAwsError('Throttling', 400, 'Rate exceeded'));
    const error = await credentials().catch((e: unknown) => e);
    expect(classifyAwsError(error)).toEqual(expect.objectContaining({ kind: 'throttled', code: 'Throttling' }));
    // and nothing was remembered: the next call tries again and succeeds
    expect((await credentials()).accessKeyId).toBe('ASIAFAKE0002');
  });

  it('fails once the cached credentials have expired and the refresh still fails', async () => {
    const { clock, sts, credentials } = aProvider();
    const first = await credentials();
    clock.set(expiryOf(first));
    sts.failNext(anAwsError('ServiceUnavailable', 503));
    await expect(credentials()).rejects.toBeInstanceOf(AssumeRoleError);
  });

  it('rejects an AssumeRole answer without credentials', async () => {
    const clock = aFakeClock();
    const credentials = assumeRoleCredentialsProvider({ sts: { assumeRole: async () => ({ AssumedRoleUser: {} }) }, roleArn: ROLE, sessionName: 's1', clock });
    await expect(credentials()).rejects.toThrow(`sts:AssumeRole of ${ROLE} (session s1) failed`);
  });

  it('never logs the secret key or the session token', async () => {
    const { clock, sts, log, credentials } = aProvider();
    const issued: AssumedRoleCredentials[] = [await credentials()];
    clock.set(expiryOf(issued[0]!) - MINUTE);
    sts.failNext(anAwsError('InternalFailure', 500));
    await credentials();
    clock.advance(60_000 - 1);
    issued.push(await credentials().catch(() => issued[0]!));
    clock.set(expiryOf(issued[0]!) + 1);
    issued.push(await credentials());

    expect(log.lines.length).toBeGreaterThanOrEqual(3);
    for (const c of issued) {
      expect(log.text()).not.toContain(c.secretAccessKey);
      expect(log.text()).not.toContain(c.sessionToken);
    }
    expect(log.text()).toContain(ROLE);
  });

  it.each([
    [{ durationSeconds: 899 }, 'outside'],
    [{ durationSeconds: 43_201 }, 'outside'],
    [{ durationSeconds: 900, refreshMarginMs: 900_000 }, 'shorter than the session'],
  ])('refuses %j', (tuning, problem) => {
    expect(() => assumeRoleCredentialsProvider({ sts: new FakeSts(() => new Date(T0)), roleArn: ROLE, sessionName: 's', ...tuning })).toThrow(problem);
  });
});

describe('createAssumeRoleCredentialsFactory', () => {
  function aFactory(withoutRole?: ReturnType<typeof staticCredentialsProvider>) {
    const clock = aFakeClock();
    const stsByRegion = new Map<string, FakeSts>();
    const stsFor = (region: string) => {
      const sts = stsByRegion.get(region) ?? new FakeSts(clock.now);
      stsByRegion.set(region, sts);
      return sts;
    };
    return { stsByRegion, credentialsFor: createAssumeRoleCredentialsFactory({ stsFor, clock, ...(withoutRole ? { withoutRole } : {}) }) };
  }

  it('assumes each cluster its own role in its region, once for all of the cluster\'s clients', async () => {
    const { stsByRegion, credentialsFor } = aFactory();
    const a = { name: 'team-a-x7k2p', region: 'eu-west-1', credentialsRef: ROLE };
    const b = { name: 'team-b-q9m4z', region: 'us-east-1', credentialsRef: 'arn:aws:iam::123456789012:role/autonode-team-b' };
    const forEc2 = credentialsFor(a);
    const forSsm = credentialsFor({ ...a });
    const forB = credentialsFor(b);
    if (typeof forEc2 !== 'function' || typeof forSsm !== 'function' || typeof forB !== 'function') throw new Error('expected providers');

    const [ec2Creds, ssmCreds, bCreds] = await Promise.all([forEc2(), forSsm(), forB()]);
    expect(ssmCreds).toBe(ec2Creds);
    expect(bCreds).not.toBe(ec2Creds);
    expect(stsByRegion.get('eu-west-1')?.calls).toEqual([{ RoleArn: ROLE, RoleSessionName: 'autonode-team-a-x7k2p', DurationSeconds: 3600 }]);
    expect(stsByRegion.get('us-east-1')?.calls).toEqual([{ RoleArn: b.credentialsRef, RoleSessionName: 'autonode-team-b-q9m4z', DurationSeconds: 3600 }]);
  });

  it('refuses a cluster that names no role, saying what to set', () => {
    const { credentialsFor } = aFactory();
    expect(() => credentialsFor({ name: 'dev', region: 'us-east-1' })).toThrow('spec.autoNode.provisionerConfig.karpenter.aws.roleARN');
  });

  it('uses the fallback for a cluster that names no role, when given one', () => {
    const { credentialsFor, stsByRegion } = aFactory(staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }));
    expect(credentialsFor({ name: 'dev', region: 'us-east-1' })).toEqual({ accessKeyId: 'testing', secretAccessKey: 'testing' });
    expect(stsByRegion.size).toBe(0);
  });
});

describe('sessionNameFor', () => {
  it.each([
    ['team-a-x7k2p', 'autonode-team-a-x7k2p'],
    ['cluster.with.dots', 'autonode-cluster.with.dots'],
    ['weird/name:here', 'autonode-weird-name-here'],
  ])('%s → %s', (cluster, session) => {
    expect(sessionNameFor(cluster)).toBe(session);
  });

  it('cuts long names to 64 characters, keeping two long names apart', () => {
    const one = sessionNameFor(`${'a'.repeat(70)}-1`);
    const two = sessionNameFor(`${'a'.repeat(70)}-2`);
    expect([one.length, two.length]).toEqual([64, 64]);
    expect(one).not.toBe(two);
    expect(one).toMatch(/^autonode-a+-[0-9a-f]{8}$/);
  });
});
