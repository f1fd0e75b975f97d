// The activities count what happened, once per NodeClaim, however often Temporal runs them:
// the real activity code against an in-memory guest API server (behind the real client) and
// a fake cloud provider, the metrics read back from the registry's exposition.
import { type Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { type LogLevel, type LogMetadata } from '@temporalio/common';
import { InsufficientCapacityError } from '../../../activities/cloud';
import { type ClusterResolver } from '../../../activities/cluster';
import { createDisruptionActivities } from '../../../activities/disruption/activity';
import { createAutonodeMetrics, instrumentClusterResolver, type AutonodeMetrics } from '../../../activities/metrics';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { createNodeClaimKubeActivities } from '../../../activities/nodeclaim/kube';
import { createProvisionerActivities, type CreateClaimsInput } from '../../../activities/provisioner/activity';
import { type SolverThread } from '../../../activities/provisioner/solver-thread';
import { type ClaimTemplate, type CompactClaim } from '../../../core/provisioning';
import { parseExposition, valueOf, type Exposition } from '../../support/prometheus';
import { anEC2NodeClass } from '../api/builders';
import { anInstanceType } from '../instancetypes/builders';
import { FakeCloudProvider } from './fake-cloud';
import { startFakeGuest, type FakeGuest } from './fake-guest';

const cluster = { name: 'c1', region: 'us-east-1' };
const taskQueues = { control: 'control', cloud: 'cloud', packing: 'packing' };
const claimPath = (name: string) => `/apis/karpenter.sh/v1/nodeclaims/${name}`;

const template = (pool: string): ClaimTemplate => ({
  pool,
  poolUid: `uid-${pool}`,
  labels: { 'karpenter.sh/nodepool': pool },
  annotations: {},
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' },
});
const aClaim = (name: string, pool: string): CompactClaim => ({
  name,
  pool,
  options: 0,
  requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
  requests: { cpu: '1' },
  price: 0.096,
  pods: 1,
});
const batch = (claims: CompactClaim[]): CreateClaimsInput => ({
  cluster,
  taskQueues,
  batchId: 'b1',
  templates: [...new Set(claims.map((c) => c.pool))].map(template),
  optionLists: [['m5.large']],
  claims,
});

/** An activity run the way a worker runs it: in its context, with its type and its workflow's type. */
const inActivity = <R>(activityType: string, workflowType: string, body: () => Promise<R>, logs?: { level: LogLevel; message: string; meta?: LogMetadata }[]) => {
  const log = (level: LogLevel) => (message: string, meta?: LogMetadata) => void logs?.push({ level, message, ...(meta ? { meta } : {}) });
  const logger = { log: (level: LogLevel, message: string, meta?: LogMetadata) => log(level)(message, meta), trace: log('TRACE'), debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') };
  return new MockActivityEnvironment({ activityType, workflowType }, { logger }).run<[], R, () => Promise<R>>(body);
};

describe('activities count what happened, once per NodeClaim', () => {
  let guest: FakeGuest;
  let cloud: FakeCloudProvider;
  let metrics: AutonodeMetrics;
  let resolve: ClusterResolver;
  const started: string[] = [];
  const temporal = { workflow: { start: async (_type: string, o: { workflowId: string }) => void started.push(o.workflowId) } } as unknown as Client;
  const scrape = async (): Promise<Exposition> => parseExposition(await metrics.registry.metrics());

  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new FakeCloudProvider([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    metrics = createAutonodeMetrics();
    resolve = instrumentClusterResolver(async () => ({ guest: guest.kube, cloud }), metrics);
    guest.put('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/nc', { ...anEC2NodeClass(), metadata: { name: 'nc' } });
    started.length = 0;
  });
  afterEach(async () => guest.close());

  it('karpenter_nodeclaims_created_total: each created claim once, by pool and reason; a retried batch adds nothing', async () => {
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics });
    const logs: { level: LogLevel; message: string; meta?: LogMetadata }[] = [];
    const claims = [aClaim('a-1', 'a'), aClaim('a-2', 'a'), aClaim('b-1', 'b')];
    const first = await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch(claims)), logs);
    expect(first.created).toEqual(['a-1', 'a-2', 'b-1']);
    // Temporal retries the activity (the first attempt's result was lost): the claims exist
    const retry = await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch(claims)));
    expect(retry.resumed).toEqual(['a-1', 'a-2', 'b-1']);
    // the disruption workflow's replacements are created for another reason
    await inActivity('createClaims', 'disruptionWorkflow', () => provisioner.createClaims(batch([aClaim('a-3', 'a')])));

    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster: 'c1', reason: 'provisioning', nodepool: 'a' })).toBe(2);
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster: 'c1', reason: 'provisioning', nodepool: 'b' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster: 'c1', reason: 'disruption', nodepool: 'a' })).toBe(1);
    expect(started).toHaveLength(7);
    // each creation says which claim in the log, with its cluster
    expect(logs.filter((l) => l.message === 'NodeClaim created').map((l) => l.meta)).toEqual([
      expect.objectContaining({ cluster: 'c1', nodeclaim: 'a-1', nodepool: 'a', reason: 'provisioning', activityType: 'createClaims' }),
      expect.objectContaining({ cluster: 'c1', nodeclaim: 'a-2', nodepool: 'a', reason: 'provisioning', activityType: 'createClaims' }),
      expect.objectContaining({ cluster: 'c1', nodeclaim: 'b-1', nodepool: 'b', reason: 'provisioning', activityType: 'createClaims' }),
    ]);
  });

  it('autonode_nodeclaims_launched_total: a new instance once; the retried launch that finds it adds nothing; EC2 calls timed per activity', async () => {
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics });
    await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch([aClaim('a-1', 'a')])));
    const lifecycle = createNodeClaimCloudActivities({ resolve, metrics });
    const launched = await inActivity('launchClaimInstance', 'nodeClaimWorkflow', () => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }));
    expect(launched).toEqual(expect.objectContaining({ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand' }));
    const again = await inActivity('launchClaimInstance', 'nodeClaimWorkflow', () => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }));
    expect(again.instanceId).toBe(launched.instanceId);

    const scraped = await scrape();
    expect(valueOf(scraped, 'autonode_nodeclaims_launched_total', { cluster: 'c1', nodepool: 'a', instance_type: 'm5.large', capacity_type: 'on-demand', zone: 'us-east-1a' })).toBe(1);
    // two launch calls, both timed under Karpenter's method name and the activity that made them
    const create = { cluster: 'c1', controller: 'launchClaimInstance', method: 'Create', provider: 'aws' };
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', create)).toBe(2);
    expect(valueOf(scraped, 'karpenter_cloudprovider_duration_seconds_count', { ...create, method: 'GetInstanceTypes' })).toBe(2);
    expect(scraped.samples.filter((s) => s.name === 'karpenter_cloudprovider_errors_total')).toEqual([]);
  });

  it('karpenter_cloudprovider_errors_total: an insufficient-capacity launch is an error of its kind, and launches nothing', async () => {
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics });
    await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch([aClaim('a-1', 'a')])));
    cloud.failNext('launch', new InsufficientCapacityError([{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand', reason: 'InsufficientInstanceCapacity' }]));
    const lifecycle = createNodeClaimCloudActivities({ resolve, metrics });
    await expect(inActivity('launchClaimInstance', 'nodeClaimWorkflow', () => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }))).rejects.toThrow(/insufficient capacity/);
    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_cloudprovider_errors_total', { cluster: 'c1', controller: 'launchClaimInstance', method: 'Create', provider: 'aws', error: 'InsufficientCapacityError' })).toBe(1);
    expect(scraped.samples.filter((s) => s.name === 'autonode_nodeclaims_launched_total')).toEqual([]);
  });

  it('karpenter_nodeclaims_terminated_total: the call that releases the claim counts it; a retry finds it gone', async () => {
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics });
    await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch([aClaim('a-1', 'a'), aClaim('b-1', 'b')])));
    const kube = createNodeClaimKubeActivities({ resolve, reviewNodeCsrs: async () => ({ approved: [], denied: [], failed: [] }), metrics });
    // the lifecycle holds each claim with its finalizer first
    const a = await inActivity('prepareClaim', 'nodeClaimWorkflow', () => kube.prepareClaim({ cluster, name: 'a-1' }));
    await inActivity('prepareClaim', 'nodeClaimWorkflow', () => kube.prepareClaim({ cluster, name: 'b-1' }));
    const finalize = () => kube.finalizeClaim({ cluster, name: 'a-1', uid: a.uid ?? '', reason: 'deleted', warning: false });
    await inActivity('finalizeClaim', 'nodeClaimWorkflow', finalize);
    expect(guest.get(claimPath('a-1'))).toBeUndefined();
    await inActivity('finalizeClaim', 'nodeClaimWorkflow', finalize);
    // a claim recreated under the same name is someone else's: not ended, not counted
    await inActivity('finalizeClaim', 'nodeClaimWorkflow', () => kube.finalizeClaim({ cluster, name: 'b-1', uid: 'another-uid', reason: 'deleted', warning: false }));
    expect(guest.get(claimPath('b-1'))).toBeDefined();

    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_nodeclaims_terminated_total', { cluster: 'c1', nodepool: 'a' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_nodeclaims_terminated_total', { cluster: 'c1', nodepool: 'b' })).toBeUndefined();
  });

  it('karpenter_nodeclaims_disrupted_total: each deletion the disruption began, by its reason; a repeated delete adds nothing', async () => {
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics });
    await inActivity('createClaims', 'provisionerWorkflow', () => provisioner.createClaims(batch([aClaim('a-1', 'a'), aClaim('a-2', 'a')])));
    const kube = createNodeClaimKubeActivities({ resolve, reviewNodeCsrs: async () => ({ approved: [], denied: [], failed: [] }), metrics });
    for (const name of ['a-1', 'a-2']) await inActivity('prepareClaim', 'nodeClaimWorkflow', () => kube.prepareClaim({ cluster, name }));
    const disruption = createDisruptionActivities({ resolve, metrics });
    const command = {
      method: 'emptiness' as const,
      reason: 'Empty' as const,
      candidates: [{ nodeClaim: 'a-1', node: 'n1', nodePool: 'a' }, { nodeClaim: 'a-2', node: 'n2', nodePool: 'a' }, { nodeClaim: 'gone', node: 'n3', nodePool: 'a' }],
      replace: false,
      summary: '3 empty nodes',
    };
    await inActivity('deleteCandidates', 'disruptionWorkflow', () => disruption.deleteCandidates({ cluster, command }));
    await inActivity('deleteCandidates', 'disruptionWorkflow', () => disruption.deleteCandidates({ cluster, command }));
    // held by the lifecycle's finalizer: being deleted, not gone
    expect(guest.get(claimPath('a-1'))?.metadata).toEqual(expect.objectContaining({ deletionTimestamp: expect.any(String) }));

    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_nodeclaims_disrupted_total', { cluster: 'c1', reason: 'empty', nodepool: 'a' })).toBe(2);
  });

  it('karpenter_scheduler_scheduling_duration_seconds and the state gauges come from a planning batch', async () => {
    guest.put('/api/v1/nodes/n1', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', labels: { 'karpenter.sh/nodepool': 'a', 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'on-demand', 'topology.kubernetes.io/zone': 'us-east-1a', 'kubernetes.io/arch': 'amd64' } },
      status: { allocatable: { cpu: '1930m', memory: '7244Mi', pods: '29' } },
    });
    guest.put('/api/v1/nodes/other', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'other' }, status: { allocatable: { cpu: '4' } } });
    const pod = (name: string, nodeName?: string, phase = 'Running') => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }] },
      status: { phase, ...(nodeName ? {} : { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }) },
    });
    guest.put('/api/v1/pods/web-1', pod('web-1', 'n1'));
    guest.put('/api/v1/pods/web-2', pod('web-2', 'n1'));
    guest.put('/api/v1/pods/sys-1', pod('sys-1', 'other'));
    guest.put('/api/v1/pods/new-1', pod('new-1', undefined, 'Pending'));
    let solves = 0;
    const solver: SolverThread = {
      solve: async () => {
        solves++;
        return { nodeClaims: [], existingNodes: [], inFlightNodeClaims: [], unschedulable: [], totalPrice: 0 };
      },
      close: async () => undefined,
    };
    const provisioner = createProvisionerActivities({ resolve, temporal, metrics, solver });
    await inActivity('planBatch', 'provisionerWorkflow', () => provisioner.planBatch({ cluster, taskQueues, batchId: 'b1' }));
    expect(solves).toBe(1);

    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_scheduler_scheduling_duration_seconds_count', { cluster: 'c1', controller: 'provisioner' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_pods_state', { cluster: 'c1', nodepool: 'a', phase: 'Running' })).toBe(2);
    expect(valueOf(scraped, 'karpenter_pods_state', { cluster: 'c1', nodepool: '', phase: 'Running' })).toBe(1);
    expect(valueOf(scraped, 'karpenter_pods_state', { cluster: 'c1', nodepool: '', phase: 'Pending' })).toBe(1);
    const node = { cluster: 'c1', node_name: 'n1', nodepool: 'a', instance_type: 'm5.large', capacity_type: 'on-demand', zone: 'us-east-1a', arch: 'amd64' };
    expect(valueOf(scraped, 'karpenter_nodes_allocatable', { ...node, resource_type: 'cpu' })).toBe(1.93);
    expect(valueOf(scraped, 'karpenter_nodes_allocatable', { ...node, resource_type: 'memory' })).toBe(7244 * 1024 * 1024);
    expect(valueOf(scraped, 'karpenter_nodes_allocatable', { ...node, resource_type: 'pods' })).toBe(29);
    // a node autonode does not manage is no series of its
    expect(scraped.samples.filter((s) => s.name === 'karpenter_nodes_allocatable' && s.labels.node_name === 'other')).toEqual([]);
  });
});
