import { KubeConfig } from '@kubernetes/client-node';
import { type Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type NativeConnection } from '@temporalio/worker';
import { createEc2ClientFactory, createEc2CloudProvider, createSsmClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { staticClusterResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { provisionerWorkflowId, type ClusterRef } from '../../core/lifecycle';
import { connectClient, connectWorker } from '../../workers/temporal-connection';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import { watchWorkflowId } from '../../workflows/watch';
import { bootstrapIdentitySource, launchedNodeShapes, clusterAccessOf, SimulatedKubeletFleet } from '../simkubelet';
import { type StackInfo } from '../stack/types';
import { installCrds } from './crds';
import { writeAutonodeGuestKubeconfig } from './guest-identity';
import { join } from 'node:path';
import { createClusterNetwork } from './ec2-fixtures';
import { ensureCustomNodeClass, ensureDefaultNodePool } from './nodeclass';

export interface DevAutonode {
  cluster: ClusterRef;
  nodeClassName: string;
  stop(): Promise<void>;
}

const DEV_ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

/**
 * autonode on the local stack, as an operator would run it against one hosted cluster:
 * the guest has the CRDs and a default EC2NodeClass, moto has the cluster's network, the
 * workers run, the cluster's watch workflow runs, and a simulated kubelet boots on every
 * instance autonode launches — so `kubectl apply` of a NodeClaim ends in a Ready node.
 */
export async function startDevAutonode(stack: StackInfo, log: (line: string) => void): Promise<DevAutonode> {
  const cluster: ClusterRef = { name: 'dev', region: stack.ec2.region };
  await installCrds(stack.guest.kubeconfigPath);
  log('CRDs installed in the guest cluster');

  // moto accepts any keys; these are not AWS credentials
  const credentialsFor = staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' });
  const ec2ClientFor = createEc2ClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor, endpointPolicy: 'loopback-only' });
  // moto serves SSM on the same endpoint (AMI `alias` / `ssmParameter` terms)
  const ssmClientFor = createSsmClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor, endpointPolicy: 'loopback-only' });
  const ec2 = ec2ClientFor(cluster);
  const network = await createClusterNetwork(ec2, { clusterName: cluster.name, zones: DEV_ZONES, octet: 100 });
  log(`EC2 network for cluster "${cluster.name}": ${network.vpcId}, subnets ${network.subnetIds.join(', ')}`);

  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const nodeClassName = 'default';
  await ensureCustomNodeClass(guest, {
    name: nodeClassName,
    discoveryTag: network.discoveryTag,
    amiSelectorTerms: [{ tags: network.discoveryTag }],
    userData: '#!/bin/bash\n# HyperShift ignition stub (local stack)\n',
  });

  // A default NodePool (k8s/examples/nodepool.yaml) unless the guest has one: pending pods
  // then become nodes with no further set-up.
  const nodePool = await ensureDefaultNodePool(guest);
  if (nodePool) log(`NodePool "${nodePool}" created (k8s/examples/nodepool.yaml)`);

  // `autonode dev` owns Ctrl-C (it stops autonode, then the stack, in order): the Temporal
  // runtime must not start its own shutdown on the same signal.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  const temporal = { address: stack.temporal.address, namespace: stack.temporal.namespace };
  const connection: NativeConnection = await connectWorker(temporal);
  const client: Client = await connectClient(temporal);
  const workers = await createAutonodeWorkers({
    connection,
    client,
    namespace: temporal.namespace,
    // least privilege: the workers act as the `autonode` ServiceAccount of k8s/guest/rbac.yaml
    resolve: staticClusterResolver({ guestKubeconfigPath: await writeAutonodeGuestKubeconfig(guest, join(stack.dir, 'guest', 'autonode.kubeconfig')), ec2ClientFor, ssmClientFor }),
    workflows: { workflowsPath: require.resolve('../../workflows') },
  });
  const running = runWorkers(workers);
  await client.workflow.start('watchWorkflow', {
    taskQueue: 'autonode-control',
    workflowId: watchWorkflowId(cluster.name),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [{ cluster }],
  });
  log(`workers polling autonode-control, autonode-cloud and autonode-packing; watch workflow ${watchWorkflowId(cluster.name)} started (it starts the provisioner, ${provisionerWorkflowId(cluster.name)}, when pods are pending)`);

  const kc = new KubeConfig();
  kc.loadFromFile(stack.guest.kubeconfigPath);
  const cloud = createEc2CloudProvider({ ec2, cluster });
  const bootstrap = bootstrapIdentitySource(guest);
  const fleet = new SimulatedKubeletFleet({
    listInstances: () => cloud.list(),
    guest: clusterAccessOf(kc),
    bootstrap: async () => (await bootstrap()).kubeConfig,
    shapeOf: launchedNodeShapes(cluster.region),
    onEvent: (e) => {
      if (e.type === 'started') log(`simulated kubelet started on ${e.instanceId} (${e.nodeName})`);
      if (e.type === 'failed') log(`simulated kubelet on ${e.instanceId} failed: ${String(e.error)}`);
    },
  });
  fleet.start();

  return {
    cluster,
    nodeClassName,
    stop: async () => {
      await fleet.stop();
      // Cancel the watcher and let it finish (it notices at its next heartbeat) before the
      // workers shut down, rather than making the shutdown wait out its grace time.
      const watch = client.workflow.getHandle(watchWorkflowId(cluster.name));
      await watch.cancel().catch(() => undefined);
      await Promise.race([watch.result().catch(() => undefined), new Promise((r) => setTimeout(r, 8_000))]);
      // The provisioner holds no resources: end it with the stack (it is started again by the next doorbell).
      await client.workflow.getHandle(provisionerWorkflowId(cluster.name)).terminate('autonode dev stopping').catch(() => undefined);
      for (const w of workers) w.shutdown();
      await running;
      await client.connection.close();
      await connection.close();
      ec2.destroy();
    },
  };
}
