// karpenter_cloudprovider_duration_seconds and karpenter_cloudprovider_errors_total, as the
// decorator around the cloud-provider port writes them.
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  AuthorizationError,
  InstanceTypesUnavailableError,
  InsufficientCapacityError,
  InvalidRequestError,
  NotFoundError,
  TransientCloudError,
  type CloudError,
  type CloudProvider,
} from '../../../activities/cloud';
import { type ClusterConnections } from '../../../activities/cluster';
import { cloudErrorLabel, createAutonodeMetrics, instrumentCloudProvider, instrumentClusterResolver } from '../../../activities/metrics';
import { parseExposition, valueOf } from '../../support/prometheus';
import { FakeCloudProvider } from './fake-cloud';

const scrape = async (metrics: ReturnType<typeof createAutonodeMetrics>) => parseExposition(await metrics.registry.metrics());

/** A clock that advances by the given steps, one per reading. */
function steppingSeconds(...readings: number[]): () => number {
  let i = 0;
  return () => readings[Math.min(i++, readings.length - 1)] ?? 0;
}

describe('the cloud provider decorator', () => {
  it('times each call under Karpenter\'s method name, counting only failures as errors', async () => {
    const metrics = createAutonodeMetrics();
    const cloud = new FakeCloudProvider();
    // call 1 takes 0.5 s, call 2 takes 2 s (start/end readings)
    const instrumented = instrumentCloudProvider(cloud, { metrics, cluster: 'c1', controller: () => 'terminateClaimInstance', seconds: steppingSeconds(10, 10.5, 20, 22) });
    await instrumented.terminate('aws:///us-east-1a/i-1');
    cloud.failNext('terminate', new TransientCloudError('TerminateInstances', 'RequestLimitExceeded', 5, 'throttled'));
    await expect(instrumented.terminate('aws:///us-east-1a/i-1')).rejects.toThrow('throttled');

    const scraped = await scrape(metrics);
    const labels = { cluster: 'c1', controller: 'terminateClaimInstance', method: 'Delete', provider: 'aws' };
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', labels)).toBe(2);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_sum', labels)).toBe(2.5);
    expect(valueOf(scraped, 'karpenter_cloudprovider_errors_total', { ...labels, error: 'TransientError' })).toBe(1);
    // the successful call counted no error of any kind
    expect(scraped.samples.filter((s) => s.name === 'karpenter_cloudprovider_errors_total')).toHaveLength(1);
    expect(cloud.calls).toEqual(['terminate', 'terminate']);
  });

  it.each<[string, keyof CloudProvider, (p: CloudProvider) => Promise<unknown>]>([
    ['Create', 'launch', (p) => p.launch({ nodeClaim: { name: 'a', uid: 'u' }, nodePool: 'p', nodeClass: { name: 'n', tags: {}, securityGroupIds: [], subnets: [], userData: '', amiFamily: 'AL2023' }, images: {}, instanceTypes: [], capacityTypes: [] })],
    ['Delete', 'terminate', (p) => p.terminate('aws:///z/i-1')],
    ['Get', 'get', (p) => p.get('aws:///z/i-1')],
    ['List', 'list', (p) => p.list()],
    ['GetInstanceTypes', 'instanceTypes', (p) => p.instanceTypes({ amiFamily: 'AL2023' })],
    ['ResolveNodeClass', 'resolveNodeClass', (p) => p.resolveNodeClass({ name: 'n', spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [] } })],
    ['FindByNodeClaim', 'findByNodeClaim', (p) => p.findByNodeClaim('a')],
    ['EnsureLaunchTemplate', 'ensureLaunchTemplate', (p) => p.ensureLaunchTemplate({} as never)],
    ['DeleteStaleLaunchTemplates', 'deleteStaleLaunchTemplates', (p) => p.deleteStaleLaunchTemplates({ nodeClassName: 'n', keep: [] })],
    ['CollectLeakedInstances', 'collectLeakedInstances', (p) => p.collectLeakedInstances(async () => true)],
  ])('method="%s" for %s, its error labelled', async (method, port, call) => {
    const metrics = createAutonodeMetrics();
    const cloud = new FakeCloudProvider();
    cloud.failNext(port, new InsufficientCapacityError([]));
    await expect(call(instrumentCloudProvider(cloud, { metrics, cluster: 'c1', controller: () => 'x' }))).rejects.toThrow(/insufficient capacity/);
    const scraped = await scrape(metrics);
    const labels = { cluster: 'c1', controller: 'x', method, provider: 'aws' };
    expect(valueOf(scraped, 'karpenter_cloudprovider_errors_total', { ...labels, error: 'InsufficientCapacityError' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', labels)).toBe(1);
    expect(cloud.calls).toEqual([port]);
  });

  it.each<[CloudError | Error, string]>([
    [new InsufficientCapacityError([]), 'InsufficientCapacityError'],
    [new NotFoundError('i-1', 'terminated', 'gone'), 'NodeClaimNotFoundError'],
    [new AuthorizationError('RunInstances', ['ec2:RunInstances'], 'UnauthorizedOperation', 'denied'), 'AuthorizationError'],
    [new TransientCloudError('DescribeInstances', 'Throttling', 3, 'slow'), 'TransientError'],
    [new InvalidRequestError('CreateFleet', 'InvalidParameterValue', 'bad'), 'InvalidRequestError'],
    [new InstanceTypesUnavailableError('us-east-1', 'DescribeInstanceTypes', new Error('x'), 'none'), 'InstanceTypesUnavailableError'],
    [new Error('socket hang up'), 'unknown'],
  ])('error label of %p is %s: a closed set, never a message', (error, label) => {
    expect(cloudErrorLabel(error)).toBe(label);
  });

  it('labels the controller with the running activity\'s type, and with "" outside an activity', async () => {
    const metrics = createAutonodeMetrics();
    const instrumented = instrumentCloudProvider(new FakeCloudProvider(), { metrics, cluster: 'c1' });
    await new MockActivityEnvironment({ activityType: 'reconcileNodeClass' }).run(() => instrumented.list());
    await instrumented.list();
    const scraped = await scrape(metrics);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster: 'c1', controller: 'reconcileNodeClass', method: 'List', provider: 'aws' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster: 'c1', controller: '', method: 'List', provider: 'aws' })).toBe(1);
  });

  it('wraps each cluster\'s provider once, however often the resolver is asked', async () => {
    const metrics = createAutonodeMetrics();
    const providers = new Map([['c1', new FakeCloudProvider()], ['c2', new FakeCloudProvider()]]);
    const resolve = instrumentClusterResolver(async (cluster) => ({ guest: {} as ClusterConnections['guest'], cloud: providers.get(cluster.name)! }), metrics);
    const first = await resolve({ name: 'c1', region: 'us-east-1' });
    const again = await resolve({ name: 'c1', region: 'us-east-1' });
    const other = await resolve({ name: 'c2', region: 'us-east-1' });
    expect(again.cloud).toBe(first.cloud);
    await first.cloud.list();
    await again.cloud.list();
    await other.cloud.list();
    const scraped = await scrape(metrics);
    // two calls for c1 counted twice, not four times (no provider wrapped twice), one for c2
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster: 'c1', controller: '', method: 'List', provider: 'aws' })).toBe(2);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { cluster: 'c2', controller: '', method: 'List', provider: 'aws' })).toBe(1);
  });
});
