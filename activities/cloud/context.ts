import { type CloudClusterRef } from './domain';
import { type Clock, type CloudLogger, type Ec2Api } from './ports';
import { callEc2, type RetryDeps } from './retry';
import { type InstanceReads } from './instance-reads';
import { type LaunchTemplateRef } from './launch-template';

/** What every EC2 operation of one cluster's provider shares. */
export interface Ec2Context {
  ec2: Ec2Api;
  cluster: CloudClusterRef;
  clock: Clock;
  logger: CloudLogger;
  retry: RetryDeps;
  /** single-instance reads, merged across the cluster's concurrent callers (instance-reads.ts) */
  reads: InstanceReads;
  /** launch templates this process ensured, by name, and when (launch-template.ts) */
  templates: Map<string, { at: number; ref: Promise<LaunchTemplateRef> }>;
}

export function call<T>(ctx: Pick<Ec2Context, 'retry'>, operation: string, send: () => Promise<T>): Promise<T> {
  return callEc2(operation, send, ctx.retry);
}
