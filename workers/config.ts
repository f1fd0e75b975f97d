import { type WorkerDeploymentVersion } from '@temporalio/common';
import { z } from 'zod';
import { durationToMs } from '../core/lifecycle/duration';
import { PayloadKeySourceSchema } from './codec/keyring';

/** The control worker's workflow task slots unless configured (AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS). */
export const DEFAULT_WORKFLOW_TASK_SLOTS = 10;

/**
 * The worker's configuration, read once from the environment at start-up and validated:
 * a bad value stops the process with a message naming the variable.
 */
export const WorkerConfigSchema = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** development: one guest kubeconfig for every cluster */
  AUTONODE_GUEST_KUBECONFIG: z.string().optional(),
  /** production: the management cluster's kubeconfig (in-cluster when unset) */
  AUTONODE_MANAGEMENT_KUBECONFIG: z.string().optional(),
  /** moto or another EC2-compatible endpoint; unset means AWS */
  AWS_ENDPOINT_URL_EC2: z.string().url().optional(),
  /** STS (per-cluster AssumeRole on the HostedCluster's roleARN); defaults to the EC2 endpoint (moto serves both) */
  AWS_ENDPOINT_URL_STS: z.string().url().optional(),
  /** SSM (AMI alias / ssmParameter terms); defaults to the EC2 endpoint's host (moto serves both) */
  AWS_ENDPOINT_URL_SSM: z.string().url().optional(),
  /** SQS (each cluster's interruption queue); defaults to the EC2 endpoint (moto serves both) */
  AWS_ENDPOINT_URL_SQS: z.string().url().optional(),
  /**
   * The Pricing API (on-demand prices, refreshed every 12 h over the bundled table). Unset:
   * AWS's own endpoint when EC2 is AWS's, and none when AWS_ENDPOINT_URL_EC2 points
   * elsewhere (moto has no Pricing API), so a local stack prices from the table.
   */
  AWS_ENDPOINT_URL_PRICING: z.string().url().optional(),
  /** like Karpenter's --isolated-vpc: no Pricing API at all, the bundled table only */
  AUTONODE_ISOLATED_VPC: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** where AMI alias parameters live; default /aws/service (moto cannot write there) */
  AUTONODE_SSM_PATH_PREFIX: z.string().startsWith('/').optional(),
  /**
   * Where each cluster's instance-type reads (types, offerings, spot prices) are kept, so a
   * restarted worker plans at once instead of re-reading EC2 first (activities/cloud/catalog-store.ts).
   * The shipped Deployment mounts an emptyDir here; unset, nothing is kept.
   */
  AUTONODE_CATALOG_CACHE_DIR: z.string().min(1).optional(),
  AUTONODE_CLOUD_RPS: z.coerce.number().positive().default(20),
  AUTONODE_TASK_QUEUE_CONTROL: z.string().min(1).default('autonode-control'),
  AUTONODE_TASK_QUEUE_CLOUD: z.string().min(1).default('autonode-cloud'),
  AUTONODE_TASK_QUEUE_PACKING: z.string().min(1).default('autonode-packing'),
  /**
   * The worker's HTTP endpoint: /metrics (autonode's metrics, Karpenter's names), /healthz,
   * /readyz. 8080 like Karpenter's METRICS_PORT; 0 turns it off.
   */
  AUTONODE_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** the Temporal SDK's own Prometheus exporter (worker, poller and task metrics), on its own port; 0 turns it off */
  AUTONODE_TEMPORAL_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** where both listen: all interfaces, so Prometheus can scrape the pod */
  AUTONODE_METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * Workflows the control worker keeps in memory between their tasks (the SDK's
   * maxCachedWorkflows). Unset: sized from the V8 heap limit (NODE_OPTIONS=--max-old-space-size)
   * and the container's memory limit, ~1.7 MiB per cached workflow (workers/sizing.ts): 129
   * with the shipped 512 MiB. docs/capacity.md sizes it.
   */
  AUTONODE_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).optional(),
  /**
   * Workflow tasks the control worker runs at once (SDK maxConcurrentWorkflowTaskExecutions,
   * whose own default is 40). A task a worker has taken but not finished within its 10 s
   * timeout is retried, and after three attempts Temporal stretches each retry's timeout
   * (up to 10 minutes, `history.workflowTaskRetryMaxInterval`): 40 tasks taken at once by a
   * worker short of CPU left NodeClaims waiting minutes in `npm run scale`. Fewer slots keep
   * the surplus queued on the server, where another worker takes it.
   */
  AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).default(DEFAULT_WORKFLOW_TASK_SLOTS),
  /**
   * A workflow bundle built ahead of time (`bundleWorkflowCode` of workflows/, with the
   * codec's failureConverterPath when payloads are encrypted). Unset: the one `npm run build`
   * wrote beside the compiled code (dist/workflow-bundle*.js, workers/bundle.ts); running
   * from source or without it, the worker bundles workflows/ itself at start (webpack in its
   * own process, ~100 MiB more).
   */
  AUTONODE_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  /**
   * How often a steady NodeClaim re-reads its objects without being signalled
   * (`timeouts.steadyResync` of the claims this worker's watch starts; unset: the workflow's
   * default, 5m). Each wake is 2 workflow tasks and an activity per claim: what bounds the
   * claims one worker serves (docs/capacity.md). It is also how soon a steady claim moves
   * to a new worker build (ADR 0009). A duration: 30m, 1h.
   */
  AUTONODE_STEADY_RESYNC: z
    .string()
    .refine((v) => {
      try {
        return (durationToMs(v) ?? 0) >= 1000;
      } catch {
        return false;
      }
    }, 'a duration of at least 1s, e.g. 30m or 1h')
    .optional(),
  /** JSON logs on stdout at this level and above */
  AUTONODE_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  /** the queues this process polls, comma-separated (control, cloud, packing); all by default */
  AUTONODE_WORKER_QUEUES: z
    .string()
    .default('control,cloud,packing')
    .transform((v) => v.split(',').map((q) => q.trim()).filter((q) => q !== ''))
    .pipe(z.array(z.enum(['control', 'cloud', 'packing'])).min(1, 'name at least one of control, cloud, packing')),
  /**
   * Worker versioning (ADR 0009): the Temporal Worker Deployment these workers belong to and
   * this build's id in it. With AUTONODE_BUILD_ID unset the workers are unversioned, as
   * before: every worker takes every task. Set, they take only the tasks of their build, and
   * new workflows go to the deployment's current build (`temporal worker deployment
   * set-current-version`).
   */
  AUTONODE_DEPLOYMENT_NAME: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'letters, digits, "-" and "_" only (Temporal reserves "." and ":" in deployment names)')
    .default('autonode'),
  AUTONODE_BUILD_ID: z
    .string()
    .max(255)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, 'letters, digits, ".", "_", "+" and "-" only, e.g. the image tag or git commit')
    .optional(),
  /**
   * Payload encryption (workers/codec/): AUTONODE_PAYLOAD_KEYS_FILE names a keyring file,
   * AUTONODE_PAYLOAD_KEYS holds the same JSON inline. Unset: payloads are not encrypted.
   */
  ...PayloadKeySourceSchema.shape,
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

/** This process's Worker Deployment Version, or none when unversioned (AUTONODE_BUILD_ID unset). */
export function workerDeploymentVersion(config: Pick<WorkerConfig, 'AUTONODE_DEPLOYMENT_NAME' | 'AUTONODE_BUILD_ID'>): WorkerDeploymentVersion | undefined {
  return config.AUTONODE_BUILD_ID ? { deploymentName: config.AUTONODE_DEPLOYMENT_NAME, buildId: config.AUTONODE_BUILD_ID } : undefined;
}

export function parseWorkerConfig(env: NodeJS.ProcessEnv): WorkerConfig {
  const parsed = WorkerConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid worker configuration: ${problems}`);
  }
  return parsed.data;
}
