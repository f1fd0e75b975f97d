import { type AssumeRoleInput, type StsAssumeRoleApi } from '../../../activities/cloud';

/**
 * A fake STS that answers AssumeRole like STS does (fresh keys each call, expiring
 * DurationSeconds after the clock's now), records every call, can fail the next calls with
 * given errors, and can hold calls until released (to see who waits on whom).
 */
export class FakeSts implements StsAssumeRoleApi {
  readonly calls: AssumeRoleInput[] = [];
  private readonly failures: Error[] = [];
  private held: (() => void)[] | undefined;

  constructor(private readonly now: () => Date) {}

  /** The next calls fail with these errors, in order. */
  failNext(...errors: Error[]): void {
    this.failures.push(...errors);
  }

  /** Calls from now on wait until release(). */
  hold(): void {
    this.held = [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const go of waiting) go();
  }

  async assumeRole(input: AssumeRoleInput): Promise<unknown> {
    this.calls.push(input);
    const n = this.calls.length;
    if (this.held) await new Promise<void>((resolve) => this.held?.push(resolve));
    const failure = this.failures.shift();
    if (failure) throw failure;
    return {
      Credentials: {
        AccessKeyId: `ASIAFAKE${String(n).padStart(4, '0')}`,
        SecretAccessKey: `secret-${n}-${input.RoleSessionName}`,
        SessionToken: `token-${n}-${input.RoleSessionName}`,
        Expiration: new Date(this.now().getTime() + input.DurationSeconds * 1000),
      },
      AssumedRoleUser: { Arn: `${input.RoleArn}/${input.RoleSessionName}`, AssumedRoleId: `AROAFAKE:${input.RoleSessionName}` },
    };
  }
}

/** An AWS SDK service error as the SDK throws it (name = error code). */
export const anAwsError = (code: string, status: number, message = code) =>
  Object.assign(new Error(message), { name: code, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
