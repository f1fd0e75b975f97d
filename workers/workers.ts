import { DEFAULT_WORKFLOW_TASK_SLOTS } from './config';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { type ClusterResolver } from '../activities/cluster';
import { createNodeCsrReviewer } from '../activities/nodeclaim/csr-review';
import { createNodeClaimCloudActivities } from '../activities/nodeclaim/cloud';
import { createNodeClaimKubeActivities } from '../activities/nodeclaim/kube';
import { createLegacyNodeClaimActivities } from '../activities/nodeclaim/legacy';
import { createWatchActivities } from '../activities/watch/activity';
import { createProvisionerActivities } from '../activities/provisioner/activity';
import { createGcActivities } from '../activities/gc/activity';
import { createEnablementActivities } from '../activities/enablement/activity';
import { createDisruptionActivities } from '../activities/disruption/activity';
import { createInterruptionActivities, createInterruptionQueueActivities } from '../activities/interruption/activity';
import { type SqsApi } from '../activities/interruption/sqs';
import { type CloudClusterRef } from '../activities/cloud';
import { createManagementWatchActivities } from '../activities/enablement/management-watch';
import { heartbeatingAll } from '../activities/heartbeat';
import { type KubeClients } from '../activities/kube/clients';
import { defaultTaskQueues, type NodeClaimWorkflowInput, type TaskQueues } from '../core/lifecycle';
import { type Client } from '@temporalio/client';
import { type DataConverter, type WorkerDeploymentVersion } from '@temporalio/common';
import { createAutonodeMetrics, instrumentClusterResolver, type AutonodeMetrics } from '../activities/metrics';
import { type Readiness } from './metrics-server';
import { containerMemoryLimitMiB, heapLimitMiB, workflowCacheSize } from './sizing';

export interface AutonodeWorkersOptions {
  connection: NativeConnection;
  namespace: string;
  resolve: ClusterResolver;
  /** a pre-built bundle (production, tests) or the source path (development) */
  workflows: { workflowBundle: { codePath: string } } | { workflowsPath: string };
  /** the watcher starts and signals workflows through this client */
  client: Client;
  /** lifecycle settings for nodeclaim workflows the watcher starts */
  nodeClaimDefaults?: Pick<NodeClaimWorkflowInput, 'timeouts' | 'csrPolicy'>;
  /** task queues to poll (default autonode-control / autonode-cloud) */
  taskQueues?: TaskQueues;
  /** EC2 calls per second from this worker (the cloud queue's rate limit) */
  cloudActivitiesPerSecond?: number;
  /** the management cluster (HostedClusters, the guests' kubeconfig Secrets): enablement runs only with it */
  management?: KubeClients;
  /** which queues this process polls (default all three): e.g. packing workers scaled apart from the rest */
  run?: readonly WorkerRole[];
  /** autonodeDataConverter(…) (workers/codec/): payload encryption, the same as `client`'s; default Temporal's own */
  dataConverter?: DataConverter;
  /** where the activities count (the process's /metrics endpoint serves its registry); a private one when absent */
  metrics?: AutonodeMetrics;
  /** the control worker's workflow cache (SDK maxCachedWorkflows); absent: sized from the heap and container memory limits (sizing.ts) */
  maxCachedWorkflows?: number;
  /** the control worker's workflow task slots (SDK maxConcurrentWorkflowTaskExecutions); absent: 10 (config.ts says why) */
  maxConcurrentWorkflowTasks?: number;
  /** this build's Worker Deployment Version (ADR 0009); absent: unversioned workers */
  deployment?: WorkerDeploymentVersion;
  /** each cluster's SQS client (its role), for interruption queues; without it a cluster naming a queue gets a poll failure saying so */
  sqsClientFor?: (cluster: CloudClusterRef) => SqsApi;
}

export const WORKER_ROLES = ['control', 'cloud', 'packing'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

/**
 * The composition root: every activity is built here from its ports, once, and the
 * workers poll the task queues of ARCHITECTURE.md. `autonode-control` runs workflows and
 * Kubernetes activities; `autonode-cloud` runs EC2 activities, rate-limited;
 * `autonode-packing` runs the provisioner's batches, one at a time per process.
 */
export async function createAutonodeWorkers(options: AutonodeWorkersOptions): Promise<Worker[]> {
  // Each queue's worker registers only the activities that belong on it: a proxy for the
  // wrong queue finds no such activity instead of quietly running it in the wrong place.
  const metrics = options.metrics ?? createAutonodeMetrics();
  // every cluster's cloud provider timed and its errors counted, whichever resolver was given
  const resolve = instrumentClusterResolver(options.resolve, metrics);
  const kube = createNodeClaimKubeActivities({ resolve, reviewNodeCsrs: createNodeCsrReviewer(resolve), metrics });
  const cloudActivities = createNodeClaimCloudActivities({ resolve, metrics });
  const legacy = createLegacyNodeClaimActivities(kube, cloudActivities);
  // Every activity beats while it runs (activities/heartbeat.ts), so each proxy's heartbeat
  // timeout (seconds) notices a killed worker long before its start-to-close timeout would;
  // the watches and the interruption queue's long poll beat with their own progress.
  const watchActivities = createWatchActivities({
    resolve,
    temporal: options.client,
    ...(options.nodeClaimDefaults ? { nodeClaimDefaults: options.nodeClaimDefaults } : {}),
  });
  const controlActivities = {
    ...heartbeatingAll({
      ...kube,
      ...legacy.control,
      ...createDisruptionActivities({ resolve, metrics }),
      ...createInterruptionActivities({ resolve, metrics }),
      ...(options.management ? createEnablementActivities({ management: options.management, resolve, temporal: options.client }) : {}),
    }),
    ...watchActivities,
    // (the watch's GC failure Event is a plain one)
    ...heartbeatingAll({ recordGcFailure: watchActivities.recordGcFailure }),
    ...(options.management ? createManagementWatchActivities({ management: options.management, temporal: options.client }) : {}),
  };
  const cloudQueueActivities = {
    ...heartbeatingAll({ ...cloudActivities, ...legacy.cloud, ...createGcActivities({ resolve }) }),
    // the interruption queue's long poll holds one of this worker's activity slots per cluster that names a queue
    ...createInterruptionQueueActivities({ metrics, ...(options.sqsClientFor ? { sqsClientFor: options.sqsClientFor } : {}) }),
  };
  const queues = options.taskQueues ?? defaultTaskQueues;
  const common: Pick<WorkerOptions, 'connection' | 'namespace' | 'dataConverter' | 'workerDeploymentOptions'> = {
    connection: options.connection,
    namespace: options.namespace,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    // Every queue's worker is of the build: a pinned workflow's activities run on its build
    // too. The default behaviour is for workflows that declare none (each of ours declares
    // its own, ADR 0009): AUTO_UPGRADE, since a pinned one that never moves never drains.
    ...(options.deployment ? { workerDeploymentOptions: { version: options.deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' } } : {}),
  };
  const roles = new Set<WorkerRole>(options.run ?? WORKER_ROLES);
  const workers: Worker[] = [];
  if (roles.has('control')) workers.push(await Worker.create({
    ...common,
    taskQueue: queues.control,
    ...options.workflows,
    maxCachedWorkflows: options.maxCachedWorkflows ?? workflowCacheSize({ heapLimitMiB: heapLimitMiB(), memoryLimitMiB: containerMemoryLimitMiB() }),
    maxConcurrentWorkflowTaskExecutions: options.maxConcurrentWorkflowTasks ?? DEFAULT_WORKFLOW_TASK_SLOTS,
    activities: controlActivities,
    // Ctrl-C / SIGTERM: give running activities a moment, then stop.
    shutdownGraceTime: '10 seconds',
    // A heartbeat's answer is how a cancelled watcher learns it was cancelled: without
    // this the SDK throttles heartbeats to 80% of the heartbeat timeout (24 s).
    maxHeartbeatThrottleInterval: '5 seconds',
  }));
  if (roles.has('cloud')) workers.push(await Worker.create({
    ...common,
    taskQueue: queues.cloud,
    activities: cloudQueueActivities,
    maxActivitiesPerSecond: options.cloudActivitiesPerSecond ?? 20,
    shutdownGraceTime: '10 seconds',
    // beats sent as they come (not throttled to 80% of the timeout): a slow beat is a dead worker
    maxHeartbeatThrottleInterval: '5 seconds',
  }));
  if (roles.has('packing')) workers.push(await Worker.create({
    ...common,
    taskQueue: queues.packing,
    activities: createProvisionerActivities({
      resolve,
      metrics,
      temporal: options.client,
      ...(options.nodeClaimDefaults ? { nodeClaimDefaults: options.nodeClaimDefaults } : {}),
    }),
    // a batch is CPU-bound: one at a time per process, more processes for more
    maxConcurrentActivityTaskExecutions: 1,
    shutdownGraceTime: '10 seconds',
    // a packing worker killed mid-batch is noticed by its missed heartbeats: send them promptly
    maxHeartbeatThrottleInterval: '5 seconds',
  }));
  return workers;
}


/** /readyz: ready while every worker polls; otherwise each worker's queue and state say why not. */
export function workersReadiness(workers: readonly { getState(): string; options: { taskQueue: string } }[]): Readiness {
  const states = workers.map((w) => ({ queue: w.options.taskQueue, state: w.getState() }));
  return {
    ready: states.length > 0 && states.every((s) => s.state === 'RUNNING'),
    detail: states.length === 0 ? 'no workers' : states.map((s) => `${s.queue} ${s.state}`).join('\n'),
  };
}

/** Runs the workers until one fails or all are shut down; shuts the others down on failure. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
