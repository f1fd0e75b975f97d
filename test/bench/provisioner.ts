// `npm run bench:provisioner`: one provisioning batch on the real local stack (etcd, guest
// kube-apiserver, controller-manager, kube-scheduler, moto, Temporal dev server). N pods
// (Deployments of mixed shapes) are made pending — kube-scheduler marks them Unschedulable —
// then the provisioner's activity runs once, as the packing worker would after the batch
// window closed. Printed: the batch's time to the last NodeClaim created, per pod the
// time from the batch's start to the creation of the NodeClaim it was nominated to
// (p50/p99), when the background Events were all written, and the process's peak RSS (the activity, its solver thread and the clients).
// No kubelets and no workflow workers: the claims' workflows are started, not run.
//   npm run bench:provisioner                 1,000 and 5,000 pods
//   npm run bench:provisioner -- --pods 2000  one size
import { AppsV1Api } from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createEc2ClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { staticClusterResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { createProvisionerActivities } from '../../activities/provisioner/activity';
import { batchResult, batchToCreate, type CreatedClaims, type PlannedBatch } from '../../core/provisioning';
import { defaultTaskQueues } from '../../core/lifecycle';
import { installCrds } from '../../dev/autonode/crds';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { ensureCustomNodeClass } from '../../dev/autonode/nodeclass';
import { startStack } from '../../dev/stack/launcher';
import { connectClient } from '../../workers/temporal-connection';

const SHAPES = [
  { cpu: '250m', memory: '256Mi' },
  { cpu: '500m', memory: '1Gi' },
  { cpu: '1', memory: '2Gi' },
  { cpu: '2', memory: '4Gi' },
  { cpu: '100m', memory: '128Mi' },
];

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function waitForUnschedulable(guest: KubeClients, namespace: string, count: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const pods = (await guest.core.listNamespacedPod({ namespace })).items;
    const marked = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')).length;
    if (marked >= count) return Date.now() - t0;
    if (Date.now() - t0 > 600_000) throw new Error(`only ${marked} of ${count} pods marked Unschedulable after 10 minutes`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

async function runOnce(size: number): Promise<void> {
  const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const stack = await startStack({ log: () => undefined });
  try {
    const info = stack.info;
    await installCrds(info.guest.kubeconfigPath);
    const guest = kubeClientsFromKubeconfigFile(info.guest.kubeconfigPath);
    const ec2ClientFor = createEc2ClientFactory({ endpoint: info.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: 'loopback-only' });
    const cluster = { name: 'bench', region: info.ec2.region };
    const network = await createClusterNetwork(ec2ClientFor(cluster), { clusterName: cluster.name, zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: 110 });
    await ensureCustomNodeClass(guest, { name: 'default', discoveryTag: network.discoveryTag, amiSelectorTerms: [{ tags: network.discoveryTag }], userData: '#!/bin/bash\n' });
    await guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh', version: 'v1', plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'default' },
        spec: { template: { spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
        } } },
      },
    });
    const namespace = 'bench';
    await guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    const apps = guest.config.makeApiClient(AppsV1Api);
    const per = Math.ceil(size / SHAPES.length);
    for (const [i, requests] of SHAPES.entries()) {
      const replicas = Math.min(per, size - i * per);
      if (replicas <= 0) continue;
      await apps.createNamespacedDeployment({ namespace, body: {
        metadata: { name: `shape-${i}` },
        spec: { replicas, selector: { matchLabels: { app: `shape-${i}` } }, template: { metadata: { labels: { app: `shape-${i}` } }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests } }] } } },
      } });
    }
    const pendingMs = await waitForUnschedulable(guest, namespace, size);
    say(`${size} pods pending (Unschedulable) after ${(pendingMs / 1000).toFixed(1)}s`);

    // Time each NodeClaim's creation as the API server acknowledges it.
    const created = new Map<string, number>();
    const resolveBase = staticClusterResolver({ guestKubeconfigPath: info.guest.kubeconfigPath, ec2ClientFor });
    const resolve: typeof resolveBase = async (ref) => {
      const c = await resolveBase(ref);
      const create = c.guest.customObjects.createClusterCustomObject.bind(c.guest.customObjects);
      c.guest.customObjects.createClusterCustomObject = async (args: Parameters<typeof create>[0]) => {
        const out = await create(args);
        const body = args.body as { metadata?: { name?: string } };
        if (args.plural === 'nodeclaims' && body.metadata?.name) created.set(body.metadata.name, Date.now());
        return out;
      };
      return c;
    };
    const temporal = await connectClient({ address: info.temporal.address, namespace: info.temporal.namespace });
    const activities = createProvisionerActivities({ resolve, temporal });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const env = new MockActivityEnvironment();
    // each stage's start, from the activity's own heartbeats (read → plan → solve)
    const stages = new Map<string, number>();
    env.on('heartbeat', (details: unknown) => {
      const stage = (details as { stage?: string } | undefined)?.stage;
      if (stage && !stages.has(stage)) stages.set(stage, Date.now());
    });
    // warm the cloud catalog (DescribeInstanceTypes from moto takes seconds cold, as a running worker's cache would have it)
    await resolve(cluster).then((c) => c.cloud.instanceTypes({ amiFamily: 'Custom', zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'] }));
    // A worker that has been running: its solver thread started (HiGHS loaded, code compiled)
    // and the node class resolved — one batch planned before (its plan is not created).
    await env.run<[], PlannedBatch, () => Promise<PlannedBatch>>(() => activities.planBatch({ cluster, taskQueues: defaultTaskQueues, batchId: `warm-${size}`, unavailable: [] }));
    // … and its Events written, so they do not compete with the measured batch
    for (let i = 0; i < 120; i++) {
      const listed = await guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Nominated' });
      if (listed.items.filter((e) => (e.message ?? '').includes('nodeclaim/')).length >= size) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    stages.clear();
    const started = Date.now();
    // the two steps the provisioner workflow runs (the workflow task between them, tens of ms, is not included)
    const planned = await env.run<[], PlannedBatch, () => Promise<PlannedBatch>>(() => activities.planBatch({ cluster, taskQueues: defaultTaskQueues, batchId: `bench-${size}`, unavailable: [] }));
    const planDone = Date.now();
    const made = await env.run<[], CreatedClaims, () => Promise<CreatedClaims>>(() => activities.createClaims({ cluster, taskQueues: defaultTaskQueues, ...batchToCreate(planned) }));
    const result = batchResult(planned, made);
    const finished = Date.now();
    const at = (stage: string) => (((stages.get(stage) ?? started) - started) / 1000).toFixed(2);
    say(`stages (s from start): world read → ${at('plan')} catalog+validate → solve from ${(( (planDone - started) / 1000) - planned.solveMs / 1000).toFixed(2)} (assemble+solve ${(planned.solveMs / 1000).toFixed(2)}) → plan recorded ${((planDone - started) / 1000).toFixed(2)} → claims created ${((finished - started) / 1000).toFixed(2)}; plan payload ${(JSON.stringify(planned).length / 1024).toFixed(1)} KiB, ${planned.optionLists.length} option lists`);
    clearInterval(sampler);
    const lastClaim = Math.max(...created.values()) - started;

    // pod → the claim it was nominated to (the Nominated Events, written in the background), → when that claim was created
    const ofThisBatch = (list: Awaited<ReturnType<typeof guest.core.listNamespacedEvent>>) => list.items.filter((e) => created.has(/nodeclaim\/(\S+)/.exec(e.message ?? '')?.[1] ?? ''));
    let events = await guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Nominated' });
    while (ofThisBatch(events).length < size && Date.now() - finished < 180_000) {
      await new Promise((r) => setTimeout(r, 500));
      events = await guest.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=Nominated' });
    }
    const eventsWritten = Date.now() - started;
    const latencies: number[] = [];
    for (const e of events.items) {
      const claim = /nodeclaim\/(\S+)/.exec(e.message ?? '')?.[1];
      const at = claim ? created.get(claim) : undefined;
      if (at !== undefined) latencies.push(at - started);
    }
    latencies.sort((a, b) => a - b);
    process.stdout.write(
      `| ${size} | ${result.created.length} | ${result.pricePerHour.toFixed(2)} | ${(result.solveMs / 1000).toFixed(2)} | ${(lastClaim / 1000).toFixed(2)} | ` +
        `${(quantile(latencies, 0.5) / 1000).toFixed(2)} | ${(quantile(latencies, 0.99) / 1000).toFixed(2)} | ${((finished - started) / 1000).toFixed(2)} | ${(eventsWritten / 1000).toFixed(1)} | ${Math.round(peakRss / 2 ** 20)} | ${latencies.length} |\n`,
    );
    await temporal.connection.close();
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const i = process.argv.indexOf('--pods');
  const sizes = i >= 0 ? [Number(process.argv[i + 1])] : [1000, 5000];
  process.stdout.write('| pods | claims | $/h | solve s | last claim s | pod→claim p50 s | p99 s | batch s | Events written by s | peak RSS MiB | pods timed |\n|---|---|---|---|---|---|---|---|---|---|---|\n');
  for (const size of sizes) await runOnce(size);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:provisioner failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
