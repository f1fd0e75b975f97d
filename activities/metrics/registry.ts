/**
 * Every metric autonode's workers publish, defined in one place (docs/metrics.md is the
 * table). Karpenter's name and labels where the meaning is the same, so its dashboards and
 * alerts read autonode too; `autonode_` where there is no Karpenter counterpart. Every
 * series also carries `cluster`: one worker serves many hosted clusters.
 *
 * Counters are counted where the thing happened, once per business key (a NodeClaim's
 * name, an instance's tag), never per activity attempt: Temporal retries activities, and
 * a retry finds the claim or instance that an earlier attempt made. No label holds a pod
 * name or anything else that grows with the workload.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type ClusterSnapshot } from './cluster-state';

export interface AutonodeMetricsOptions {
  /** Node.js process metrics (process_*, nodejs_*): on in the worker process, off in tests */
  processMetrics?: boolean;
  /** a cluster's state gauges are dropped when no activity has observed it for this long (default 10 min) */
  snapshotTtlMs?: number;
  now?: () => number;
}

/** What the controller label of the scheduling histogram says (Karpenter's values). */
export type SchedulingController = 'provisioner' | 'disruption';

export type AutonodeMetrics = ReturnType<typeof createAutonodeMetrics>;

/** Karpenter's DurationBuckets (metrics/constants.go): controller-runtime's, up to 60 s. */
const KARPENTER_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];

/** Seconds; the scheduling simulation runs from milliseconds to tens of seconds at 20k pods. */
const SCHEDULING_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80];

export function createAutonodeMetrics(options: AutonodeMetricsOptions = {}) {
  const registry = new Registry();
  const registers = [registry];
  const now = options.now ?? Date.now;
  const ttlMs = options.snapshotTtlMs ?? 10 * 60_000;
  if (options.processMetrics) collectDefaultMetrics({ register: registry });

  const snapshots = new Map<string, { snapshot: ClusterSnapshot; at: number }>();
  /** the snapshots still fresh; stale ones (a cluster disabled, or served elsewhere now) go */
  const fresh = () => {
    for (const [cluster, entry] of snapshots) if (now() - entry.at > ttlMs) snapshots.delete(cluster);
    return [...snapshots].sort(([a], [b]) => a.localeCompare(b));
  };

  const metrics = {
    registry,
    nodeClaimsCreated: new Counter({
      name: 'karpenter_nodeclaims_created_total',
      help: 'NodeClaims created by autonode, counted when the API server accepted the create (a retried batch finds its claims and does not count them again). Labeled by cluster, reason (provisioning, disruption) and the owning nodepool.',
      labelNames: ['cluster', 'reason', 'nodepool'] as const,
      registers,
    }),
    nodeClaimsLaunched: new Counter({
      name: 'autonode_nodeclaims_launched_total',
      help: 'EC2 instances launched for NodeClaims, counted when the fleet returned a new instance (a retried launch finds the instance by its tag and does not count it again).',
      labelNames: ['cluster', 'nodepool', 'instance_type', 'capacity_type', 'zone'] as const,
      registers,
    }),
    nodeClaimsTerminated: new Counter({
      name: 'karpenter_nodeclaims_terminated_total',
      help: 'NodeClaims whose life autonode ended (its finalizer released, the claim deleted), counted by the call that released it. Labeled by cluster and the owning nodepool.',
      labelNames: ['cluster', 'nodepool'] as const,
      registers,
    }),
    nodeClaimsDisrupted: new Counter({
      name: 'karpenter_nodeclaims_disrupted_total',
      help: 'NodeClaims the disruption or interruption workflow deleted, counted by the call that began the deletion. Labeled by cluster, reason (empty, drifted, underutilized; spot_interrupted, scheduled_change, instance_stopped, instance_terminated) and the owning nodepool.',
      labelNames: ['cluster', 'reason', 'nodepool'] as const,
      registers,
    }),
    schedulingDuration: new Histogram({
      name: 'karpenter_scheduler_scheduling_duration_seconds',
      help: 'Duration of the scheduling simulation (the packing core) for provisioning and disruption, in seconds.',
      labelNames: ['cluster', 'controller'] as const,
      buckets: SCHEDULING_BUCKETS,
      registers,
    }),
    cloudProviderDuration: new Histogram({
      name: 'karpenter_cloudprovider_duration_seconds',
      help: 'Duration of cloud provider method calls, failed ones included. Labeled by cluster, controller (the Temporal activity), method and provider.',
      labelNames: ['cluster', 'controller', 'method', 'provider'] as const,
      registers,
    }),
    cloudProviderErrors: new Counter({
      name: 'karpenter_cloudprovider_errors_total',
      help: 'Errors returned from cloud provider calls. Labeled by cluster, controller (the Temporal activity), method, provider and error.',
      labelNames: ['cluster', 'controller', 'method', 'provider', 'error'] as const,
      registers,
    }),
    interruptionReceived: new Counter({
      name: 'karpenter_interruption_received_messages_total',
      help: 'Messages received from the cluster\'s interruption queue and parsed, counted by the poll that received them (SQS delivers a message again if it was not deleted). Labeled by cluster and message_type (spot_interrupted, rebalance_recommendation, scheduled_change, instance_stopped, instance_terminated, no_op).',
      labelNames: ['cluster', 'message_type'] as const,
      registers,
    }),
    interruptionDeleted: new Counter({
      name: 'karpenter_interruption_deleted_messages_total',
      help: 'Messages deleted from the cluster\'s interruption queue after handling (unparseable ones too).',
      labelNames: ['cluster'] as const,
      registers,
    }),
    interruptionQueueDuration: new Histogram({
      name: 'karpenter_interruption_message_queue_duration_seconds',
      help: 'How long an interruption message waited, from its event\'s time until it was handled, in seconds. Messages of kinds autonode acts on (not no_op, not unparseable).',
      labelNames: ['cluster'] as const,
      buckets: KARPENTER_DURATION_BUCKETS,
      registers,
    }),
    interruptionIgnored: new Counter({
      name: 'autonode_interruption_ignored_messages_total',
      help: 'Interruption messages deleted without any action: unparseable (not an EventBridge event autonode can read) or no_nodeclaim (an interruption of an instance no NodeClaim of this cluster has: another cluster\'s, or one already gone).',
      labelNames: ['cluster', 'reason'] as const,
      registers,
    }),
    /** Replaces what the state gauges show for this cluster with what an activity just listed. */
    observeCluster(cluster: string, snapshot: ClusterSnapshot): void {
      snapshots.set(cluster, { snapshot, at: now() });
    },
  };

  // The state gauges are computed at scrape time from the latest snapshot per cluster, so a
  // node or pool that went away leaves no series behind.
  new Gauge({
    name: 'karpenter_nodes_allocatable',
    help: 'Allocatable resources of the nodes autonode manages, in base units (cores, bytes, pods), as last listed. Labeled by cluster, node_name, nodepool, resource_type, instance_type, capacity_type, zone and arch.',
    labelNames: ['cluster', 'node_name', 'nodepool', 'resource_type', 'instance_type', 'capacity_type', 'zone', 'arch'] as const,
    registers,
    collect() {
      this.reset();
      for (const [cluster, { snapshot }] of fresh()) {
        for (const node of snapshot.nodes) {
          for (const [resource, value] of Object.entries(node.allocatable)) {
            this.set({ cluster, node_name: node.name, nodepool: node.nodePool, resource_type: resource, instance_type: node.instanceType, capacity_type: node.capacityType, zone: node.zone, arch: node.arch }, value);
          }
        }
      }
    },
  });
  new Gauge({
    name: 'karpenter_pods_state',
    help: 'Pods by phase and the nodepool of the node they are bound to ("" when unbound or on a node autonode does not manage), as last listed. One series per (cluster, nodepool, phase) whose value is the count, not one per pod.',
    labelNames: ['cluster', 'nodepool', 'phase'] as const,
    registers,
    collect() {
      this.reset();
      for (const [cluster, { snapshot }] of fresh()) {
        for (const pods of snapshot.pods) this.set({ cluster, nodepool: pods.nodePool, phase: pods.phase }, pods.count);
      }
    },
  });
  new Gauge({
    name: 'autonode_cluster_state_observed_timestamp_seconds',
    help: 'When this worker last listed the cluster for the state gauges (karpenter_nodes_allocatable, karpenter_pods_state), in Unix seconds.',
    labelNames: ['cluster'] as const,
    registers,
    collect() {
      this.reset();
      for (const [cluster, { at }] of fresh()) this.set({ cluster }, at / 1000);
    },
  });
  return metrics;
}
