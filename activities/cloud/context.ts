import { type CloudClusterRef } from './domain';
import { type Clock, type CloudLogger, type Ec2Api } from './ports';
import { callEc2, type RetryDeps } from './retry';

/** What every EC2 operation of one cluster's provider shares. */
export interface Ec2Context {
  ec2: Ec2Api;
  cluster: CloudClusterRef;
  clock: Clock;
  logger: CloudLogger;
  retry: RetryDeps;
}

export function call<T>(ctx: Ec2Context, operation: string, send: () => Promise<T>): Promise<T> {
  return callEc2(operation, send, ctx.retry);
}
