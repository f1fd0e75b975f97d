import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { writeAutonodeGuestKubeconfig } from '../../dev/autonode/guest-identity';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { createEc2ClientFactory, endpointPolicyFromEnv, staticCredentialsProvider } from '../../activities/cloud';
import { staticClusterResolver, type ClusterResolver } from '../../activities/cluster';
import { createSqsClientFactory } from '../../activities/interruption/sqs';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { NodeClaimStore } from '../../activities/kube/nodeclaims';
import { nodeClaimWorkflowId, type NodeClaimWorkflowInput, type TaskQueues } from '../../core/lifecycle';
import { bootstrapIdentitySource, instanceUserData, launchedNodeShapes, clusterAccessOf, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { WORKER_ROLES, createAutonodeWorkers, runWorkers, workersReadiness, type WorkerRole } from '../../workers/workers';
import { createAutonodeMetrics, type AutonodeMetrics } from '../../activities/metrics';
import { startMetricsServer } from '../../workers/metrics-server';
import { startCloudHarness, type CloudHarness } from './cloud';
import { installCrds } from './crds';
import { loadStackInfo } from './stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from './temporal';

export { eventually } from './eventually';

/**
 * Everything a NodeClaim's life needs, for real: the guest API server with the CRDs and an
 * EC2NodeClass, moto behind the fault proxy with a VPC for a fresh cluster name, autonode's
 * workers on the real Temporal server, and a fleet of simulated kubelets that boot on
 * every instance the cluster launches (except claims listed in `silent`).
 */
export interface LifecycleHarness {
  id: string;
  h: CloudHarness;
  t: TemporalHarness;
  guest: KubeClients;
  claims: NodeClaimStore;
  fleet: SimulatedKubeletFleet;
  silent: Set<string>;
  /** NodePools whose instances get no kubelet either */
  silentPools: Set<string>;
  nodeClassName: string;
  /** this harness's own task queues: test files sharing one Temporal never take each other's tasks */
  taskQueues: TaskQueues;
  /** the guest kubeconfig of autonode's ServiceAccount (k8s/guest/rbac.yaml), as the workers use it */
  autonodeKubeconfigPath: string;
  /** the workers' cluster resolver (autonode's identity, moto behind the fault proxy), for calling activities directly */
  resolve: ClusterResolver;
  /** `spec` replaces fields of a launchable default spec (any field: tests of bad input set what they need) */
  createNodeClaim(
    name: string,
    spec?: { terminationGracePeriod?: string; expireAfter?: string; requirements?: { key: string; operator: string; values?: string[] }[] } & Record<string, unknown>,
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> },
  ): Promise<string>;
  startLifecycle(name: string, uid: string, timeouts?: NodeClaimWorkflowInput['timeouts']): ReturnType<TemporalHarness['client']['workflow']['start']>;
  instanceState(instanceId: string): Promise<string | undefined>;
  /** what the in-process workers count (every worker this harness starts shares it) */
  metrics: AutonodeMetrics;
  /** their HTTP endpoint on loopback, as a worker process serves it: /metrics, /healthz, /readyz */
  metricsUrl: string;
  /** more workers for this harness's queues (e.g. a packing worker after one was killed); stopped by close() too */
  startWorkers(run: readonly WorkerRole[]): Promise<{ stop(): Promise<void> }>;
  /** a guest namespace that close() deletes (its Pending pods would be the next file's foreign pods) */
  createNamespace(name: string): Promise<void>;
  close(): Promise<void>;
}

export interface LifecycleHarnessOptions {
  /** the queues the in-process workers poll (default all three) */
  run?: readonly WorkerRole[];
}

export const lifecycleDefaults: Pick<NodeClaimWorkflowInput, 'timeouts'> = { timeouts: { resync: '1s', steadyResync: '2s' } };

export async function startLifecycleHarness(options: LifecycleHarnessOptions = {}): Promise<LifecycleHarness> {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  await installCrds(stack.guest.kubeconfigPath);
  const h = await startCloudHarness();
  const t = await temporalHarness();
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const claims = new NodeClaimStore(guest);
  const nodeClassName = `lc-${id}`;
  const silent = new Set<string>();
  const silentPools = new Set<string>();
  const taskQueues: TaskQueues = { control: `autonode-control-${id}`, cloud: `autonode-cloud-${id}`, packing: `autonode-packing-${id}` };
  await ensureCustomNodeClass(guest, {
    name: nodeClassName,
    discoveryTag: h.fixtures.discoveryTag,
    amiSelectorTerms: [{ id: h.fixtures.imageId }],
    // none: the fleet's kubelets join with the test's bootstrap identity and the launch tags
    // (withoutUserData below); tests of booting from userData give their class one
  });
  const ec2ClientFor = createEc2ClientFactory({
    endpoint: h.proxy.endpoint,
    credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    endpointPolicy: endpointPolicyFromEnv(process.env),
  });
  const autonodeKubeconfigPath = await writeAutonodeGuestKubeconfig(guest, join(stack.dir, `autonode-${id}.kubeconfig`));
  const resolve = staticClusterResolver({ guestKubeconfigPath: autonodeKubeconfigPath, ec2ClientFor });
  // interruption queues: moto serves SQS on its EC2 port (not behind the EC2 fault proxy)
  const sqsClientFor = createSqsClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: endpointPolicyFromEnv(process.env) });
  const metrics = createAutonodeMetrics();
  const workersFor = (run: readonly WorkerRole[]) =>
    createAutonodeWorkers({
      connection: t.connection,
      client: t.client,
      namespace: t.namespace,
      // The workers act as autonode's own least-privileged identity (k8s/guest/rbac.yaml).
      resolve,
      workflows: { workflowBundle: workflowBundle() },
      nodeClaimDefaults: lifecycleDefaults,
      taskQueues,
      run,
      metrics,
      sqsClientFor,
    });
  const workers: Worker[] = await workersFor(options.run ?? WORKER_ROLES);
  const running = [runWorkers(workers)];
  const namespaces: string[] = [];
  const metricsServer = await startMetricsServer({ registry: metrics.registry, readiness: () => workersReadiness(workers), port: 0, host: '127.0.0.1' });
  const kc = new KubeConfig();
  kc.loadFromFile(stack.guest.kubeconfigPath);
  const bootstrap = bootstrapIdentitySource(guest);
  const fleet = new SimulatedKubeletFleet({
    listInstances: async () => (await h.provider.list()).filter((i) => !silent.has(i.tags['karpenter.sh/nodeclaim'] ?? '') && !silentPools.has(i.tags['karpenter.sh/nodepool'] ?? '')),
    userDataOf: instanceUserData(h.direct),
    region: stack.ec2.region,
    withoutUserData: { guest: clusterAccessOf(kc), bootstrap: async () => (await bootstrap()).kubeConfig, shapeOf: launchedNodeShapes(stack.ec2.region) },
    pollMs: 500,
  });
  fleet.start();

  return {
    id,
    h,
    t,
    guest,
    claims,
    fleet,
    silent,
    silentPools,
    nodeClassName,
    taskQueues,
    autonodeKubeconfigPath,
    resolve,
    metrics,
    metricsUrl: metricsServer.url,
    async createNodeClaim(name, extra = {}, metadata = {}) {
      await guest.customObjects.createClusterCustomObject({
        group: 'karpenter.sh',
        version: 'v1',
        plural: 'nodeclaims',
        body: {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodeClaim',
          metadata: { name, labels: { 'karpenter.sh/nodepool': 'default', ...metadata.labels }, ...(metadata.annotations ? { annotations: metadata.annotations } : {}) },
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClassName },
            requirements: [
              { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            ],
            expireAfter: 'Never',
            ...extra,
          },
        },
      });
      const claim = await claims.get(name);
      if (!claim) throw new Error(`NodeClaim ${name} not readable after create`);
      return claim.metadata.uid;
    },
    startLifecycle(name, uid, timeouts = {}) {
      const input: NodeClaimWorkflowInput = {
        cluster: { name: h.cluster.name, region: h.cluster.region },
        taskQueues,
        nodeClaim: { name, uid },
        timeouts: { ...lifecycleDefaults.timeouts, ...timeouts },
      };
      return t.client.workflow.start('nodeClaimWorkflow', {
        taskQueue: taskQueues.control,
        workflowId: nodeClaimWorkflowId(h.cluster.name, name),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [input],
      });
    },
    async instanceState(instanceId) {
      const out = await h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
    },
    async startWorkers(run) {
      const more = await workersFor(run);
      workers.push(...more);
      const done = runWorkers(more);
      running.push(done);
      return {
        stop: async () => {
          for (const w of more) if (w.getState() === 'RUNNING') w.shutdown();
          await done;
        },
      };
    },
    async createNamespace(name) {
      await guest.core.createNamespace({ body: { metadata: { name } } });
      namespaces.push(name);
    },
    async close() {
      // Whatever a failed test left running must not outlive this harness.
      // The workers still run while this cleans up: a workflow that continued as new since
      // the list has a run the list did not name. Terminate the current run (no run ID) and
      // list again until nothing of this cluster runs: a missed run would go on draining
      // (tainting) a node of a harness that is gone.
      const claimPrefix = nodeClaimWorkflowId(h.cluster.name, '');
      const ownClaims = new Set<string>();
      for (let round = 0; round < 5; round++) {
        let found = 0;
        for await (const wf of t.client.workflow.list({ query: `AutoNodeCluster = "${h.cluster.name}" AND ExecutionStatus = "Running"` })) {
          found++;
          if (wf.workflowId.startsWith(claimPrefix)) ownClaims.add(wf.workflowId.slice(claimPrefix.length));
          await t.client.workflow.getHandle(wf.workflowId).terminate('test harness closing').catch(() => undefined);
        }
        if (found === 0) break;
        // the visibility store lags the terminations a little
        await new Promise((r) => setTimeout(r, 500));
      }
      // …nor its NodePools and node class: their pods, still Pending, would make the next test
      // file's provisioner create claims for a network it cannot see (the guest is shared)…
      const pools = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' })) as { items: { metadata: { name: string }; spec?: { template?: { spec?: { nodeClassRef?: { name?: string } } } } }[] };
      // (a test's own pools and classes are named for the harness: `…-<id>`)
      const ours = (name: string) => name.endsWith(`-${id}`);
      for (const p of pools.items.filter((p) => p.spec?.template?.spec?.nodeClassRef?.name === nodeClassName || ours(p.metadata.name))) {
        await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: p.metadata.name }).catch(() => undefined);
      }
      const classes = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' })) as { items: { metadata: { name: string } }[] };
      for (const name of [nodeClassName, ...classes.items.map((c) => c.metadata.name).filter((n) => n !== nodeClassName && ours(n))]) {
        await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name }).catch(() => undefined);
      }
      // …nor its NodeClaims: the next test file's watcher would adopt them and keep launching.
      const left = (await claims.list()).filter((c) => ownClaims.has(c.metadata.name) || c.spec.nodeClassRef.name === nodeClassName);
      await forceDeleteNodeClaims(guest, left.map((c) => c.metadata.name));
      // …nor their Nodes: pods bound to a kubelet that is gone would stay Running on them for
      // good. Our finalizer is stripped first: no workflow is left to remove it.
      for (const c of left) {
        const name = c.status?.nodeName;
        if (!name) continue;
        await guest.core.patchNode({ name, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
        await guest.core.deleteNode({ name }).catch(() => undefined);
      }
      // …nor its namespaces (not waited for: the namespace controller empties them)
      for (const name of namespaces) await guest.core.deleteNamespace({ name }).catch(() => undefined);
      await fleet.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.all(running);
      await metricsServer.close();
      await t.close();
      await h.close();
    },
  };
}

/** Deletes NodeClaims at once, finalizers stripped: for claims whose workflows are gone (tests only). */
export async function forceDeleteNodeClaims(guest: KubeClients, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const ref = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name } as const;
    await guest.customObjects.patchClusterCustomObject({ ...ref, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
    await guest.customObjects.deleteClusterCustomObject(ref).catch(() => undefined);
  }
}
