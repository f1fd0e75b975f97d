// `npm run scale`: issue 17's chaos scenario. Not part of `npm test`: it prints measured
// figures and verdicts (a table, and a JSON report), it asserts no timings.
//
// The whole local stack (dev/stack), M hosted clusters each with its own guest API server
// (the stack's guest and M-1 extra ones: own etcd, kube-apiserver, controller-manager,
// scheduler, kwok), moto behind the EC2 fault proxy, simulated kubelets per cluster, and N
// real worker processes (the compiled workers/main.js with the shipped Deployment's heap,
// cache and resync; --worker-settings defaults runs the source through tsx instead). Each
// cluster is enabled through the starter, as an operator would. Then, bounded by phase
// timeouts so it always stops by itself:
//
//   1. up:      P pending pods of mixed shapes per cluster (four Deployments, each with a PDB) → all Running
//   2. down:    every Deployment scaled to 50 % → consolidated (node count settles, nothing deleting)
//   3. delete:  the workloads deleted, AutoNode disabled (`autonode disable --wait`) → no NodeClaim, no instance
//
// Meanwhile, from one seed and logged: a worker process SIGKILLed every K s and started
// again (a supervisor restarts any worker that exits, as a Deployment would); EC2 calls
// throttled (20 %) and failed with 500 (2 %) by the fault proxy; each guest API server
// restarted once; the Temporal frontend restarted once (the production server runs each
// service as its own process; the dev server has one process, which is restarted whole).
// Besides the verdicts it prints where the CPU went: seconds per stack component per phase.
//
//   npm run scale                                                 3 workers, 3 clusters × 2,000 pods, dev server
//   npm run scale -- --clusters 1 --pods-per-cluster 100 --workers 2
//   npm run scale -- --server production                          PostgreSQL + the Temporal server build
//   npm run scale -- --no-kill --throttle 0 --server-error 0 --no-restart-guests --no-restart-temporal   no chaos
import { defaultPayloadConverter } from '@temporalio/common';
import { DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { AppsV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { type Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { Command } from 'commander';
import { type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { createEc2CloudProvider } from '../../activities/cloud';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { projectRoot } from '../../dev/paths';
import { instanceUserData, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { startExtraGuest, type ExtraGuest } from '../../dev/stack/extra-guest';
import { startStack, type LocalStack } from '../../dev/stack/launcher';
import { freePortsFor } from '../../dev/stack/ports';
import { temporalProcessName } from '../../dev/stack/temporal-production';
import { disableCluster, enableCluster } from '../../starter/commands/cluster';
import { connectClient } from '../../workers/temporal-connection';
import { startEc2FaultProxy, type Ec2FaultProxy } from '../support/ec2-fault-proxy';
import { roleEc2ClientFactory } from '../support/enablement';
import { mulberry32 } from '../support/random';
import { hasExited, spawnWorkerProcess } from '../support/worker-process';
import { buildShippedWorker, shippedWorkerEnvOfCheckout, shippedWorkerTuning } from '../support/shipped-worker';
import { clockTicksPerSecond, CpuLedger, readProcesses, type PhaseCpu } from './process-cpu';
import {
  addHistograms, claimStepSeconds, claimTimeline, duplicateInstances, histogramQuantile, leakedInstances, parseHistogram, pdbShortfalls, pdbViolations, scaleBounds, pendingPods, pendingToRunningSeconds, percentile, perMinute, rssMiBFromStatus,
  retriedWhileProgressing, stuckWorkflows, sumCounter, type ClaimTimeline, type StepSeconds, summarizeRss, type DuplicateInstances, type Histogram, type ObservedInstance, type ObservedPod, type PdbSample, type StuckWorkflow, type WorkflowSample, phaseTimeout, phaseTimeouts,
} from './scale-checks';

const t0 = Date.now();
const clock = () => `${new Date().toISOString().slice(11, 19)} +${Math.round((Date.now() - t0) / 1000)}s`;
const say = (line: string) => process.stderr.write(`[scale] ${clock()} ${line}\n`);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, 300) ?? '';

interface Options {
  workers: number;
  clusters: number;
  podsPerCluster: number;
  seed: number;
  server: 'dev' | 'production';
  report: string;
  killEvery: number;
  throttle: number;
  serverError: number;
  restartGuests: boolean;
  restartTemporal: boolean;
  upTimeout: number;
  downTimeout: number;
  deleteTimeout: number;
  settle: number;
  cache: number | undefined;
  workflowTasks: number | undefined;
  workerHeapMb: number | undefined;
  workerSettings: 'shipped' | 'defaults';
  workerCpuProf: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const int = (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`expected a whole number, got ${v}`);
    return n;
  };
  const rate = (v: string) => {
    const n = Number(v);
    if (!(n >= 0 && n <= 1)) throw new Error(`expected a probability in [0, 1], got ${v}`);
    return n;
  };
  const o = new Command('scale')
    .option('--workers <n>', 'worker processes', int, 3)
    .option('--clusters <n>', 'hosted clusters, each with its own guest API server', int, 3)
    .option('--pods-per-cluster <n>', 'pending pods per cluster at the start', int, 2000)
    .option('--seed <n>', 'seed of every random choice (kills, faults, restart times)', int, 1)
    .option('--server <kind>', 'dev (SQLite) or production (PostgreSQL + temporal-server; npm run setup -- --production-temporal)', 'dev')
    .option('--report <path>', 'where the JSON report goes', join(projectRoot(), 'scratch', 'scale-report.json'))
    .option('--kill-every <s>', 'SIGKILL a worker process every this many seconds (0: never)', int, 20)
    .option('--no-kill', 'never kill a worker')
    .option('--throttle <p>', 'share of EC2 calls answered RequestLimitExceeded', rate, 0.2)
    .option('--server-error <p>', 'share of EC2 calls answered 500 InternalError', rate, 0.02)
    .option('--no-restart-guests', 'do not restart the guest API servers')
    .option('--no-restart-temporal', 'do not restart the Temporal frontend (the whole dev server)')
    .option('--up-timeout <s>', `phase 1 (all Running) gives up after (default: ${phaseTimeouts.up.perPod} s per pod of all clusters, at least ${phaseTimeouts.up.least})`, int)
    .option('--down-timeout <s>', `phase 2 (consolidated) gives up after (default: ${phaseTimeouts.down.perPod} s per pod, at least ${phaseTimeouts.down.least})`, int)
    .option('--delete-timeout <s>', `phase 3 (nothing left) gives up after (default: ${phaseTimeouts.delete.perPod} s per pod, at least ${phaseTimeouts.delete.least})`, int)
    .option('--settle <s>', 'consolidated = the node count unchanged this long, nothing deleting', int, 90)
    .option('--cache <n>', 'AUTONODE_MAX_CACHED_WORKFLOWS of each worker', int)
    .option('--workflow-tasks <n>', 'AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS of each worker (default: the worker\'s, 10)', int)
    .option('--worker-heap-mb <n>', "each worker's --max-old-space-size", int)
    .option('--worker-cpu-prof <dir>', 'write a V8 CPU profile of each worker incarnation that lives to the end (SIGTERM) into <dir>; pair with --no-kill: a SIGKILLed incarnation writes none')
    .option('--worker-settings <kind>', "shipped: the compiled build (npm run build) with k8s/worker/worker.yaml's heap, cache and resync (overridden by --cache / --worker-heap-mb); defaults: the source through tsx with Node's and autonode's defaults", 'shipped')
    .exitOverride()
    .parse([...argv], { from: 'node' })
    .opts<Omit<Options, 'killEvery' | 'server' | 'upTimeout' | 'downTimeout' | 'deleteTimeout'> & {
      killEvery: number; kill: boolean; server: string; upTimeout?: number; downTimeout?: number; deleteTimeout?: number;
    }>();
  if (o.server !== 'dev' && o.server !== 'production') throw new Error(`--server: dev or production, got ${o.server}`);
  if (o.workerSettings !== 'shipped' && o.workerSettings !== 'defaults') throw new Error(`--worker-settings: shipped or defaults, got ${String(o.workerSettings)}`);
  if (o.workers < 1 || o.clusters < 1) throw new Error('--workers and --clusters must be at least 1');
  const pods = o.clusters * o.podsPerCluster;
  return {
    ...o, server: o.server, killEvery: o.kill ? o.killEvery : 0,
    upTimeout: o.upTimeout ?? phaseTimeout('up', pods),
    downTimeout: o.downTimeout ?? phaseTimeout('down', pods),
    deleteTimeout: o.deleteTimeout ?? phaseTimeout('delete', pods),
    report: resolve(o.report), workerCpuProf: o.workerCpuProf === undefined ? undefined : resolve(o.workerCpuProf),
  };
}

// ---------------------------------------------------------------------------------------
// the workload: four shapes, each a Deployment with a PDB, in namespace `scale`; and a
// node agent DaemonSet on every node of the pool (namespace `scale-system`), as every real
// cluster has, so each new node goes through the DaemonSet gate (registered cordoned until
// the agent's pod is bound)

const NAMESPACE = 'scale';
const AGENT_NAMESPACE = 'scale-system';
const AGENT = 'node-agent';
const SHAPES = [
  { name: 'small', share: 0.4, cpu: '250m', memory: '256Mi' },
  { name: 'medium', share: 0.3, cpu: '500m', memory: '1Gi' },
  { name: 'large', share: 0.2, cpu: '1', memory: '2Gi' },
  { name: 'memory', share: 0.1, cpu: '500m', memory: '4Gi' },
] as const;

export function replicasOf(pods: number): Record<string, number> {
  const out: Record<string, number> = {};
  let left = pods;
  for (const [i, s] of SHAPES.entries()) {
    const n = i === SHAPES.length - 1 ? left : Math.round(pods * s.share);
    out[s.name] = n;
    left -= n;
  }
  return out;
}

async function applyWorkload(guest: KubeClients, pods: number): Promise<void> {
  const apps = guest.config.makeApiClient(AppsV1Api);
  const policy = guest.config.makeApiClient(PolicyV1Api);
  await guest.core.createNamespace({ body: { metadata: { name: NAMESPACE } } }).catch(() => undefined);
  await guest.customObjects.createClusterCustomObject({
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodepools',
    body: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'scale' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [
              { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge', 'm5.2xlarge', 'c5.2xlarge', 'r5.xlarge', 'r5.2xlarge', 'm5.4xlarge'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            ],
            expireAfter: 'Never',
          },
        },
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets: [{ nodes: '10%' }] },
      },
    },
  });
  await guest.core.createNamespace({ body: { metadata: { name: AGENT_NAMESPACE } } }).catch(() => undefined);
  await apps.createNamespacedDaemonSet({
    namespace: AGENT_NAMESPACE,
    body: {
      metadata: { name: AGENT },
      spec: {
        selector: { matchLabels: { app: AGENT } },
        template: {
          metadata: { labels: { app: AGENT } },
          spec: {
            nodeSelector: { 'karpenter.sh/nodepool': 'scale' },
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'agent', image: 'registry.example/agent:1', resources: { requests: { cpu: '50m', memory: '64Mi' } } }],
          },
        },
      },
    },
  });
  const replicas = replicasOf(pods);
  for (const s of SHAPES) {
    await apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: {
        metadata: { name: s.name },
        spec: {
          replicas: replicas[s.name] ?? 0,
          selector: { matchLabels: { app: s.name } },
          template: {
            metadata: { labels: { app: s.name } },
            spec: {
              nodeSelector: { 'karpenter.sh/nodepool': 'scale' },
              terminationGracePeriodSeconds: 0,
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: s.cpu, memory: s.memory } } }],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({ namespace: NAMESPACE, body: { metadata: { name: s.name }, spec: { minAvailable: '80%', selector: { matchLabels: { app: s.name } } } } });
  }
}

async function scaleWorkload(guest: KubeClients, pods: number): Promise<void> {
  const apps = guest.config.makeApiClient(AppsV1Api);
  const replicas = replicasOf(pods);
  for (const s of SHAPES) await apps.patchNamespacedDeploymentScale({ namespace: NAMESPACE, name: s.name, body: { spec: { replicas: replicas[s.name] ?? 0 } } }, mergePatchOptions());
}

/** the client's default patch type is JSON patch; a scale is a merge patch */
const mergePatchOptions = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function deleteWorkload(guest: KubeClients): Promise<void> {
  const apps = guest.config.makeApiClient(AppsV1Api);
  const policy = guest.config.makeApiClient(PolicyV1Api);
  for (const s of SHAPES) {
    await apps.deleteNamespacedDeployment({ namespace: NAMESPACE, name: s.name }).catch(() => undefined);
    await policy.deleteNamespacedPodDisruptionBudget({ namespace: NAMESPACE, name: s.name }).catch(() => undefined);
  }
  await guest.core.deleteCollectionNamespacedPod({ namespace: NAMESPACE, gracePeriodSeconds: 0 }).catch(() => undefined);
  await apps.deleteNamespacedDaemonSet({ namespace: AGENT_NAMESPACE, name: AGENT }).catch(() => undefined);
}

/** The node agent's pods: how many nodes should run one, and how many run one (the DaemonSet's status). */
async function agentCounts(c: Cluster): Promise<{ desired: number; ready: number }> {
  const apps = c.guest.config.makeApiClient(AppsV1Api);
  const ds = await apps.readNamespacedDaemonSet({ namespace: AGENT_NAMESPACE, name: AGENT });
  return { desired: ds.status?.desiredNumberScheduled ?? 0, ready: ds.status?.numberReady ?? 0 };
}

// ---------------------------------------------------------------------------------------
// what the run observes

interface Cluster {
  index: number;
  hc: { namespace: string; name: string; infraID: string; region: string; releaseImage: string };
  roleArn: string;
  guest: KubeClients;
  guestKubeconfig: string;
  /** restarts its API server */
  restartApi: () => Promise<number>;
  ec2: EC2Client;
  fleet?: SimulatedKubeletFleet;
}

async function listPods(c: Cluster): Promise<ObservedPod[]> {
  const pods = (await c.guest.core.listNamespacedPod({ namespace: NAMESPACE })).items;
  return pods.map((p) => {
    const ready = p.status?.conditions?.find((cond) => cond.type === 'Ready' && cond.status === 'True');
    return {
      name: `${c.hc.infraID}/${p.metadata?.name ?? '?'}`,
      phase: p.status?.phase ?? 'Unknown',
      deleting: p.metadata?.deletionTimestamp !== undefined,
      createdAt: new Date(p.metadata?.creationTimestamp ?? 0).toISOString(),
      ...(ready?.lastTransitionTime ? { readyAt: new Date(ready.lastTransitionTime).toISOString() } : {}),
    };
  });
}

interface ClaimView {
  name: string;
  createdAt: number;
  deleting: boolean;
  timeline: ClaimTimeline;
}

async function listClaims(c: Cluster): Promise<ClaimView[]> {
  type Item = { metadata: { name: string; creationTimestamp?: string; deletionTimestamp?: string }; status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } };
  const out = (await c.guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: Item[] };
  return out.items.map((i) => ({ name: i.metadata.name, createdAt: Date.parse(i.metadata.creationTimestamp ?? ''), deleting: i.metadata.deletionTimestamp !== undefined, timeline: claimTimeline(i) }));
}

async function listNodes(c: Cluster): Promise<number> {
  return (await c.guest.core.listNode()).items.filter((n) => n.metadata?.deletionTimestamp === undefined).length;
}

async function allInstances(ec2: EC2Client): Promise<ObservedInstance[]> {
  const out: ObservedInstance[] = [];
  let token: string | undefined;
  do {
    const page = await ec2.send(new DescribeInstancesCommand({ NextToken: token, MaxResults: 1000 }));
    for (const r of page.Reservations ?? []) {
      for (const i of r.Instances ?? []) out.push({ id: i.InstanceId ?? '?', state: i.State?.Name ?? '?', tags: Object.fromEntries((i.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])) });
    }
    token = page.NextToken;
  } while (token);
  return out;
}

async function pdbSamples(c: Cluster, guarded: boolean): Promise<PdbSample[]> {
  const policy = c.guest.config.makeApiClient(PolicyV1Api);
  const at = Date.now();
  return (await policy.listNamespacedPodDisruptionBudget({ namespace: NAMESPACE })).items.map((p) => ({
    pdb: `${c.hc.infraID}/${p.metadata?.name ?? '?'}`,
    at,
    currentHealthy: p.status?.currentHealthy ?? 0,
    desiredHealthy: p.status?.desiredHealthy ?? 0,
    expectedPods: p.status?.expectedPods ?? 0,
    guarded,
  }));
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined => (t?.seconds !== undefined && t.seconds !== null ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined);

/** moto's answer time per EC2 action (forwarded requests): count, p50 and p99 ms, slowest p99 first. */
function upstreamLatency(requests: readonly { action: string; upstreamMs?: number }[]): { action: string; count: number; p50: number; p99: number }[] {
  const byAction = new Map<string, number[]>();
  for (const r of requests) if (r.upstreamMs !== undefined) byAction.set(r.action, [...(byAction.get(r.action) ?? []), r.upstreamMs]);
  return [...byAction].map(([action, ms]) => ({ action, count: ms.length, p50: percentile(ms, 50) ?? 0, p99: percentile(ms, 99) ?? 0 })).sort((a, b) => b.p99 - a.p99);
}

/** A payload the SDK's default converter reads (JSON); anything else (an encrypted one) is undefined. */
function decodedPayload(payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0] | undefined): unknown {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
}

async function sampleWorkflows(client: Client, clusters: readonly Cluster[]): Promise<WorkflowSample[]> {
  const ids: string[] = [];
  const query = `(${clusters.map((c) => `AutoNodeCluster = '${c.hc.infraID}'`).join(' OR ')}) AND ExecutionStatus = 'Running'`;
  for await (const wf of client.workflow.list({ query })) ids.push(wf.workflowId);
  const limit = pLimit(8);
  const at = Date.now();
  const samples = await Promise.all(
    ids.map((id) =>
      limit(async (): Promise<WorkflowSample | undefined> => {
        try {
          const d = await client.workflow.getHandle(id).describe();
          const raw = d.raw;
          const progress = (raw.pendingActivities ?? []).map((a) => Math.max(ms(a.lastStartedTime) ?? 0, ms(a.lastHeartbeatTime) ?? 0, ms(a.lastAttemptCompleteTime) ?? 0, ms(a.scheduledTime) ?? 0) || at);
          const wt = raw.pendingWorkflowTask ? ms(raw.pendingWorkflowTask.scheduledTime) : undefined;
          const activities = (raw.pendingActivities ?? []).map((a) => {
            const beat = decodedPayload(a.heartbeatDetails?.payloads?.[0] ?? undefined) as { stage?: unknown; for?: unknown } | undefined;
            const failure = a.lastFailure?.message ?? undefined;
            return {
              id: a.activityId ?? '',
              type: a.activityType?.name ?? '',
              attempt: a.attempt ?? 1,
              // where the attempt was at its last beat (activities/heartbeat.ts), and why the last one failed
              ...(typeof beat?.stage === 'string' ? { stage: typeof beat.for === 'number' ? `${beat.stage} (${beat.for} s)` : beat.stage } : {}),
              ...(failure ? { lastFailure: failure } : {}),
            };
          });
          return { id, at, historyLength: d.historyLength, pendingActivitiesLastProgress: progress, pendingActivities: activities, ...(wt !== undefined ? { pendingWorkflowTaskSince: wt } : {}) } satisfies WorkflowSample;
        } catch {
          return undefined;
        }
      }),
    ),
  );
  return samples.filter((s): s is WorkflowSample => s !== undefined);
}

// ---------------------------------------------------------------------------------------
// workers under a supervisor, and the chaos

interface WorkerSlot {
  index: number;
  child: ChildProcess | undefined;
  incarnation: number;
  sdkMetricsPort: number;
  startedAt: number;
}

interface ChaosEvent {
  at: number;
  phase: string;
  what: string;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv);
  const rng = mulberry32(o.seed);
  const events: ChaosEvent[] = [];
  let phase = 'setup';
  const event = (what: string) => {
    events.push({ at: Math.round((Date.now() - t0) / 1000), phase, what });
    say(`chaos: ${what}`);
  };
  say(`options ${JSON.stringify(o)}`);

  const env = { ...process.env, AUTONODE_TEMPORAL: o.server };
  let stack: LocalStack | undefined;
  const extras: ExtraGuest[] = [];
  const slots: WorkerSlot[] = [];
  let proxy: Ec2FaultProxy | undefined;
  let stopping = false;
  const buildDir = join(projectRoot(), '.autonode', `scale-build-${process.pid}`);
  const stopAll = async () => {
    stopping = true;
    if (o.workerCpuProf !== undefined) {
      // a profile is written at a clean exit: SIGTERM (the worker drains and exits), SIGKILL after 30 s
      const live = slots.flatMap((s) => (s.child && !hasExited(s.child) ? [s.child] : []));
      await Promise.all(live.map((child) => new Promise<void>((done) => {
        const late = setTimeout(done, 30_000);
        child.once('exit', () => (clearTimeout(late), done()));
        child.kill('SIGTERM');
      })));
      say(`worker CPU profiles: ${o.workerCpuProf}`);
    }
    for (const s of slots) if (s.child && !hasExited(s.child)) s.child.kill('SIGKILL');
    for (const e of extras) await e.stop().catch((err: unknown) => say(`stopping ${e.name}: ${errorText(err)}`));
    await proxy?.close().catch(() => undefined);
    await stack?.stop().catch((err: unknown) => say(`stopping the stack: ${errorText(err)}`));
    rmSync(buildDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping everything this run started`);
      void stopAll().then(() => process.exit(130));
    });
  }
  process.once('exit', () => {
    for (const s of slots) if (s.child && !hasExited(s.child)) s.child.kill('SIGKILL');
    stack?.killNow();
  });

  const report: Record<string, unknown> = { options: o, startedAt: new Date(t0).toISOString(), machine: { cpus: (await import('node:os')).cpus().length, loadavgAtStart: (await import('node:os')).loadavg() } };
  try {
    stack = await startStack({ env, log: say });
    const info = stack.info;
    say(`stack in ${info.dir} (Temporal ${info.temporal.server})`);
    const extraGuests = await Promise.all(Array.from({ length: o.clusters - 1 }, (_, i) => startExtraGuest(info, { name: `guest-${i + 1}`, log: say, env })));
    extras.push(...extraGuests);
    // moto's catalog is static: each of these read once from it (moto renders all 1,395 types
    // per DescribeInstanceTypes call, ignoring MaxResults: a minute per call under this load)
    proxy = await startEc2FaultProxy({ target: info.ec2.endpoint, staticReads: ['DescribeInstanceTypes', 'DescribeInstanceTypeOfferings', 'DescribeSpotPriceHistory'] });
    const management = kubeClientsFromKubeconfigFile(info.management.kubeconfigPath);
    const ec2For = roleEc2ClientFactory(info);

    const clusters: Cluster[] = [];
    for (let i = 0; i < o.clusters; i++) {
      const hc = { namespace: 'scale', name: `c${i}`, infraID: `scale-c${i}`, region: info.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
      const roleArn = `arn:aws:iam::123456789012:role/autonode-scale-c${i}`;
      const extra = i === 0 ? undefined : extraGuests[i - 1];
      const guestKubeconfig = extra ? extra.kubeconfigPath : info.guest.kubeconfigPath;
      const restartApi = extra ? () => extra.restart(`kube-apiserver-${extra.name}`) : () => (stack as LocalStack).restart('kube-apiserver-guest');
      const ec2 = ec2For({ name: hc.infraID, region: hc.region, credentialsRef: roleArn });
      await createClusterNetwork(ec2, { clusterName: hc.infraID, zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: 40 + i });
      await createLocalHostedCluster(management, readFileSync(guestKubeconfig, 'utf8'), hc);
      clusters.push({ index: i, hc, roleArn, guest: kubeClientsFromKubeconfigFile(guestKubeconfig), guestKubeconfig, restartApi, ec2 });
    }
    say(`${clusters.length} HostedCluster(s) with their networks`);

    // shipped: the compiled build with its own workflow bundle, as the Deployment runs it (a
    // restart then costs what it costs in production, not a TypeScript transpile); defaults:
    // the source through tsx, with one bundle built here for every worker
    let compiledMain: string | undefined;
    const workflowBundle: Record<string, string> = {};
    if (o.workerSettings === 'shipped') {
      say(`building the shipped code into ${buildDir} (as npm run build does)`);
      compiledMain = buildShippedWorker(buildDir);
    } else {
      const bundlePath = join(info.dir, 'workflow-bundle.js');
      const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: say, error: say } });
      writeFileSync(bundlePath, code);
      workflowBundle.AUTONODE_WORKFLOW_BUNDLE = bundlePath;
    }

    const ports = await freePortsFor(Array.from({ length: o.workers }, (_, i) => `w${i}`));
    // the worker as an operator runs it: the manifest's heap, cache and resync, unless overridden
    const shipped = o.workerSettings === 'shipped' ? shippedWorkerTuning(shippedWorkerEnvOfCheckout()) : { heapMb: undefined, env: {} };
    const heapMb = o.workerHeapMb ?? shipped.heapMb;
    say(`workers: ${o.workerSettings === 'shipped' ? 'as shipped' : 'defaults'}; heap ${heapMb ?? "Node's default"} MiB; ${Object.entries(shipped.env).map(([k, v]) => `${k}=${v}`).join(' ') || 'no manifest settings'}`);
    const startWorker = (slot: WorkerSlot) => {
      slot.incarnation++;
      slot.startedAt = Date.now();
      slot.child = spawnWorkerProcess({
        temporal: info.temporal,
        logFile: join(info.dir, 'logs', `worker-${slot.index}.log`),
        ...(heapMb !== undefined ? { heapMb } : {}),
        ...(compiledMain !== undefined ? { compiledMain } : {}),
        ...(o.workerCpuProf !== undefined ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(o.workerCpuProf, `worker-${slot.index}-${slot.incarnation}`)}`] } : {}),
        env: {
          ...shipped.env,
          AUTONODE_MANAGEMENT_KUBECONFIG: info.management.kubeconfigPath,
          // EC2 through the fault proxy; STS and SSM straight to moto (the faults are EC2's)
          AWS_ENDPOINT_URL_EC2: (proxy as Ec2FaultProxy).endpoint,
          AWS_ENDPOINT_URL_STS: info.ec2.endpoint,
          AWS_ENDPOINT_URL_SSM: info.ec2.endpoint,
          // moto accepts any keys; these are not AWS credentials
          AWS_ACCESS_KEY_ID: 'testing',
          AWS_SECRET_ACCESS_KEY: 'testing',
          AWS_REGION: info.ec2.region,
          AUTONODE_METRICS_PORT: '0',
          AUTONODE_TEMPORAL_METRICS_PORT: String(slot.sdkMetricsPort),
          AUTONODE_METRICS_HOST: '127.0.0.1',
          AUTONODE_LOG_LEVEL: 'warn',
          // the shipped Deployment's emptyDir: one per worker (pod), kept across its restarts
          AUTONODE_CATALOG_CACHE_DIR: join(info.dir, 'catalog-cache', `w${slot.index}`),
          ...workflowBundle,
          ...(o.cache !== undefined ? { AUTONODE_MAX_CACHED_WORKFLOWS: String(o.cache) } : {}),
          ...(o.workflowTasks !== undefined ? { AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS: String(o.workflowTasks) } : {}),
        },
      });
    };
    for (let i = 0; i < o.workers; i++) {
      const slot: WorkerSlot = { index: i, child: undefined, incarnation: 0, sdkMetricsPort: ports[`w${i}`] ?? 0, startedAt: 0 };
      slots.push(slot);
      startWorker(slot);
    }
    say(`${o.workers} worker process(es) started (logs ${join(info.dir, 'logs')}/worker-*.log)`);

    const client = await connectClient(info.temporal);
    let kubeletRestarts = 0;
    const deps = { temporal: client, management, io: { stdout: (t: string) => say(t.trimEnd()), stderr: (t: string) => say(t.trimEnd()) }, waitMs: 300_000 };
    for (const c of clusters) {
      const status = await enableCluster(deps, `${c.hc.namespace}/${c.hc.name}`, { roleArn: c.roleArn, wait: true });
      if (status?.phase !== 'Enabled') throw new Error(`${c.hc.name} did not enable: ${JSON.stringify(status)}`);
      const cloud = createEc2CloudProvider({ ec2: c.ec2, cluster: { name: c.hc.infraID, region: c.hc.region } });
      c.fleet = new SimulatedKubeletFleet({
        listInstances: () => cloud.list(),
        userDataOf: instanceUserData(c.ec2),
        region: c.hc.region,
        // a real kubelet retries while its API server is down (the guest restarts below)
        restartFailedKubelets: true,
        onEvent: (e) => {
          if (e.type === 'failed') say(`[${c.hc.infraID}] simulated kubelet on ${e.instanceId} failed: ${errorText(e.error)}`);
          if (e.type === 'restarting') kubeletRestarts++;
        },
      });
      c.fleet.start();
    }
    say('AutoNode enabled on every cluster; simulated kubelets running');

    // ---- samplers (all bounded by `stopping`) ----------------------------------------
    const rss = new Map<number, number[]>();
    const sdkReadings: { incarnation: string; scheduleToStart: Histogram; execution: Histogram; at: number }[] = [];
    const duplicatesSeen = new Map<string, DuplicateInstances>();
    const pdb: PdbSample[] = [];
    const workflowSamples: WorkflowSample[] = [];
    let guarded = false;
    let peakInstances = 0;
    const loops: Promise<void>[] = [];
    // (generous: under load a sample of every workflow or every instance takes tens of seconds)
    const SAMPLE_DEADLINE_MS = 300_000;
    const every = (name: string, periodMs: number, fn: () => Promise<void>) =>
      loops.push(
        (async () => {
          while (!stopping) {
            // a sample that never settles must not stop its sampler (the server metrics
            // sampler hung that way, and the action total stopped at its early readings)
            let timer: NodeJS.Timeout | undefined;
            const deadline = new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer in ${SAMPLE_DEADLINE_MS / 1000} s`)), SAMPLE_DEADLINE_MS);
            });
            await Promise.race([fn(), deadline])
              .catch((err: unknown) => say(`${name} sampler: ${errorText(err)}`))
              .finally(() => clearTimeout(timer));
            const until = Date.now() + periodMs;
            while (!stopping && Date.now() < until) await delay(250);
          }
        })(),
      );
    every('rss', 2_000, async () => {
      for (const s of slots) {
        const pid = s.child?.pid;
        if (pid === undefined || !s.child || hasExited(s.child)) continue;
        try {
          const value = rssMiBFromStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
          if (value !== undefined) rss.set(s.index, [...(rss.get(s.index) ?? []), value]);
        } catch {
          // the process just died: the next sample finds its successor
        }
      }
    });
    // CPU by component of this run's process tree (the stack, the workers, this process)
    const cpu = new CpuLedger(process.pid, clockTicksPerSecond());
    every('cpu', 2_000, async () => cpu.sample(readProcesses()));
    // a phase boundary: a fresh sample, so the phase is charged up to this moment
    const markCpu = (phase: string) => {
      cpu.sample(readProcesses());
      cpu.mark(phase);
    };
    // A metrics page, given up after `ms`, with a controller and timer held here. With
    // AbortSignal.timeout (whose timer holds its signal only weakly) a fetch hung for the
    // sampler's whole 5-minute deadline in session 23's run; a signal collected before it
    // fires is the suspected cause (compare nodejs/undici#4068), not a proven one.
    const fetchText = async (url: string, ms = 3_000): Promise<string> => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`no answer from ${url} in ${ms} ms`)), ms);
      try {
        return await (await fetch(url, { signal: controller.signal })).text();
      } finally {
        clearTimeout(timer);
      }
    };
    every('sdk metrics', 5_000, async () => {
      for (const s of slots) {
        if (!s.child || hasExited(s.child)) continue;
        const text = await fetchText(`http://127.0.0.1:${s.sdkMetricsPort}/metrics`).catch(() => undefined);
        if (text === undefined) continue;
        // workers/runtime.ts exports durations in seconds with the unit in the name
        const histogram = (name: string) => scaleBounds(parseHistogram(text, `${name}_seconds`), 1000);
        sdkReadings.push({ incarnation: `${s.index}#${s.incarnation}`, scheduleToStart: histogram('temporal_workflow_task_schedule_to_start_latency'), execution: histogram('temporal_workflow_task_execution_latency'), at: Date.now() });
      }
    });
    every('instances', 10_000, async () => {
      const instances = await allInstances(clusters[0]?.ec2 as EC2Client);
      peakInstances = Math.max(peakInstances, instances.filter((i) => i.state !== 'terminated' && i.state !== 'shutting-down').length);
      for (const d of duplicateInstances(instances)) {
        if (!duplicatesSeen.has(d.nodeClaim)) say(`DUPLICATE: ${d.nodeClaim} has instances ${d.instanceIds.join(', ')}`);
        duplicatesSeen.set(d.nodeClaim, d);
      }
    });
    every('pdb', 3_000, async () => {
      for (const c of clusters) pdb.push(...(await pdbSamples(c, guarded)));
    });
    // the server's billable-action counter, summed over its services' endpoints, per incarnation
    // of each (a restarted process starts it from 0)
    const serverActionReadings = new Map<string, number>();
    let temporalIncarnation = 0;
    let actionsLoggedAt = 0;
    const restartedUrl = info.temporal.server === 'production' ? info.temporal.metricsUrl : undefined;
    every('server metrics', 5_000, async () => {
      const urls = info.temporal.metricsUrls ?? (info.temporal.metricsUrl ? [info.temporal.metricsUrl] : []);
      await Promise.all(
        urls.map(async (url) => {
          const text = await fetchText(url);
          // only the restarted process's counter starts again; the dev server restarts whole
          const incarnation = restartedUrl === undefined || url === restartedUrl ? temporalIncarnation : 0;
          serverActionReadings.set(`${url}#${incarnation}`, sumCounter(text, 'action'));
        }),
      );
      // (a run's action total came out below what the frontend alone had counted midway:
      // each incarnation's reading, once a minute, says where the sum goes wrong)
      if (Date.now() - actionsLoggedAt >= 60_000) {
        actionsLoggedAt = Date.now();
        say(`server actions: ${[...serverActionReadings].map(([key, value]) => `${key.replace(/^http:\/\/127\.0\.0\.1:/, '')}=${value}`).join(', ')}`);
      }
    });
    // stuck is judged at every round, among the workflows running in that round
    const stuckSeen = new Map<string, StuckWorkflow & { at: number; phase: string }>();
    // not stuck, but named: an activity retried 5 min while its workflow went on beside it
    const retriedSeen = new Map<string, StuckWorkflow & { at: number; phase: string }>();
    const judgeStuck = (round: WorkflowSample[]) => {
      const at = Date.now();
      const runningNow = new Set(round.map((r) => r.id));
      for (const s of stuckWorkflows(workflowSamples, at, { runningNow })) {
        if (!stuckSeen.has(s.id)) say(`STUCK: ${s.id}: ${s.why}`);
        stuckSeen.set(s.id, { ...s, at: Math.round((at - t0) / 1000), phase });
      }
      for (const s of retriedWhileProgressing(workflowSamples, { runningNow })) {
        const key = `${s.id}: ${s.why.replace(/ from attempt.*/, '')}`;
        if (!retriedSeen.has(key)) say(`retried 5 min while its workflow went on (not stuck): ${s.id}: ${s.why}`);
        retriedSeen.set(key, { ...s, at: Math.round((at - t0) / 1000), phase });
      }
    };
    every('workflows', 60_000, async () => {
      const round = await sampleWorkflows(client, clusters);
      workflowSamples.push(...round);
      judgeStuck(round);
    });

    // ---- the chaos -------------------------------------------------------------------
    const scenarioStart = Date.now();
    proxy.random({ seed: o.seed, throttle: o.throttle, serverError: o.serverError });
    event(`EC2 faults on: ${o.throttle * 100} % throttled, ${o.serverError * 100} % InternalError (seed ${o.seed})`);
    // the supervisor: a worker that exits is started again a second later (a Deployment's restart)
    every('supervisor', 1_000, async () => {
      for (const s of slots) {
        if (s.child && hasExited(s.child) && !stopping) {
          const how = s.child.signalCode ?? `code ${s.child.exitCode}`;
          await delay(1_000);
          startWorker(s);
          say(`worker ${s.index} (${how}) restarted as incarnation ${s.incarnation}`);
        }
      }
    });
    if (o.killEvery > 0) {
      let next = Date.now() + o.killEvery * 1000;
      every('killer', 1_000, async () => {
        if (Date.now() < next) return;
        next += o.killEvery * 1000;
        const slot = slots[Math.floor(rng() * slots.length)];
        if (!slot?.child || hasExited(slot.child)) return;
        slot.child.kill('SIGKILL');
        event(`SIGKILL worker ${slot.index} (pid ${slot.child.pid}, incarnation ${slot.incarnation}, up ${Math.round((Date.now() - slot.startedAt) / 1000)} s)`);
      });
    }
    // one restart per guest API server, then the Temporal server, at seeded offsets 40–70 s apart
    const restarts: { at: number; what: string; run: () => Promise<number> }[] = [];
    let offset = 30_000;
    if (o.restartGuests) {
      for (const c of clusters) {
        offset += 40_000 + Math.floor(rng() * 30_000);
        restarts.push({ at: scenarioStart + offset, what: `guest API server of ${c.hc.infraID}`, run: c.restartApi });
      }
    }
    if (o.restartTemporal) {
      offset += 40_000 + Math.floor(rng() * 30_000);
      // the production server's frontend alone (history, matching and worker keep running);
      // the dev server runs every service in one process, so it restarts whole
      const restart =
        info.temporal.server === 'production'
          ? { name: temporalProcessName('frontend'), what: 'Temporal frontend (temporal-frontend; history, matching and worker stay up)' }
          : { name: 'temporal', what: 'Temporal dev server (every service in one process)' };
      restarts.push({ at: scenarioStart + offset, what: restart.what, run: () => (stack as LocalStack).restart(restart.name) });
    }
    every('restarts', 1_000, async () => {
      const due = restarts.filter((r) => r.at <= Date.now());
      for (const r of due) {
        restarts.splice(restarts.indexOf(r), 1);
        event(`restarting the ${r.what}`);
        if (r.what.startsWith('Temporal')) temporalIncarnation++;
        const down = await r.run();
        event(`the ${r.what} is back after ${(down / 1000).toFixed(1)} s`);
      }
    });

    // ---- phase 1: up ----------------------------------------------------------------
    const phases: Record<string, unknown> = {};
    const waitUntil = async (what: string, timeoutS: number, check: () => Promise<boolean>): Promise<{ ok: boolean; seconds: number }> => {
      const start = Date.now();
      for (;;) {
        if (await check().catch((err: unknown) => (say(`${what}: ${errorText(err)}`), false))) return { ok: true, seconds: (Date.now() - start) / 1000 };
        if (Date.now() - start > timeoutS * 1000) {
          say(`${what}: NOT within ${timeoutS} s — moving on`);
          return { ok: false, seconds: (Date.now() - start) / 1000 };
        }
        await delay(5_000);
      }
    };
    const podsOfAll = async () => (await Promise.all(clusters.map(listPods))).flat();

    phase = 'up';
    const upStart = Date.now();
    markCpu('up');
    for (const c of clusters) await applyWorkload(c.guest, o.podsPerCluster);
    say(`phase up: ${o.podsPerCluster} pods per cluster (${JSON.stringify(replicasOf(o.podsPerCluster))}) applied`);
    let lastLine = '';
    // every NodeClaim seen while pods come up: those gone before the phase ends are churn
    // (consolidated, replaced or failed while the workload was still arriving)
    const seenUp = new Set<string>();
    const up = await waitUntil('all pods Running', o.upTimeout, async () => {
      const pods = await podsOfAll();
      const running = pods.filter((p) => p.phase === 'Running' && !p.deleting).length;
      const claims = (await Promise.all(clusters.map(listClaims))).flat();
      for (const c of claims) seenUp.add(c.name);
      const line = `${running}/${pods.length} Running, ${claims.length} NodeClaims (${seenUp.size} seen)`;
      if (line !== lastLine) say(`phase up: ${line}`);
      lastLine = line;
      return pods.length === o.podsPerCluster * clusters.length && running === pods.length;
    });
    const upPods = await podsOfAll();
    const upClaims = (await Promise.all(clusters.map(listClaims))).flat();
    const agents = (await Promise.all(clusters.map((c) => agentCounts(c).catch(() => ({ desired: -1, ready: -1 })))));
    const latencies = pendingToRunningSeconds(upPods, upStart - 1_000);
    phases.up = {
      ok: up.ok,
      seconds: up.seconds,
      pods: upPods.length,
      running: upPods.filter((p) => p.phase === 'Running').length,
      pendingAtEnd: pendingPods(upPods),
      // the node agent DaemonSet at the end of the phase, summed over clusters (-1: unreadable)
      nodeAgents: { desired: agents.reduce((a, b) => a + b.desired, 0), ready: agents.reduce((a, b) => a + b.ready, 0) },
      nodeClaims: upClaims.length,
      nodeClaimsSeen: seenUp.size,
      nodeClaimsGoneDuringUp: [...seenUp].filter((name) => !upClaims.some((c) => c.name === name)).length,
      nodeClaimsPerMinute: perMinute(upClaims.map((c) => c.createdAt)),
      // which step of joining took the time: launch, register (boot + CSR + Node), initialize
      nodeClaimStepSeconds: claimStepSeconds(upClaims.map((c) => c.timeline)),
      podPendingToRunningSeconds: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100), n: latencies.length },
    };
    say(`phase up: ${JSON.stringify({ ...(phases.up as object), pendingAtEnd: (phases.up as { pendingAtEnd: string[] }).pendingAtEnd.length })}`);

    // ---- phase 2: down --------------------------------------------------------------
    phase = 'down';
    markCpu('down');
    const nodesBefore = (await Promise.all(clusters.map(listNodes))).reduce((a, b) => a + b, 0);
    for (const c of clusters) await scaleWorkload(c.guest, Math.floor(o.podsPerCluster / 2));
    say(`phase down: every Deployment at 50 % (${nodesBefore} nodes before)`);
    await delay(10_000);
    guarded = true;
    let lastCount = -1;
    let stableSince = Date.now();
    const down = await waitUntil('consolidated', o.downTimeout, async () => {
      const nodes = (await Promise.all(clusters.map(listNodes))).reduce((a, b) => a + b, 0);
      const claims = (await Promise.all(clusters.map(listClaims))).flat();
      const deleting = claims.filter((c) => c.deleting).length;
      if (nodes !== lastCount || deleting > 0) {
        if (nodes !== lastCount) say(`phase down: ${nodes} nodes, ${claims.length} NodeClaims (${deleting} deleting)`);
        lastCount = nodes;
        stableSince = Date.now();
        return false;
      }
      const pods = await podsOfAll();
      return Date.now() - stableSince >= o.settle * 1000 && pods.every((p) => p.phase === 'Running' || p.deleting);
    });
    guarded = false;
    const downPods = await podsOfAll();
    const nodesAfter = (await Promise.all(clusters.map(listNodes))).reduce((a, b) => a + b, 0);
    phases.down = { ok: down.ok, seconds: down.seconds, nodesBefore, nodesAfter, pendingAtEnd: pendingPods(downPods) };
    say(`phase down: ${nodesBefore} → ${nodesAfter} nodes in ${down.seconds.toFixed(0)} s${down.ok ? '' : ' (not settled)'}`);

    // ---- phase 3: delete ------------------------------------------------------------
    phase = 'delete';
    markCpu('delete');
    for (const c of clusters) await deleteWorkload(c.guest);
    say('phase delete: workloads deleted; disabling AutoNode on every cluster');
    const disableStart = Date.now();
    const disabled = await Promise.all(
      clusters.map((c) =>
        disableCluster({ ...deps, waitMs: o.deleteTimeout * 1000 }, `${c.hc.namespace}/${c.hc.name}`, { wait: true }).then(
          (s) => s?.phase ?? 'gone',
          (err: unknown) => `failed: ${errorText(err)}`,
        ),
      ),
    );
    const gone = await waitUntil('no NodeClaim and no instance', Math.max(30, o.deleteTimeout - (Date.now() - disableStart) / 1000), async () => {
      const claims = (await Promise.all(clusters.map(listClaims))).flat();
      const live = leakedInstances(await allInstances(clusters[0]?.ec2 as EC2Client), clusters.map((c) => c.hc.infraID));
      return claims.length === 0 && live.length === 0;
    });
    phases.delete = { ok: gone.ok, seconds: (Date.now() - disableStart) / 1000, disabled };

    // ---- verdicts -------------------------------------------------------------------
    phase = 'checks';
    markCpu('end');
    proxy.random(undefined);
    const finalInstances = await allInstances(clusters[0]?.ec2 as EC2Client);
    for (const d of duplicateInstances(finalInstances)) duplicatesSeen.set(d.nodeClaim, d);
    const leaked = leakedInstances(finalInstances, clusters.map((c) => c.hc.infraID));
    const finalSample = await sampleWorkflows(client, clusters);
    workflowSamples.push(...finalSample);
    judgeStuck(finalSample);
    const now = Date.now();
    const stuck = [...stuckSeen.values()];
    const stillRunning = finalSample.map((s) => s.id);
    const violations = pdbViolations(pdb);
    const notPlacedYet = pdbShortfalls(pdb).filter((e) => !e.healthyFell);
    const upPending = (phases.up as { pendingAtEnd: string[] }).pendingAtEnd;
    const downPending = (phases.down as { pendingAtEnd: string[] }).pendingAtEnd;

    // ---- figures ----------------------------------------------------------------------
    const lastOfEach = new Map<string, (typeof sdkReadings)[number]>();
    for (const r of sdkReadings) lastOfEach.set(r.incarnation, r);
    const s2s = addHistograms(...[...lastOfEach.values()].map((r) => r.scheduleToStart));
    const exec = addHistograms(...[...lastOfEach.values()].map((r) => r.execution));
    const tasks = s2s.get(Infinity) ?? 0;
    const scenarioSeconds = (now - scenarioStart) / 1000;
    // every run of the clusters' workflows, open or closed, with its history length: events per second
    let historyEvents = 0;
    let runs = 0;
    for await (const wf of client.workflow.list({ query: clusters.map((c) => `AutoNodeCluster = '${c.hc.infraID}'`).join(' OR ') })) {
      historyEvents += wf.historyLength;
      runs++;
    }
    const actions = [...serverActionReadings.values()].reduce((a, b) => a + b, 0);
    const serverActions = serverActionReadings.size > 0 ? { actions, note: `the server's \`action\` counter, last reading of each of its ${serverActionReadings.size} service process incarnation(s) (it restarts from 0 with the process)` } : undefined;
    const rssByWorker = Object.fromEntries([...rss.entries()].map(([i, v]) => [`worker-${i}`, summarizeRss(v)]));
    const allRss = [...rss.values()].flat();
    report.phases = phases;
    report.chaos = { events, simulatedKubeletRestarts: kubeletRestarts, workerKills: events.filter((e) => e.what.startsWith('SIGKILL')).length, ec2: { requests: proxy.requests.length, throttled: proxy.injected.filter((f) => f.kind === 'throttle').length, serverErrors: proxy.injected.filter((f) => f.kind === 'server-error').length, upstreamMs: upstreamLatency(proxy.requests) } };
    report.checks = {
      duplicateInstances: [...duplicatesSeen.values()],
      leakedInstances: leaked.map((i) => ({ id: i.id, state: i.state, nodeClaim: i.tags['karpenter.sh/nodeclaim'] })),
      pendingPodsPlaced: { afterUp: upPending.length, afterDown: downPending.length, examples: [...upPending, ...downPending].slice(0, 20) },
      stuckWorkflows: stuck,
      retriedWhileProgressing: [...retriedSeen.values()],
      workflowsStillRunningAfterDisable: stillRunning,
      pdbViolations: violations,
      // short of healthy pods that had not been placed yet (no healthy pod lost): not a disruption's doing
      pdbShortOfUnplacedPods: notPlacedYet.length,
      pdbSamples: pdb.length,
    };
    report.metrics = {
      scenarioSeconds,
      podPendingToRunningSeconds: (phases.up as { podPendingToRunningSeconds: unknown }).podPendingToRunningSeconds,
      nodeClaimsPerMinute: (phases.up as { nodeClaimsPerMinute: unknown }).nodeClaimsPerMinute,
      peakLiveInstances: peakInstances,
      temporal: {
        workflowRuns: runs,
        historyEvents,
        historyEventsPerSecond: historyEvents / scenarioSeconds,
        serverActions: serverActions?.actions,
        serverActionsPerSecond: serverActions ? serverActions.actions / scenarioSeconds : undefined,
        serverActionsNote: serverActions?.note,
        workflowTasks: tasks,
        // upper bounds of the buckets the quantiles fall in; "> N" above the exporter's top bucket
        workflowTaskScheduleToStartMs: { p50: quantileLabel(s2s, 0.5), p99: quantileLabel(s2s, 0.99), buckets: Object.fromEntries([...s2s.entries()].map(([b, n]) => [String(b), n])) },
        workflowTaskExecutionMs: { p50: quantileLabel(exec, 0.5), p99: quantileLabel(exec, 0.99), buckets: Object.fromEntries([...exec.entries()].map(([b, n]) => [String(b), n])) },
        sdkIncarnationsScraped: lastOfEach.size,
      },
      workerRssMiB: { all: summarizeRss(allRss), byWorker: rssByWorker },
      cpuByComponent: { note: 'CPU seconds of this run\'s process tree by component (utime + stime from /proc, sampled every 2 s)', phases: cpu.phases(), overall: cpu.overall() },
      loadavgAtEnd: (await import('node:os')).loadavg(),
    };
    const checks = report.checks as Record<string, unknown>;
    const verdicts: [string, number][] = [
      ['duplicate instances (two live instances for one NodeClaim)', (checks.duplicateInstances as unknown[]).length],
      ['leaked instances after the final delete', leaked.length],
      ['pods Pending after phase up (all placeable)', upPending.length],
      ['pods Pending after phase down', downPending.length],
      ['stuck workflows (work pending, no progress 5 min)', stuck.length],
      ['workflows still running after disable', stillRunning.length],
      ['PDB violations (healthy pods lost below a budget during consolidation)', violations.length],
    ];
    report.verdicts = Object.fromEntries(verdicts);
    mkdirSync(dirname(o.report), { recursive: true });
    writeFileSync(o.report, JSON.stringify(report, null, 2));
    printTable(o, report, verdicts);
    if (retriedSeen.size > 0) say(`activities retried 5 min while their workflows went on (not stuck; see checks.retriedWhileProgressing): ${retriedSeen.size}`);
    if (notPlacedYet.length > 0) say(`PDBs short of pods not placed yet during consolidation (no healthy pod lost; not a violation): ${notPlacedYet.length} episode(s)`);
    printCpu(cpu.phases(), cpu.overall());
    say(`report: ${o.report}`);
  } finally {
    await stopAll();
  }
  await Promise.resolve();
}

/** Where the cores went: per phase, the components by CPU seconds (with cores = CPU s / wall s). */
function printCpu(phases: PhaseCpu[], overall: PhaseCpu | undefined): void {
  if (overall === undefined) return;
  const all = [...phases, overall];
  const components = overall.components.map((c) => c.component);
  const cell = (p: PhaseCpu, component: string) => {
    const c = p.components.find((x) => x.component === component);
    return c === undefined ? '—' : `${c.cpuSeconds.toFixed(0)} s (${c.cores.toFixed(2)})`;
  };
  const header = ['CPU s (cores) by component', ...all.map((p) => `${p.phase} ${p.seconds.toFixed(0)} s`), 'share'];
  const rows = components.map((component) => [component, ...all.map((p) => cell(p, component)), `${(100 * (overall.components.find((c) => c.component === component)?.share ?? 0)).toFixed(0)} %`]);
  rows.push(['all', ...all.map((p) => `${p.components.reduce((a, c) => a + c.cpuSeconds, 0).toFixed(0)} s (${p.cores.toFixed(2)})`), '100 %']);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `  ${r.map((v, i) => (i === 0 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0))).join('  ')}`;
  process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n\n`);
}

/** A histogram quantile as a number, or "> <top bucket>" when it lies above the exporter's largest finite bucket. */
function quantileLabel(h: Histogram, q: number): number | string | undefined {
  const value = histogramQuantile(h, q);
  if (value !== Infinity) return value;
  const top = Math.max(...[...h.keys()].filter((b) => Number.isFinite(b)));
  return `> ${top}`;
}

function printTable(o: Options, report: Record<string, unknown>, verdicts: [string, number][]): void {
  const m = report.metrics as {
    scenarioSeconds: number;
    podPendingToRunningSeconds: { p50?: number; p99?: number; n: number };
    nodeClaimsPerMinute?: number;
    peakLiveInstances: number;
    temporal: { historyEventsPerSecond: number; serverActionsPerSecond?: number; workflowTasks: number; workflowTaskScheduleToStartMs: { p99?: number | string }; workflowTaskExecutionMs: { p99?: number | string } };
    workerRssMiB: { all?: { meanMiB: number; maxMiB: number } };
  };
  const phases = report.phases as { up: { ok: boolean; seconds: number; nodeClaims: number; nodeClaimsSeen: number; nodeClaimsGoneDuringUp: number; nodeClaimStepSeconds: Record<'launch' | 'register' | 'initialize' | 'total', StepSeconds> }; down: { ok: boolean; seconds: number; nodesBefore: number; nodesAfter: number }; delete: { ok: boolean; seconds: number } };
  const chaos = report.chaos as { workerKills: number; ec2: { requests: number; throttled: number; serverErrors: number; upstreamMs?: { action: string; count: number; p50: number; p99: number }[] }; events: unknown[] };
  const f = (n: number | undefined, d = 1) => (n === undefined ? '—' : Number.isFinite(n) ? n.toFixed(d) : '∞');
  const g = (v: number | string | undefined) => (typeof v === 'string' ? v : f(v, 0));
  const rows: [string, string][] = [
    ['configuration', `${o.clusters} cluster(s) × ${o.podsPerCluster} pods, ${o.workers} workers, ${o.server} server, seed ${o.seed}`],
    ['phase up (all Running)', `${phases.up.ok ? 'ok' : 'TIMED OUT'} in ${f(phases.up.seconds, 0)} s: ${phases.up.nodeClaims} NodeClaims at the end, ${phases.up.nodeClaimsSeen} seen, ${phases.up.nodeClaimsGoneDuringUp} gone during the phase`],
    ['phase down (consolidated)', `${phases.down.ok ? 'ok' : 'TIMED OUT'} in ${f(phases.down.seconds, 0)} s: ${phases.down.nodesBefore} → ${phases.down.nodesAfter} nodes`],
    ['phase delete (nothing left)', `${phases.delete.ok ? 'ok' : 'TIMED OUT'} in ${f(phases.delete.seconds, 0)} s`],
    ['chaos', `${chaos.workerKills} worker kills; EC2 ${chaos.ec2.requests} calls, ${chaos.ec2.throttled} throttled, ${chaos.ec2.serverErrors} × 500; ${chaos.events.length} events`],
    ['moto answer p50 / p99, slowest 4 actions', (chaos.ec2.upstreamMs ?? []).slice(0, 4).map((a) => `${a.action} ${a.p50} / ${a.p99} ms (${a.count})`).join('; ') || '—'],
    ...verdicts.map(([k, v]): [string, string] => [k, `${v}${v === 0 ? '' : '   ← FAIL'}`]),
    ['pending → Running p50 / p99', `${f(m.podPendingToRunningSeconds.p50)} s / ${f(m.podPendingToRunningSeconds.p99)} s (${m.podPendingToRunningSeconds.n} pods)`],
    ['NodeClaims per minute (phase up)', f(m.nodeClaimsPerMinute)],
    ['NodeClaim launch / register / initialize / total p50 (p99)', (['launch', 'register', 'initialize', 'total'] as const).map((k) => `${f(phases.up.nodeClaimStepSeconds[k].p50, 0)} (${f(phases.up.nodeClaimStepSeconds[k].p99, 0)})`).join(' / ') + ' s'],
    ['peak live instances', String(m.peakLiveInstances)],
    ['Temporal history events / s', f(m.temporal.historyEventsPerSecond)],
    ['Temporal server actions / s', f(m.temporal.serverActionsPerSecond)],
    ['workflow tasks (SDK)', String(m.temporal.workflowTasks)],
    ['workflow task schedule-to-start p99', `${g(m.temporal.workflowTaskScheduleToStartMs.p99)} ms (bucket bound)`],
    ['workflow task execution p99', `${g(m.temporal.workflowTaskExecutionMs.p99)} ms (bucket bound)`],
    ['worker RSS mean / max', `${f(m.workerRssMiB.all?.meanMiB, 0)} / ${f(m.workerRssMiB.all?.maxMiB, 0)} MiB`],
    ['scenario duration', `${f(m.scenarioSeconds, 0)} s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\n${rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n')}\n\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`[scale] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
