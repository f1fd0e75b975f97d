// karpenter_nodes_allocatable and karpenter_pods_state show the latest listing of each
// cluster: a node that went away leaves no series, a cluster nobody lists any more goes.
import { createAutonodeMetrics, summariseCluster } from '../../../activities/metrics';
import { parseExposition, samplesOf, valueOf } from '../../support/prometheus';

const aNode = (name: string, pool: string | undefined, allocatable: Record<string, string>) => ({
  metadata: { name, labels: { ...(pool ? { 'karpenter.sh/nodepool': pool } : {}), 'node.kubernetes.io/instance-type': 'c5.large', 'karpenter.sh/capacity-type': 'spot', 'topology.kubernetes.io/zone': 'us-east-1b', 'kubernetes.io/arch': 'amd64' } },
  status: { allocatable },
});
const aPod = (nodeName: string | undefined, phase: string | undefined) => ({ spec: nodeName ? { nodeName } : {}, status: phase ? { phase } : {} });

describe('summariseCluster', () => {
  it('counts pods by the pool of their node and their phase, and reads managed nodes\' allocatable in base units', () => {
    const snapshot = summariseCluster({
      nodes: [aNode('n1', 'web', { cpu: '1930m', memory: '3Gi', pods: '29', 'ephemeral-storage': '17Gi' }), aNode('unmanaged', undefined, { cpu: '2' })],
      pods: [aPod('n1', 'Running'), aPod('n1', 'Running'), aPod('n1', 'Succeeded'), aPod('unmanaged', 'Running'), aPod(undefined, 'Pending'), aPod(undefined, undefined), 'not a pod'],
    });
    expect(snapshot.nodes).toEqual([
      { name: 'n1', nodePool: 'web', instanceType: 'c5.large', capacityType: 'spot', zone: 'us-east-1b', arch: 'amd64', allocatable: { cpu: 1.93, memory: 3 * 2 ** 30, pods: 29, 'ephemeral-storage': 17 * 2 ** 30 } },
    ]);
    expect(snapshot.pods).toEqual([
      { nodePool: '', phase: 'Pending', count: 1 },
      { nodePool: '', phase: 'Running', count: 1 },
      { nodePool: '', phase: 'Unknown', count: 1 },
      { nodePool: 'web', phase: 'Running', count: 2 },
      { nodePool: 'web', phase: 'Succeeded', count: 1 },
    ]);
  });

  it('leaves out an allocatable value Kubernetes would not accept instead of guessing', () => {
    expect(summariseCluster({ nodes: [aNode('n1', 'web', { cpu: 'lots', pods: '10' })], pods: [] }).nodes[0]?.allocatable).toEqual({ pods: 10 });
  });
});

describe('the state gauges', () => {
  it('replace a cluster\'s series with each listing, keep other clusters\', and drop a cluster not listed within the TTL', async () => {
    let now = 1_000_000;
    const metrics = createAutonodeMetrics({ now: () => now, snapshotTtlMs: 60_000 });
    metrics.observeCluster('c1', summariseCluster({ nodes: [aNode('n1', 'web', { cpu: '2' }), aNode('n2', 'web', { cpu: '4' })], pods: [aPod('n1', 'Running')] }));
    metrics.observeCluster('c2', summariseCluster({ nodes: [aNode('m1', 'batch', { cpu: '8' })], pods: [aPod(undefined, 'Pending')] }));
    let scraped = parseExposition(await metrics.registry.metrics());
    expect(samplesOf(scraped, 'karpenter_nodes_allocatable', { cluster: 'c1' }).map((s) => s.labels.node_name)).toEqual(['n1', 'n2']);
    expect(valueOf(scraped, 'autonode_cluster_state_observed_timestamp_seconds', { cluster: 'c1' })).toBe(1000);

    // n2 is gone and the pod finished: the next listing says so, and nothing of n2 remains
    now += 30_000;
    metrics.observeCluster('c1', summariseCluster({ nodes: [aNode('n1', 'web', { cpu: '2' })], pods: [aPod('n1', 'Succeeded')] }));
    scraped = parseExposition(await metrics.registry.metrics());
    expect(samplesOf(scraped, 'karpenter_nodes_allocatable', { cluster: 'c1' }).map((s) => s.labels.node_name)).toEqual(['n1']);
    expect(samplesOf(scraped, 'karpenter_pods_state', { cluster: 'c1' }).map((s) => [s.labels.phase, s.value])).toEqual([['Succeeded', 1]]);
    expect(valueOf(scraped, 'karpenter_nodes_allocatable', { cluster: 'c2', node_name: 'm1', nodepool: 'batch', resource_type: 'cpu', instance_type: 'c5.large', capacity_type: 'spot', zone: 'us-east-1b', arch: 'amd64' })).toBe(8);

    // c2 was last listed 61 s ago: its series go rather than stand for a cluster nobody watches
    now += 31_000;
    scraped = parseExposition(await metrics.registry.metrics());
    expect(samplesOf(scraped, 'karpenter_nodes_allocatable', { cluster: 'c2' })).toEqual([]);
    expect(samplesOf(scraped, 'karpenter_pods_state', { cluster: 'c2' })).toEqual([]);
    expect(samplesOf(scraped, 'karpenter_nodes_allocatable', { cluster: 'c1' })).toHaveLength(1);
  });
});
