import { type CatalogStore } from './catalog-store';
import { type CloudClusterRef, TagKeys } from './domain';
import { type CloudProvider } from './cloud-provider';
import { type Clock, type CloudLogger, type Ec2Api, silentLogger, systemClock } from './ports';
import { defaultRetryPolicy, type RetryEvent, type RetryPolicy } from './retry';
import { type Ec2Context } from './context';
import { resolveNodeClass, type AmiResolutionOptions } from './node-class';
import { launchNodeClaim } from './launch';
import { clusterFilters, describeInstances, findByNodeClaim, getInstance, listInstances, terminateInstance } from './instances';
import { createInstanceReads } from './instance-reads';
import { deleteStaleLaunchTemplates, ensureLaunchTemplate } from './launch-template';
import { collectLeakedInstances } from './gc';
import { AliasConfigSchema } from './ami-alias';
import { createSsmParameterLookup, type SsmApi } from './ssm';
import { createInstanceTypeProvider, type InstanceTypeProvider, type RefreshIntervals } from './instance-types';
import { type PricingApi } from './on-demand-prices';

export interface Ec2CloudProviderDeps {
  /** a client for this cluster's account and region (ec2-client.ts) */
  ec2: Ec2Api;
  cluster: CloudClusterRef;
  clock?: Clock;
  logger?: CloudLogger;
  retryPolicy?: RetryPolicy;
  /** observes every retry (metrics, tests) */
  onRetry?: (event: RetryEvent) => void;
  random?: () => number;
  /** how often the instance-type cache re-reads EC2 (defaults in instance-types.ts) */
  instanceTypeRefreshMs?: Partial<RefreshIntervals>;
  /** a shared cache, for clusters of one account and region; one per provider otherwise */
  instanceTypes?: InstanceTypeProvider;
  /** where the instance-type reads are kept across restarts (catalog-store.ts), under the cluster's name */
  catalogStore?: CatalogStore;
  /**
   * SSM for this cluster's account and region (ssm.ts), read by `alias` and `ssmParameter`
   * AMI terms through the same retry policy and onRetry hook as EC2. Without it those
   * terms leave AMIsReady False, saying so.
   */
  ssm?: SsmApi;
  /**
   * The Pricing API (on-demand-prices.ts) for this cluster's on-demand prices, refreshed
   * every 12 h over the bundled table. Without it the table alone prices offerings.
   */
  pricing?: PricingApi;
  /** where alias parameter paths start; `/aws/service` (AWS) unless a test publishes its own tree */
  ssmPathPrefix?: string;
  /** the cluster's Kubernetes minor version (`1.31`): alias paths contain it */
  kubernetesVersion?: string;
}

export function createEc2CloudProvider(deps: Ec2CloudProviderDeps): CloudProvider {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const base: Omit<Ec2Context, 'reads' | 'templates'> = {
    ec2: deps.ec2,
    cluster: deps.cluster,
    clock,
    logger,
    retry: {
      policy: deps.retryPolicy ?? defaultRetryPolicy,
      clock,
      logger,
      ...(deps.onRetry ? { onRetry: deps.onRetry } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    },
  };
  const ctx: Ec2Context = {
    ...base,
    templates: new Map(),
    reads: createInstanceReads((query) => describeInstances(base, query), { key: TagKeys.nodeClaim, filters: clusterFilters(base) }),
  };
  const aliasConfig = AliasConfigSchema.parse({ ssmPathPrefix: deps.ssmPathPrefix, kubernetesVersion: deps.kubernetesVersion });
  const amiOptions: AmiResolutionOptions = {
    ...(deps.ssm ? { ssmParameter: createSsmParameterLookup({ ssm: deps.ssm, retry: ctx.retry }) } : {}),
    ...(aliasConfig.ssmPathPrefix !== undefined ? { ssmPathPrefix: aliasConfig.ssmPathPrefix } : {}),
    ...(aliasConfig.kubernetesVersion !== undefined ? { kubernetesVersion: aliasConfig.kubernetesVersion } : {}),
  };
  const instanceTypes =
    deps.instanceTypes ??
    createInstanceTypeProvider({
      ec2: deps.ec2,
      region: deps.cluster.region,
      clock,
      logger,
      retry: ctx.retry,
      ...(deps.instanceTypeRefreshMs ? { refreshIntervalMs: deps.instanceTypeRefreshMs } : {}),
      ...(deps.pricing ? { pricing: deps.pricing } : {}),
      ...(deps.catalogStore ? { catalogStore: { store: deps.catalogStore, scope: deps.cluster.name } } : {}),
    });
  return {
    resolveNodeClass: (nodeClass) => resolveNodeClass(ctx, nodeClass, amiOptions),
    launch: (request) => launchNodeClaim(ctx, request),
    get: (providerId) => getInstance(ctx, providerId),
    findByNodeClaim: (name) => findByNodeClaim(ctx, name),
    list: () => listInstances(ctx),
    terminate: (providerId) => terminateInstance(ctx, providerId),
    ensureLaunchTemplate: (content) => ensureLaunchTemplate(ctx, content),
    deleteStaleLaunchTemplates: (options) => deleteStaleLaunchTemplates(ctx, options),
    collectLeakedInstances: (nodeClaimExists, options) => collectLeakedInstances(ctx, nodeClaimExists, options?.minAgeMs),
    instanceTypes: (query) => instanceTypes.list(query),
  };
}
