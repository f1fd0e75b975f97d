import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import {
  createAssumeRoleCredentialsFactory, createEc2ClientFactory, createPricingClientFactory, createSsmClientFactory, createStsClientFactory, endpointPolicyFromEnv, type CloudLogger, type ClusterCredentialsProvider,
} from '../activities/cloud';
import { createFileCatalogStore } from '../activities/cloud/catalog-store';
import { silentLogger } from '../activities/cloud/ports';
import { managementSecretResolver, staticClusterResolver, type ClusterResolver } from '../activities/cluster';
import { createSqsClientFactory } from '../activities/interruption/sqs';
import { kubeClientsFromConfig, type KubeClients } from '../activities/kube/clients';
import { parseWorkerConfig, workerDeploymentVersion, type WorkerConfig } from './config';
import { parseFeatureGates, type FeatureGates } from './feature-gates';
import { startManagementWatch } from './management-watch';
import { autonodeDataConverter } from './codec/data-converter';
import { connectClient, connectWorker } from './temporal-connection';
import { createAutonodeWorkers, runWorkers, workersReadiness } from './workers';
import { createAutonodeMetrics } from '../activities/metrics';
import { createWorkerLogger } from './logging';
import { startMetricsServer, type MetricsServer } from './metrics-server';
import { installWorkerRuntime } from './runtime';
import { workflowSource } from './bundle';
import { containerMemoryLimitMiB, heapLimitMiB, workflowCacheSize } from './sizing';

/**
 * Credentials come from the SDK's default chain (the worker's own role, IRSA, env) and
 * never from a workflow payload. Per-cluster role assumption plugs in here.
 */
const envCredentials = () => (process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY ? { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY } : undefined);

const defaultCredentials: ClusterCredentialsProvider = () => {
  const keys = envCredentials();
  if (!keys) throw new Error('no AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (moto accepts any)');
  return keys;
};

export function clusterResolverFromConfig(config: WorkerConfig, credentialsFor: ClusterCredentialsProvider = defaultCredentials, logger?: CloudLogger): ClusterResolver {
  const endpointPolicy = endpointPolicyFromEnv(process.env);
  const ec2ClientFor = createEc2ClientFactory({
    ...(config.AWS_ENDPOINT_URL_EC2 ? { endpoint: config.AWS_ENDPOINT_URL_EC2 } : {}),
    credentialsFor,
    endpointPolicy,
  });
  const ssmEndpoint = config.AWS_ENDPOINT_URL_SSM ?? config.AWS_ENDPOINT_URL_EC2;
  const ssmClientFor = createSsmClientFactory({ ...(ssmEndpoint ? { endpoint: ssmEndpoint } : {}), credentialsFor, endpointPolicy });
  const pricingEndpoint = pricingEndpointFromConfig(config);
  const pricingClientFor = pricingEndpoint === undefined ? undefined : createPricingClientFactory({ ...(pricingEndpoint === 'aws' ? {} : { endpoint: pricingEndpoint }), credentialsFor, endpointPolicy });
  const common = {
    ec2ClientFor,
    ssmClientFor,
    ...(pricingClientFor ? { pricingClientFor } : {}),
    ...(config.AUTONODE_SSM_PATH_PREFIX ? { ssmPathPrefix: config.AUTONODE_SSM_PATH_PREFIX } : {}),
    ...(config.AUTONODE_CATALOG_CACHE_DIR ? { catalogStore: createFileCatalogStore(config.AUTONODE_CATALOG_CACHE_DIR, logger ?? silentLogger) } : {}),
    ...(logger ? { logger } : {}),
  };
  if (config.AUTONODE_GUEST_KUBECONFIG) return staticClusterResolver({ guestKubeconfigPath: config.AUTONODE_GUEST_KUBECONFIG, ...common });
  const kc = new KubeConfig();
  if (config.AUTONODE_MANAGEMENT_KUBECONFIG) kc.loadFromFile(config.AUTONODE_MANAGEMENT_KUBECONFIG);
  else kc.loadFromCluster();
  return managementSecretResolver({ management: kubeClientsFromConfig(kc), ...common });
}

/**
 * Where on-demand prices come from: a given Pricing endpoint; AWS's when EC2 is AWS's; none
 * (the bundled table) in an isolated VPC or beside an EC2 stand-in, since moto serves no
 * Pricing API and a test must never reach real AWS.
 */
export function pricingEndpointFromConfig(config: WorkerConfig): string | 'aws' | undefined {
  if (config.AUTONODE_ISOLATED_VPC) return undefined;
  if (config.AWS_ENDPOINT_URL_PRICING) return config.AWS_ENDPOINT_URL_PRICING;
  return config.AWS_ENDPOINT_URL_EC2 ? undefined : 'aws';
}

/**
 * A cluster whose ClusterRef names a role (the HostedCluster's roleARN) is served with that
 * role's credentials (STS AssumeRole, cached and refreshed); one without, with the worker's own.
 */
export function credentialsFromConfig(config: WorkerConfig): ClusterCredentialsProvider {
  const stsEndpoint = config.AWS_ENDPOINT_URL_STS ?? config.AWS_ENDPOINT_URL_EC2;
  const keys = envCredentials();
  const stsFor = createStsClientFactory({ ...(stsEndpoint ? { endpoint: stsEndpoint } : {}), endpointPolicy: endpointPolicyFromEnv(process.env), ...(keys ? { credentials: keys } : {}) });
  return createAssumeRoleCredentialsFactory({ stsFor, withoutRole: defaultCredentials });
}

/** Each cluster's SQS client for its interruption queue, with the cluster's credentials, like EC2's. */
export function sqsClientFactoryFromConfig(config: WorkerConfig, credentialsFor: ClusterCredentialsProvider) {
  const endpoint = config.AWS_ENDPOINT_URL_SQS ?? config.AWS_ENDPOINT_URL_EC2;
  return createSqsClientFactory({ ...(endpoint ? { endpoint } : {}), credentialsFor, endpointPolicy: endpointPolicyFromEnv(process.env) });
}

/** The management cluster (HostedClusters): from AUTONODE_MANAGEMENT_KUBECONFIG, in-cluster, or none in the one-guest development mode. */
export function managementFromConfig(config: WorkerConfig): KubeClients | undefined {
  if (config.AUTONODE_GUEST_KUBECONFIG && !config.AUTONODE_MANAGEMENT_KUBECONFIG) return undefined;
  const kc = new KubeConfig();
  if (config.AUTONODE_MANAGEMENT_KUBECONFIG) kc.loadFromFile(config.AUTONODE_MANAGEMENT_KUBECONFIG);
  else kc.loadFromCluster();
  return kubeClientsFromConfig(kc);
}

/**
 * The worker's command line: `--feature-gates=Autoprovision=true` (Kubernetes style; the
 * environment's AUTONODE_FEATURE_GATES is the same for `npm start` and tests, and the flag
 * wins when both are given). Everything else is configured by the environment (config.ts).
 */
export function parseWorkerArgs(argv: readonly string[], env: NodeJS.ProcessEnv): { featureGates: FeatureGates } {
  const program = new Command('autonode-worker')
    .description('autonode Temporal workers (configured by the environment: TEMPORAL_ADDRESS, AUTONODE_MANAGEMENT_KUBECONFIG, …)')
    .option('--feature-gates <gates>', 'comma-separated <Gate>=true|false; known gates: Autoprovision (default false)')
    .exitOverride()
    .parse([...argv], { from: 'node' });
  const flag = program.opts<{ featureGates?: string }>().featureGates;
  return { featureGates: flag !== undefined ? parseFeatureGates(flag) : parseFeatureGates(env.AUTONODE_FEATURE_GATES, 'AUTONODE_FEATURE_GATES') };
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  const { featureGates } = parseWorkerArgs(argv, process.env);
  const config = parseWorkerConfig(process.env);
  const logger = createWorkerLogger({ level: config.AUTONODE_LOG_LEVEL });
  // before any connection: the runtime's logger and the SDK's metrics exporter are fixed at install
  installWorkerRuntime({ logger, temporalMetrics: { host: config.AUTONODE_METRICS_HOST, port: config.AUTONODE_TEMPORAL_METRICS_PORT } });
  const metrics = createAutonodeMetrics({ processMetrics: true });
  const temporal = { address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE };
  // one converter for the workers and the client their activities start and signal workflows with
  const dataConverter = autonodeDataConverter(config);
  const connection = await connectWorker(temporal);
  const client = await connectClient(temporal, { dataConverter });
  const management = managementFromConfig(config);
  const deployment = workerDeploymentVersion(config);
  if (deployment) logger.info({ deployment: deployment.deploymentName, buildId: deployment.buildId }, 'versioned workers: tasks of this build only');
  const credentialsFor = credentialsFromConfig(config);
  const workflows = workflowSource({
    configured: config.AUTONODE_WORKFLOW_BUNDLE,
    variant: dataConverter.failureConverterPath ? 'encrypted' : 'plain',
    workersDir: __dirname,
    compiled: __filename.endsWith('.js'),
    workflowsPath: require.resolve('../workflows'),
  });
  const memory = { heapLimitMiB: heapLimitMiB(), memoryLimitMiB: containerMemoryLimitMiB() };
  const maxCachedWorkflows = config.AUTONODE_MAX_CACHED_WORKFLOWS ?? workflowCacheSize(memory);
  logger.info(
    {
      workflows: 'workflowBundle' in workflows ? workflows.workflowBundle.codePath : `${workflows.workflowsPath} (bundled at start)`,
      maxCachedWorkflows,
      ...(config.AUTONODE_MAX_CACHED_WORKFLOWS === undefined ? { heapLimitMiB: Math.round(memory.heapLimitMiB), memoryLimitMiB: memory.memoryLimitMiB } : {}),
    },
    config.AUTONODE_MAX_CACHED_WORKFLOWS === undefined ? 'workflow cache sized from the memory budget' : 'workflow cache from AUTONODE_MAX_CACHED_WORKFLOWS',
  );
  const workers = await createAutonodeWorkers({
    connection,
    client,
    namespace: config.TEMPORAL_NAMESPACE,
    resolve: clusterResolverFromConfig(config, credentialsFor, logger),
    sqsClientFor: sqsClientFactoryFromConfig(config, credentialsFor),
    ...(management ? { management } : {}),
    workflows,
    cloudActivitiesPerSecond: config.AUTONODE_CLOUD_RPS,
    ...(config.AUTONODE_STEADY_RESYNC ? { nodeClaimDefaults: { timeouts: { steadyResync: config.AUTONODE_STEADY_RESYNC } } } : {}),
    run: config.AUTONODE_WORKER_QUEUES,
    dataConverter,
    maxCachedWorkflows,
    maxConcurrentWorkflowTasks: config.AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS,
    taskQueues: { control: config.AUTONODE_TASK_QUEUE_CONTROL, cloud: config.AUTONODE_TASK_QUEUE_CLOUD, packing: config.AUTONODE_TASK_QUEUE_PACKING },
    metrics,
    ...(deployment ? { deployment } : {}),
  });
  const server: MetricsServer | undefined =
    config.AUTONODE_METRICS_PORT > 0 ? await startMetricsServer({ registry: metrics.registry, readiness: () => workersReadiness(workers), port: config.AUTONODE_METRICS_PORT, host: config.AUTONODE_METRICS_HOST }) : undefined;
  if (server) logger.info({ url: server.url }, 'serving /metrics, /healthz and /readyz');
  // the management watch: starts enablement for spec.autoNode with the gate on, reports the gate off otherwise
  if (management) await startManagementWatch(client, { autoprovision: featureGates.Autoprovision, taskQueues: { control: config.AUTONODE_TASK_QUEUE_CONTROL, cloud: config.AUTONODE_TASK_QUEUE_CLOUD, packing: config.AUTONODE_TASK_QUEUE_PACKING } });
  try {
    await runWorkers(workers);
  } finally {
    await server?.close();
  }
  await client.connection.close();
  await connection.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`autonode worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
