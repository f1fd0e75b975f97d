import { asyncLocalStorage } from '@temporalio/activity';
import { assertNever } from '../../core/assert';
import { type CloudProvider, isCloudError } from '../cloud';
import { type ClusterConnections, type ClusterResolver } from '../cluster';
import { type AutonodeMetrics } from './registry';

/**
 * Karpenter's method names where the method means the same (Create, Delete, Get, List,
 * GetInstanceTypes), so `method="Create"` selects launches on either; autonode's own
 * methods keep their names, capitalised alike.
 */
const METHOD: { readonly [K in keyof CloudProvider]-?: string } = {
  launch: 'Create',
  terminate: 'Delete',
  get: 'Get',
  list: 'List',
  instanceTypes: 'GetInstanceTypes',
  resolveNodeClass: 'ResolveNodeClass',
  findByNodeClaim: 'FindByNodeClaim',
  ensureLaunchTemplate: 'EnsureLaunchTemplate',
  deleteStaleLaunchTemplates: 'DeleteStaleLaunchTemplates',
  collectLeakedInstances: 'CollectLeakedInstances',
};

/**
 * The `error` label: Karpenter's category names where they mean the same
 * (InsufficientCapacityError, NodeClaimNotFoundError, unknown), the error's own name for
 * autonode's other typed cloud errors. A closed set: never a message.
 */
export function cloudErrorLabel(error: unknown): string {
  if (!isCloudError(error)) return 'unknown';
  switch (error.kind) {
    case 'InsufficientCapacity':
      return 'InsufficientCapacityError';
    case 'NotFound':
      return 'NodeClaimNotFoundError';
    case 'Authorization':
    case 'Transient':
    case 'InvalidRequest':
    case 'InstanceTypesUnavailable':
      return error.name;
    default:
      return assertNever(error);
  }
}

/** Karpenter labels a call by the controller that made it; autonode's controllers are its activities. */
export const currentActivityType = (): string => asyncLocalStorage.getStore()?.info.activityType ?? '';

export interface InstrumentOptions {
  metrics: AutonodeMetrics;
  cluster: string;
  provider?: string;
  /** the controller label, read at each call (default: the running activity's type) */
  controller?: () => string;
  /** seconds since an arbitrary origin (default: the monotonic clock) */
  seconds?: () => number;
}

const monotonicSeconds = () => performance.now() / 1000;

/**
 * The cloud provider with every call timed (`karpenter_cloudprovider_duration_seconds`) and
 * every error counted (`karpenter_cloudprovider_errors_total`), as Karpenter's metrics
 * decorator does. A call is one port call: the EC2 retries inside it are part of its time.
 * Temporal retrying the activity makes a new call, counted again: these count calls, not
 * claims.
 */
export function instrumentCloudProvider(provider: CloudProvider, options: InstrumentOptions): CloudProvider {
  const controller = options.controller ?? currentActivityType;
  const seconds = options.seconds ?? monotonicSeconds;
  const providerName = options.provider ?? 'aws';
  const timed = <A extends unknown[], R>(method: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const labels = { cluster: options.cluster, controller: controller(), method, provider: providerName };
      const started = seconds();
      try {
        return await call(...args);
      } catch (error) {
        options.metrics.cloudProviderErrors.inc({ ...labels, error: cloudErrorLabel(error) });
        throw error;
      } finally {
        options.metrics.cloudProviderDuration.observe(labels, Math.max(0, seconds() - started));
      }
    };
  return {
    resolveNodeClass: timed(METHOD.resolveNodeClass, (nodeClass) => provider.resolveNodeClass(nodeClass)),
    launch: timed(METHOD.launch, (request) => provider.launch(request)),
    get: timed(METHOD.get, (providerId) => provider.get(providerId)),
    findByNodeClaim: timed(METHOD.findByNodeClaim, (name) => provider.findByNodeClaim(name)),
    list: timed(METHOD.list, () => provider.list()),
    terminate: timed(METHOD.terminate, (providerId) => provider.terminate(providerId)),
    ensureLaunchTemplate: timed(METHOD.ensureLaunchTemplate, (content) => provider.ensureLaunchTemplate(content)),
    deleteStaleLaunchTemplates: timed(METHOD.deleteStaleLaunchTemplates, (o) => provider.deleteStaleLaunchTemplates(o)),
    collectLeakedInstances: timed(METHOD.collectLeakedInstances, (exists, o) => provider.collectLeakedInstances(exists, o)),
    instanceTypes: timed(METHOD.instanceTypes, (query) => provider.instanceTypes(query)),
  };
}

/**
 * The resolver with each cluster's cloud provider instrumented, once per provider object
 * (the resolver caches one per cluster): the composition root applies it, so no resolver
 * can hand the activities an unmeasured provider.
 */
export function instrumentClusterResolver(resolve: ClusterResolver, metrics: AutonodeMetrics): ClusterResolver {
  const instrumented = new WeakMap<CloudProvider, CloudProvider>();
  return async (cluster) => {
    const connections: ClusterConnections = await resolve(cluster);
    let cloud = instrumented.get(connections.cloud);
    if (!cloud) {
      cloud = instrumentCloudProvider(connections.cloud, { metrics, cluster: cluster.name });
      instrumented.set(connections.cloud, cloud);
    }
    return { ...connections, cloud };
  };
}
