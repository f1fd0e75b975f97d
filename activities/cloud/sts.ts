/**
 * Per-cluster AWS credentials by STS AssumeRole: the cluster's ClusterRef names its role
 * (`credentialsRef`, the HostedCluster's spec.autoNode...karpenter.aws.roleARN) and the
 * worker, with its own identity, assumes that role for every AWS call made for the
 * cluster. A ClusterRef carries the ARN only; the credentials live in this process's memory
 * and nowhere else (no payload, no history, no log).
 *
 * Contracts of one role's provider (`assumeRoleCredentialsProvider`):
 *  - fresh (expiring later than `refreshMarginMs` from now): returned without a call;
 *  - due: one AssumeRole runs and every concurrent caller awaits that same call (single
 *    flight);
 *  - a failed refresh while the cached credentials are still valid: those are served, the
 *    failure is logged as a warning, and no new attempt is made for `retryAfterFailureMs`
 *    (STS is not hammered by every EC2 call during an outage);
 *  - a failed refresh with nothing valid cached: the caller gets an AssumeRoleError;
 *  - logs name the role, the session and the expiry, never the key, secret or token.
 * The shape is the SDK's async credential provider (AwsCredentialIdentityProvider), so a
 * client built with it asks again before every request and gets the cached value. The SDK
 * also treats credentials within 5 minutes of expiry as stale and asks on every request:
 * the default margin here is the same, so the two agree on when a refresh is due.
 * Rejected: the SDK's own `fromTemporaryCredentials` (credential-providers package): it
 * caches and refreshes too, but does not serve the last good credentials through an STS
 * outage, is not single-flight across clients, and cannot be driven by a fake clock.
 */
import { AssumeRoleCommand, STSClient, type STSClientConfig } from '@aws-sdk/client-sts';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type CloudClusterRef } from './domain';
import { assertAwsEndpointAllowed, type ClusterCredentialsProvider, type EndpointPolicy } from './ec2-client';
import { type Clock, type CloudLogger, silentLogger, systemClock } from './ports';

/** What AssumeRole hands back, as the SDK's credential identity. Secret: never log it. */
export interface AssumedRoleCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

/** The SDK's AwsCredentialIdentityProvider shape (it passes identity properties we ignore). */
export type AssumedRoleCredentialsProvider = () => Promise<AssumedRoleCredentials>;

export interface AssumeRoleInput {
  RoleArn: string;
  RoleSessionName: string;
  DurationSeconds: number;
}

/** Port: one STS call. `stsAssumeRoleApi` adapts a real STSClient; tests pass fakes. */
export interface StsAssumeRoleApi {
  assumeRole(input: AssumeRoleInput): Promise<unknown>;
}

export function stsAssumeRoleApi(client: Pick<STSClient, 'send'>): StsAssumeRoleApi {
  return { assumeRole: (input) => client.send(new AssumeRoleCommand(input)) };
}

const AssumeRoleOutputSchema = z.object({
  Credentials: z.object({
    AccessKeyId: z.string().min(1),
    SecretAccessKey: z.string().min(1),
    SessionToken: z.string().min(1),
    Expiration: z.date(),
  }),
});

/**
 * AssumeRole failed and nothing valid is cached. It keeps the AWS error's shape (`name` is
 * the AWS error code, `$fault`, `$metadata`, a socket error's `code`), so the retry layer
 * around the EC2 or SSM call that needed the credentials classifies it as it would the STS
 * error itself: AccessDenied is permanent, throttling and 5xx are retried.
 */
export class AssumeRoleError extends Error {
  readonly $fault?: 'client' | 'server';
  readonly $metadata?: { httpStatusCode?: number };
  readonly code?: string;

  constructor(
    readonly roleArn: string,
    readonly sessionName: string,
    cause: unknown,
  ) {
    const shape = AwsErrorShape.safeParse(cause);
    const awsCode = shape.success ? (shape.data.name ?? shape.data.code) : undefined;
    const awsMessage = shape.success ? (shape.data.message ?? '') : String(cause);
    super(`sts:AssumeRole of ${roleArn} (session ${sessionName}) failed${awsCode ? ` (${awsCode})` : ''}: ${awsMessage}`, { cause });
    this.name = awsCode ?? 'AssumeRoleError';
    if (shape.success) {
      if (shape.data.$fault) this.$fault = shape.data.$fault;
      if (shape.data.$metadata) this.$metadata = shape.data.$metadata;
      if (shape.data.code) this.code = shape.data.code;
    }
  }
}

export const isAssumeRoleError = (error: unknown): error is AssumeRoleError => error instanceof AssumeRoleError;

const AwsErrorShape = z.object({
  name: z.string().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
  $fault: z.enum(['client', 'server']).optional(),
  $metadata: z.object({ httpStatusCode: z.number().optional() }).optional(),
});

export const ASSUME_ROLE_DEFAULTS = {
  /** STS's own default session length */
  durationSeconds: 3600,
  /** refresh this long before expiry; the SDK's own staleness window */
  refreshMarginMs: 5 * 60_000,
  retryAfterFailureMs: 30_000,
} as const;

export interface AssumeRoleTuning {
  /** 900-43200; the role's MaxSessionDuration must allow it */
  durationSeconds?: number;
  refreshMarginMs?: number;
  retryAfterFailureMs?: number;
}

export interface AssumeRoleProviderOptions extends AssumeRoleTuning {
  sts: StsAssumeRoleApi;
  roleArn: string;
  sessionName: string;
  clock?: Clock;
  logger?: CloudLogger;
}

export function assumeRoleCredentialsProvider(options: AssumeRoleProviderOptions): AssumedRoleCredentialsProvider {
  const durationSeconds = options.durationSeconds ?? ASSUME_ROLE_DEFAULTS.durationSeconds;
  const refreshMarginMs = options.refreshMarginMs ?? ASSUME_ROLE_DEFAULTS.refreshMarginMs;
  const retryAfterFailureMs = options.retryAfterFailureMs ?? ASSUME_ROLE_DEFAULTS.retryAfterFailureMs;
  if (!Number.isInteger(durationSeconds) || durationSeconds < 900 || durationSeconds > 43_200) {
    throw new Error(`AssumeRole durationSeconds ${durationSeconds} is outside STS's 900-43200`);
  }
  if (refreshMarginMs < 0 || refreshMarginMs >= durationSeconds * 1000) {
    throw new Error(`refresh margin ${refreshMarginMs} ms must be shorter than the session (${durationSeconds} s), or every call would assume the role again`);
  }
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const { roleArn, sessionName } = options;
  const now = (): number => clock.now().getTime();

  let current: AssumedRoleCredentials | undefined;
  /** after a failed refresh, no new attempt before this (epoch ms) */
  let holdUntil = 0;
  let inflight: Promise<AssumedRoleCredentials> | undefined;

  const isValid = (c: AssumedRoleCredentials | undefined, at: number): c is AssumedRoleCredentials => c !== undefined && at < c.expiration.getTime();

  async function refresh(): Promise<AssumedRoleCredentials> {
    const startedAt = now();
    try {
      const output = AssumeRoleOutputSchema.parse(await options.sts.assumeRole({ RoleArn: roleArn, RoleSessionName: sessionName, DurationSeconds: durationSeconds }));
      const c = output.Credentials;
      current = { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
      holdUntil = 0;
      logger.info({ roleArn, sessionName, expiration: c.Expiration.toISOString() }, `assumed role ${roleArn} until ${c.Expiration.toISOString()}`);
      return current;
    } catch (error) {
      const failure = new AssumeRoleError(roleArn, sessionName, error);
      if (!isValid(current, now())) throw failure;
      holdUntil = startedAt + retryAfterFailureMs;
      const expiration = current.expiration.toISOString();
      logger.warn(
        { roleArn, sessionName, expiration, retryAt: new Date(holdUntil).toISOString(), error: failure.message },
        `refreshing credentials for ${roleArn} failed; serving the ones valid until ${expiration}`,
      );
      return current;
    }
  }

  return () => {
    const at = now();
    if (current !== undefined && at < current.expiration.getTime() - refreshMarginMs) return Promise.resolve(current);
    if (isValid(current, at) && at < holdUntil) return Promise.resolve(current);
    // `.finally` runs asynchronously, so `inflight` is always cleared after it was set.
    inflight ??= refresh().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}

const SESSION_NAME_MAX = 64;

/**
 * The RoleSessionName for a cluster: `autonode-<cluster>`, which CloudTrail shows next to
 * every call made with the session, so an operator sees which cluster acted. STS allows
 * 2-64 characters of [\w+=,.@-]; a longer name is cut and ends in a hash of the whole, so
 * two long cluster names never share a session name.
 */
export function sessionNameFor(clusterName: string): string {
  const full = `autonode-${clusterName}`.replace(/[^\w+=,.@-]/g, '-');
  if (full.length <= SESSION_NAME_MAX) return full;
  const hash = createHash('sha256').update(clusterName).digest('hex').slice(0, 8);
  return `${full.slice(0, SESSION_NAME_MAX - hash.length - 1)}-${hash}`;
}

export interface AssumeRoleCredentialsFactoryOptions extends AssumeRoleTuning {
  /** the STS client to call for a cluster in this region (regional STS endpoints) */
  stsFor: (region: string) => StsAssumeRoleApi;
  /**
   * For clusters whose ClusterRef names no role (`npm start`'s dev cluster, tests): e.g.
   * static keys against moto. Without it such a cluster is refused.
   */
  withoutRole?: ClusterCredentialsProvider;
  clock?: Clock;
  logger?: CloudLogger;
}

/**
 * The ClusterCredentialsProvider (ec2-client.ts) that assumes each cluster's role: one
 * cached provider per (role, cluster, region) for the worker's lifetime, so every client
 * built for a cluster shares its credentials and their refresh.
 */
export function createAssumeRoleCredentialsFactory(options: AssumeRoleCredentialsFactoryOptions): ClusterCredentialsProvider {
  const providers = new Map<string, AssumedRoleCredentialsProvider>();
  return (cluster: CloudClusterRef) => {
    const roleArn = cluster.credentialsRef;
    if (roleArn === undefined || roleArn === '') {
      if (options.withoutRole) return options.withoutRole(cluster);
      throw new Error(
        `cluster ${cluster.name}: its ClusterRef names no IAM role (credentialsRef), so autonode has no credentials to act for it; set the HostedCluster's spec.autoNode.provisionerConfig.karpenter.aws.roleARN`,
      );
    }
    const sessionName = sessionNameFor(cluster.name);
    const key = JSON.stringify([roleArn, sessionName, cluster.region]);
    let provider = providers.get(key);
    if (provider === undefined) {
      provider = assumeRoleCredentialsProvider({
        sts: options.stsFor(cluster.region),
        roleArn,
        sessionName,
        ...pickTuning(options),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      providers.set(key, provider);
    }
    return provider;
  };
}

function pickTuning(t: AssumeRoleTuning): AssumeRoleTuning {
  return {
    ...(t.durationSeconds === undefined ? {} : { durationSeconds: t.durationSeconds }),
    ...(t.refreshMarginMs === undefined ? {} : { refreshMarginMs: t.refreshMarginMs }),
    ...(t.retryAfterFailureMs === undefined ? {} : { retryAfterFailureMs: t.retryAfterFailureMs }),
  };
}

export interface StsClientFactoryOptions {
  /** moto (which serves STS on its EC2 port); undefined means the regional STS endpoint */
  endpoint?: string;
  /** the worker's own identity, which may assume the clusters' roles; default: the SDK's chain */
  credentials?: STSClientConfig['credentials'];
  endpointPolicy: EndpointPolicy;
  requestTimeoutMs?: number;
}

/**
 * One STS client per region. Unlike EC2's, these keep the SDK's own retries (3 attempts):
 * AssumeRole is idempotent and rare, and its failures surface through the retry layer of
 * the EC2/SSM call that asked for credentials anyway.
 */
export function createStsClientFactory(options: StsClientFactoryOptions): (region: string) => StsAssumeRoleApi {
  assertAwsEndpointAllowed('STS', options.endpoint, options.endpointPolicy);
  const clients = new Map<string, StsAssumeRoleApi>();
  return (region) => {
    let api = clients.get(region);
    if (api === undefined) {
      const client = new STSClient({
        region,
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
        requestHandler: { requestTimeout: options.requestTimeoutMs ?? 15_000, connectionTimeout: 5_000 },
      });
      api = stsAssumeRoleApi(client);
      clients.set(region, api);
    }
    return api;
  };
}
