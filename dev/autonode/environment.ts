import { type Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type NativeConnection } from '@temporalio/worker';
import { createAssumeRoleCredentialsFactory, createEc2ClientFactory, createEc2CloudProvider, createSsmClientFactory, createStsClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { managementSecretResolver } from '../../activities/cluster';
import { createSqsClientFactory } from '../../activities/interruption/sqs';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { parseManifests } from '../../core/api/manifests';
import { enableCluster } from '../../starter/commands/cluster';
import { projectRoot } from '../paths';
import { readFileSync } from 'node:fs';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from './hosted-cluster';
import { enablementWorkflowId, interruptionWorkflowId, provisionerWorkflowId, watchWorkflowId, type ClusterRef } from '../../core/lifecycle';
import { connectClient, connectWorker } from '../../workers/temporal-connection';
import { createAutonodeWorkers, runWorkers, workersReadiness } from '../../workers/workers';
import { createAutonodeMetrics } from '../../activities/metrics';
import { startMetricsServer } from '../../workers/metrics-server';
import { parseFeatureGates } from '../../workers/feature-gates';
import { startManagementWatch } from '../../workers/management-watch';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../core/enablement/management-watch';
import { instanceUserData, SimulatedKubeletFleet } from '../simkubelet';
import { type StackInfo } from '../stack/types';
import { join } from 'node:path';
import { createClusterNetwork } from './ec2-fixtures';
import { startDevPayloadCodec, type DevPayloadCodec } from './payload-codec';

export interface DevAutonode {
  cluster: ClusterRef;
  hostedCluster: string;
  nodeClassName: string;
  nodePoolName: string;
  /** payload encryption: the keyring file and the codec server, when on */
  payloadCodec: Pick<DevPayloadCodec, 'keysFile' | 'endpoint'> | undefined;
  /** the workers' /metrics, /healthz and /readyz (as a deployed worker serves them) */
  metricsUrl: string;
  stop(): Promise<void>;
}

export interface DevAutonodeOptions {
  /** encrypt payloads, serving the codec on this port (the dev server's UI was told so); off when unset */
  codecPort?: number;
}

const DEV_ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const SEED = join(projectRoot(), 'test', 'fixtures', 'seeds', '000-hypershift-nodepool-and-nodeclass.yaml');
const WORKLOAD = join(projectRoot(), 'k8s', 'examples', 'workload.yaml');
/** moto's default account: the network made with the stack's keys belongs to this role too */
export const DEV_ROLE_ARN = 'arn:aws:iam::123456789012:role/autonode-dev';
/** the dev cluster's interruption queue in moto (`autonode interrupt` sends to it) */
export const DEV_INTERRUPTION_QUEUE = 'autonode-dev-interruption';

/**
 * autonode on the local stack, as an operator runs it beside a management cluster: a
 * HostedCluster `clusters/dev` (with what HyperShift would publish for it), the workers
 * (management cluster, per-cluster role), AutoNode enabled through the starter, seed 000's
 * NodePool and EC2NodeClass applied verbatim, and a simulated kubelet on every instance
 * autonode launches — then the example workload, until its pods run.
 */
export async function startDevAutonode(stack: StackInfo, log: (line: string) => void, options: DevAutonodeOptions = {}): Promise<DevAutonode> {
  const hc = { namespace: 'clusters', name: 'dev', infraID: 'dev', region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  await createLocalHostedCluster(management, readFileSync(stack.guest.kubeconfigPath, 'utf8'), hc);
  log(`HostedCluster ${hc.namespace}/${hc.name} (infraID ${hc.infraID}, release ${hc.releaseImage}) in the management cluster, with its admin kubeconfig and userData Secrets`);

  // moto accepts any keys; these are not AWS credentials. Each cluster is served with its role (STS on moto).
  const keys = { accessKeyId: 'testing', secretAccessKey: 'testing' };
  const credentialsFor = createAssumeRoleCredentialsFactory({
    stsFor: createStsClientFactory({ endpoint: stack.ec2.endpoint, endpointPolicy: 'loopback-only', credentials: keys }),
    withoutRole: staticCredentialsProvider(keys),
  });
  const ec2ClientFor = createEc2ClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor, endpointPolicy: 'loopback-only' });
  // moto serves SSM on the same endpoint (AMI `alias` / `ssmParameter` terms)
  const ssmClientFor = createSsmClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor, endpointPolicy: 'loopback-only' });
  // … and SQS: the cluster's interruption queue, as EventBridge would feed it (`autonode interrupt` sends to it)
  const sqsClientFor = createSqsClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor, endpointPolicy: 'loopback-only' });
  const sqs = sqsClientFor({ name: hc.infraID, region: hc.region, credentialsRef: DEV_ROLE_ARN });
  await sqs.send(new CreateQueueCommand({ QueueName: DEV_INTERRUPTION_QUEUE }));
  const ec2 = ec2ClientFor({ name: hc.infraID, region: hc.region, credentialsRef: DEV_ROLE_ARN });
  // the cluster's network (what a default EC2NodeClass selects) and the one seed 000 tells admins to tag
  const network = await createClusterNetwork(ec2, { clusterName: hc.infraID, zones: DEV_ZONES, octet: 100 });
  const seedNetwork = await createClusterNetwork(ec2, { clusterName: `${hc.infraID}-seed`, discoveryValue: 'your-infra-tag', zones: DEV_ZONES, octet: 101 });
  log(`EC2 networks: ${network.vpcId} (karpenter.sh/discovery=${hc.infraID}) and ${seedNetwork.vpcId} (karpenter.sh/discovery=your-infra-tag, seed 000)`);
  log(`SQS queue ${DEV_INTERRUPTION_QUEUE}: the cluster's interruption queue`);

  // `autonode dev` owns Ctrl-C (it stops autonode, then the stack, in order): the Temporal
  // runtime must not start its own shutdown on the same signal.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  const temporal = { address: stack.temporal.address, namespace: stack.temporal.namespace };
  // one DataConverter for the workers and this client (which enables the cluster and ends its workflows)
  const codec = options.codecPort === undefined ? undefined : await startDevPayloadCodec({ dir: stack.dir, port: options.codecPort, uiUrl: stack.temporal.uiUrl });
  if (codec) log(`payloads encrypted with the key in ${codec.keysFile}; codec server ${codec.endpoint}`);
  const dataConverter = codec?.dataConverter ?? {};
  const connection: NativeConnection = await connectWorker(temporal);
  const client: Client = await connectClient(temporal, { dataConverter });
  // Karpenter-named metrics, as workers/main.ts serves them (docs/metrics.md)
  const metrics = createAutonodeMetrics({ processMetrics: true });
  const workers = await createAutonodeWorkers({
    connection,
    client,
    dataConverter,
    metrics,
    namespace: temporal.namespace,
    // production wiring: the guest through the Secret enablement writes (autonode's own,
    // least-privileged identity), EC2 through the cluster's role
    resolve: managementSecretResolver({ management, ec2ClientFor, ssmClientFor }),
    sqsClientFor,
    management,
    workflows: { workflowsPath: require.resolve('../../workflows') },
  });
  const running = runWorkers(workers);
  log('workers polling autonode-control, autonode-cloud and autonode-packing');
  const metricsServer = await startMetricsServer({ registry: metrics.registry, readiness: () => workersReadiness(workers), port: 0, host: '127.0.0.1' });
  log(`metrics ${metricsServer.url}/metrics (and /healthz, /readyz)`);
  // as workers/main.ts does: AUTONODE_FEATURE_GATES=Autoprovision=true lets spec.autoNode alone enable a cluster
  const { Autoprovision } = parseFeatureGates(process.env.AUTONODE_FEATURE_GATES, 'AUTONODE_FEATURE_GATES');
  await startManagementWatch(client, { autoprovision: Autoprovision });
  log(`management watch ${MANAGEMENT_WATCH_WORKFLOW_ID}: Autoprovision feature gate ${Autoprovision ? 'on (spec.autoNode enables a HostedCluster)' : 'off (only `autonode enable` does; set AUTONODE_FEATURE_GATES=Autoprovision=true)'}`);

  const cloud = createEc2CloudProvider({ ec2, cluster: { name: hc.infraID, region: hc.region } });
  // every machine boots from its userData: the Ignition config the enablement reconciled into its EC2NodeClass
  const fleet = new SimulatedKubeletFleet({
    listInstances: () => cloud.list(),
    userDataOf: instanceUserData(ec2),
    region: hc.region,
    onEvent: (e) => {
      if (e.type === 'started') log(`simulated kubelet started on ${e.instanceId} (${e.nodeName})`);
      if (e.type === 'failed') log(`simulated kubelet on ${e.instanceId} failed: ${String(e.error)}`);
    },
  });
  fleet.start();

  // Enable through the starter, as an operator would: `autonode enable clusters/dev --role-arn … --interruption-queue … --wait`
  log(`autonode enable ${hc.namespace}/${hc.name} --role-arn ${DEV_ROLE_ARN} --interruption-queue ${DEV_INTERRUPTION_QUEUE} --wait`);
  const enabled = await enableCluster(
    { temporal: client, management, io: { stdout: (t) => t.trimEnd().split('\n').forEach((line) => log(`  ${line}`)), stderr: (t) => log(t.trimEnd()) } },
    `${hc.namespace}/${hc.name}`,
    { roleArn: DEV_ROLE_ARN, interruptionQueue: DEV_INTERRUPTION_QUEUE, wait: true },
  );
  if (enabled?.phase !== 'Enabled') throw new Error(`clusters/dev did not enable: ${JSON.stringify(enabled)}`);
  const cluster: ClusterRef = { name: hc.infraID, region: hc.region, credentialsRef: DEV_ROLE_ARN };

  // The admin's part: seed 000's manifests, verbatim (the enablement fills in AMI and userData)
  for (const doc of parseManifests(readFileSync(SEED, 'utf8'))) {
    if (doc.status !== 'parsed') throw new Error(`${SEED} does not parse`);
    await applyObject(guest, doc.object);
  }
  log('seed 000 applied: NodePool spot-example, EC2NodeClass default (autonode reconciles its AMI and userData)');
  for (const doc of parseManifests(readFileSync(WORKLOAD, 'utf8'))) {
    if (doc.status === 'parsed') await applyObject(guest, doc.object);
  }
  const t0 = Date.now();
  for (;;) {
    const pods = (await guest.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app in (inflate, small)' })).items;
    const runningPods = pods.filter((p) => p.status?.phase === 'Running').length;
    // the DaemonSet's pod on every node the workload runs on (the DaemonSet gate keeps its room)
    const nodes = new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => n !== undefined));
    const agents = (await guest.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=node-agent' })).items;
    const agentNodes = new Set(agents.filter((p) => p.status?.phase === 'Running').map((p) => p.spec?.nodeName));
    const nodesWithAgent = [...nodes].filter((n) => agentNodes.has(n)).length;
    if (pods.length > 0 && runningPods === pods.length && nodesWithAgent === nodes.size) {
      log(`k8s/examples/workload.yaml: ${runningPods} pods Running on spot nodes autonode launched, and DaemonSet node-agent Running on all ${nodes.size} of them (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      // the zone-spread Deployment's batch opened its nodes together (the batch gate)
      const opened = (await guest.core.listEventForAllNamespaces({ fieldSelector: 'reason=BatchNodesOpened' })).items;
      for (const event of opened) log(`batch gate: NodeClaim ${event.involvedObject.name ?? ''}: ${event.message ?? ''}`);
      break;
    }
    if (Date.now() - t0 > 300_000) {
      log(`k8s/examples/workload.yaml: ${runningPods}/${pods.length} pods Running, node-agent on ${nodesWithAgent}/${nodes.size} of their nodes, after 5 minutes; see kubectl get events -A`);
      break;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }

  return {
    cluster,
    hostedCluster: `${hc.namespace}/${hc.name}`,
    nodeClassName: 'default',
    nodePoolName: 'spot-example',
    payloadCodec: codec ? { keysFile: codec.keysFile, endpoint: codec.endpoint } : undefined,
    metricsUrl: metricsServer.url,
    stop: async () => {
      await metricsServer.close();
      await fleet.stop();
      // The stack stops with autonode: end the cluster's workflows rather than making the
      // workers' shutdown wait out their grace time (a real disable is `autonode disable`).
      for (const id of [enablementWorkflowId(hc), watchWorkflowId(cluster.name), provisionerWorkflowId(cluster.name), interruptionWorkflowId(cluster.name)]) {
        await client.workflow.getHandle(id).terminate('autonode dev stopping').catch(() => undefined);
      }
      for (const w of workers) w.shutdown();
      await running;
      await client.connection.close();
      await connection.close();
      await codec?.stop();
      ec2.destroy();
      sqs.destroy();
    },
  };
}

/** kubectl apply, roughly: create, or replace what is there (custom objects and Deployments). */
async function applyObject(guest: KubeClients, object: unknown): Promise<void> {
  const typed = object as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
  try {
    await guest.objects.create(typed);
  } catch (err) {
    if (!isConflict(err)) throw err;
    const existing = await guest.objects.read(typed);
    await guest.objects.replace({ ...typed, metadata: { ...typed.metadata, resourceVersion: existing.metadata?.resourceVersion } });
  }
}
