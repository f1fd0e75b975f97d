import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cacheDir, resolveBinaries, resolveProductionTemporal, type StackBinaries } from './binaries';
import { reapOrphanedStacks } from './reap';
import { installManagementCrds } from '../autonode/crds';

const stackDirPrefix = 'autonode-stack-';
import { createClusterPki, kubeApiserver, serviceAccountAudit, writeIdentityKubeconfig, type ClusterPki } from './control-plane';
import { freePortsFor } from './ports';
import { answers200 } from './probes';
import { ManagedProcess } from './process';
import { startTemporal, type TemporalEndpoint } from './temporal';
import { StackInfoSchema, type StackInfo } from './types';
import { z } from 'zod';

export interface StartStackOptions {
  /** where certificates, kubeconfigs, logs and stack.json go; default a new temp dir */
  dir?: string;
  /** progress lines (component started, how long it took) */
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  region?: string;
  /** dynamic config for the Temporal dev server (ignored with TEMPORAL_ADDRESS) */
  temporalDynamicConfig?: Record<string, string | number | boolean>;
  /** the codec server the dev server's Web UI uses (ignored with TEMPORAL_ADDRESS) */
  temporalUiCodecEndpoint?: string;
}

/**
 * AUTONODE_TEMPORAL: `dev` (default) runs `temporal server start-dev`; `production` runs
 * PostgreSQL and the Temporal server built by `npm run setup -- --production-temporal`.
 * AUTONODE_TEMPORAL_HISTORY_SHARDS sets the production server's shard count (default 4).
 * TEMPORAL_ADDRESS, when set, wins over both: that server is used and nothing is started.
 */
const TemporalChoiceSchema = z.object({
  AUTONODE_TEMPORAL: z.enum(['dev', 'production']).default('dev'),
  AUTONODE_TEMPORAL_HISTORY_SHARDS: z.coerce.number().int().min(1).max(16384).default(4),
});

/**
 * A running local stack. `stop()` stops exactly the processes this object started, in
 * reverse order, and is safe to call more than once.
 */
export class LocalStack {
  private stopping: Promise<void> | undefined;

  constructor(
    readonly info: StackInfo,
    readonly infoFile: string,
    private readonly processes: ManagedProcess[],
    private readonly cleanup: () => Promise<void>,
  ) {}

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.cleanup();
      for (const p of [...this.processes].reverse()) await p.stop();
      rmSync(join(this.info.dir, 'etcd'), { recursive: true, force: true });
      // the production Temporal's database (AUTONODE_TEMPORAL=production); logs stay
      rmSync(join(this.info.dir, 'postgres'), { recursive: true, force: true });
      rmSync(join(this.info.dir, 'pids.json'), { force: true });
      const survivors = this.processes.filter((p) => p.isRunning()).map((p) => `${p.spec.name} (pid ${p.pid})`);
      if (survivors.length > 0) throw new Error(`local stack: still running after stop: ${survivors.join(', ')}`);
    })();
    return this.stopping;
  }

  /**
   * Stops one component (by its name, e.g. `kube-apiserver-guest`, `temporal-frontend`) and
   * starts it again with the same arguments and ports; resolves once it is ready again.
   * For chaos runs (test/bench/scale.ts). Returns how long it was down.
   */
  async restart(name: string): Promise<number> {
    return restartByName(this.processes, name);
  }

  /** The names `restart` accepts. */
  get components(): string[] {
    return this.processes.map((p) => p.spec.name);
  }

  /** For process 'exit' handlers, where nothing can be awaited. */
  killNow(): void {
    for (const p of [...this.processes].reverse()) p.killNow();
  }
}

export async function restartByName(processes: readonly ManagedProcess[], name: string): Promise<number> {
  const p = processes.find((candidate) => candidate.spec.name === name);
  if (!p) throw new Error(`no component named ${name}; there are ${processes.map((c) => c.spec.name).join(', ')}`);
  const t0 = Date.now();
  await p.stop();
  await p.start();
  return Date.now() - t0;
}

type Ports = Record<'etcdClient' | 'etcdPeer' | 'managementApi' | 'guestApi' | 'scheduler' | 'controllerManager' | 'kwok' | 'moto', number>;

/**
 * Starts etcd → PKI → management and guest kube-apiservers → the management cluster's
 * CRDs (HostedCluster) and the guest's controller-manager (own CSR approver off, signing
 * on), scheduler and kwok → moto →
 * Temporal, each waited for by a readiness probe. On any failure everything already
 * started is stopped before the error propagates.
 */
export async function startStack(options: StartStackOptions = {}): Promise<LocalStack> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const binaries = resolveBinaries(env);
  const temporalChoice = TemporalChoiceSchema.parse({ AUTONODE_TEMPORAL: env.AUTONODE_TEMPORAL || undefined, AUTONODE_TEMPORAL_HISTORY_SHARDS: env.AUTONODE_TEMPORAL_HISTORY_SHARDS || undefined });
  const productionTemporal = temporalChoice.AUTONODE_TEMPORAL === 'production' && !env.TEMPORAL_ADDRESS ? resolveProductionTemporal(env) : undefined;
  for (const line of reapOrphanedStacks({ parentDir: tmpdir(), prefix: stackDirPrefix, cacheDir: cacheDir(env) })) {
    log(`stopped an orphaned component: ${line}`);
  }
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), stackDirPrefix));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const region = options.region ?? env.AWS_REGION ?? 'us-east-1';

  const started: ManagedProcess[] = [];
  let temporal: TemporalEndpoint | undefined;
  const stopAll = async () => {
    await temporal?.close();
    for (const p of [...started].reverse()) await p.stop();
  };
  // Recorded as each component starts, so a run killed half-way can still be reaped.
  const recordPids = () =>
    writeFileSync(join(dir, 'pids.json'), JSON.stringify({ owner: process.pid, ...Object.fromEntries(started.map((p) => [p.spec.name, p.pid])) }, null, 2));
  const run = async (p: ManagedProcess) => {
    const t0 = Date.now();
    started.push(p);
    const starting = p.start();
    recordPids();
    await starting;
    log(`${p.spec.name} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (log ${p.spec.logFile})`);
  };

  try {
    const ports: Ports = await freePortsFor(['etcdClient', 'etcdPeer', 'managementApi', 'guestApi', 'scheduler', 'controllerManager', 'kwok', 'moto']);

    const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
    await run(etcdProcess(binaries, dir, logDir, ports));

    const [managementPki, guestPki] = await Promise.all([createClusterPki(join(dir, 'management', 'pki')), createClusterPki(join(dir, 'guest', 'pki'))]);
    const managementServer = `https://127.0.0.1:${ports.managementApi}`;
    const guestServer = `https://127.0.0.1:${ports.guestApi}`;
    // Both API servers start together: each takes 10-30 s on 2 cores, mostly waiting.
    // the management API server keeps an audit log of ServiceAccounts' requests: what the
    // workers' own identity did there, and whether RBAC let it (worker-rbac.test.ts)
    const managementAudit = serviceAccountAudit(logDir, 'kube-apiserver-management');
    const managementApiserver = kubeApiserver({ name: 'kube-apiserver-management', binary: binaries.kubeApiserver, pki: managementPki, port: ports.managementApi, etcdUrl, etcdPrefix: '/management', logDir, audit: managementAudit });
    const guestApiserver = kubeApiserver({ name: 'kube-apiserver-guest', binary: binaries.kubeApiserver, pki: guestPki, port: ports.guestApi, etcdUrl, etcdPrefix: '/guest', logDir });
    await Promise.all([run(managementApiserver), run(guestApiserver)]);

    const admin = (pki: ClusterPki, server: string, cluster: 'management' | 'guest') =>
      writeIdentityKubeconfig({ pki, server, clusterName: cluster, user: 'admin', groups: ['system:masters'], path: join(dir, cluster, 'admin.kubeconfig') });
    const managementKubeconfig = await admin(managementPki, managementServer, 'management');
    const guestKubeconfig = await admin(guestPki, guestServer, 'guest');

    const guestComponents = await guestNodeComponents({ binaries, dir, logDir, ports, pki: guestPki, server: guestServer, adminKubeconfig: guestKubeconfig });
    // The management cluster plays HyperShift's part: it serves HostedClusters
    // (k8s/management/hostedcluster-crd.yaml), installed while the guest's components start.
    const managementCrds = async () => {
      const t0 = Date.now();
      await installManagementCrds(managementKubeconfig);
      log(`management CRDs (HostedCluster) established in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    };
    await Promise.all([...guestComponents.map(run), managementCrds()]);

    await run(motoProcess(binaries, logDir, ports));

    const t0 = Date.now();
    temporal = await startTemporal({
      binary: binaries.temporal,
      ...(productionTemporal ? { production: productionTemporal, historyShards: temporalChoice.AUTONODE_TEMPORAL_HISTORY_SHARDS } : {}),
      log,
      started: (p) => {
        started.push(p);
        recordPids();
      },
      address: env.TEMPORAL_ADDRESS,
      namespace: env.TEMPORAL_NAMESPACE,
      dir,
      logDir,
      ...(options.temporalDynamicConfig ? { dynamicConfig: options.temporalDynamicConfig } : {}),
      ...(options.temporalUiCodecEndpoint ? { uiCodecEndpoint: options.temporalUiCodecEndpoint } : {}),
    });
    log(`temporal ${temporal.server === 'external' ? `at ${temporal.address}` : `${temporal.server} server`} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);

    const info: StackInfo = StackInfoSchema.parse({
      dir,
      temporal: { address: temporal.address, namespace: temporal.namespace, uiUrl: temporal.uiUrl, managed: temporal.managed, server: temporal.server, ...(temporal.metricsUrl ? { metricsUrl: temporal.metricsUrl } : {}), ...(temporal.metricsUrls ? { metricsUrls: temporal.metricsUrls } : {}) },
      ec2: { endpoint: `http://127.0.0.1:${ports.moto}`, region },
      management: { name: 'management', server: managementServer, kubeconfigPath: managementKubeconfig, etcdPrefix: '/management', auditLogPath: managementAudit.logPath },
      guest: {
        name: 'guest',
        server: guestServer,
        kubeconfigPath: guestKubeconfig,
        etcdPrefix: '/guest',
        clientCaCertPath: guestPki.files.clientCaCert,
        servingCaCertPath: guestPki.files.servingCaCert,
      },
    });
    const infoFile = join(dir, 'stack.json');
    writeFileSync(infoFile, JSON.stringify(info, null, 2));
    const stack = new LocalStack(info, infoFile, started, async () => temporal?.close());
    return stack;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export function etcdProcess(binaries: StackBinaries, dir: string, logDir: string, ports: Pick<Ports, 'etcdClient' | 'etcdPeer'>, name = 'etcd'): ManagedProcess {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return new ManagedProcess({
    name,
    command: binaries.etcd,
    args: [
      `--data-dir=${join(dir, name)}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      // test data: durability buys nothing and fsync dominates latency on shared disks
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    logFile: join(logDir, `${name}.log`),
    ready: () => answers200(`${client}/health`),
    startTimeoutMs: 60_000,
  });
}

/**
 * The guest cluster's node-side control plane. The controller-manager signs CSRs with the
 * client CA but its own approver is off (`-csrapproving`), so only autonode can approve a
 * kubelet's certificate. Each component runs as its own least-privileged identity.
 */
export async function guestNodeComponents(o: {
  binaries: StackBinaries;
  dir: string;
  logDir: string;
  ports: Pick<Ports, 'scheduler' | 'controllerManager' | 'kwok'>;
  pki: ClusterPki;
  server: string;
  adminKubeconfig: string;
  /** the cluster's name in file, log and process names (default `guest`; a second guest needs its own) */
  name?: string;
}): Promise<ManagedProcess[]> {
  const name = o.name ?? 'guest';
  const identity = (user: string) =>
    writeIdentityKubeconfig({ pki: o.pki, server: o.server, clusterName: name, user, path: join(o.dir, name, `${user.replace(/:/g, '-')}.kubeconfig`) });
  const kcm = await identity('system:kube-controller-manager');
  const scheduler = await identity('system:kube-scheduler');
  return [
    new ManagedProcess({
      name: `kube-controller-manager-${name}`,
      command: o.binaries.kubeControllerManager,
      args: [
        `--kubeconfig=${kcm}`,
        `--authentication-kubeconfig=${kcm}`,
        `--authorization-kubeconfig=${kcm}`,
        '--use-service-account-credentials=true',
        '--controllers=*,-csrapproving',
        // a Deployment's pods appear as fast as a real control plane makes them (default 20 QPS
        // makes 200 replicas take 10 s, and 5,000 over 4 minutes)
        '--kube-api-qps=200',
        '--kube-api-burst=400',
        `--cluster-signing-cert-file=${o.pki.files.clientCaCert}`,
        `--cluster-signing-key-file=${o.pki.files.clientCaKey}`,
        `--root-ca-file=${o.pki.files.servingCaCert}`,
        `--service-account-private-key-file=${o.pki.files.serviceAccountKey}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${o.ports.controllerManager}`,
        `--cert-dir=${join(o.dir, name, 'kcm-serving')}`,
        '--v=1',
      ],
      logFile: join(o.logDir, `kube-controller-manager-${name}.log`),
      ready: () => answers200(`https://127.0.0.1:${o.ports.controllerManager}/healthz`, { insecure: true }),
      startTimeoutMs: 90_000,
    }),
    new ManagedProcess({
      name: `kube-scheduler-${name}`,
      command: o.binaries.kubeScheduler,
      args: [
        `--kubeconfig=${scheduler}`,
        `--authentication-kubeconfig=${scheduler}`,
        `--authorization-kubeconfig=${scheduler}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${o.ports.scheduler}`,
        // binds and marks pods Unschedulable at a real control plane's pace (default 50 QPS)
        '--kube-api-qps=200',
        '--kube-api-burst=400',
        `--cert-dir=${join(o.dir, name, 'scheduler-serving')}`,
        '--v=1',
      ],
      logFile: join(o.logDir, `kube-scheduler-${name}.log`),
      ready: () => answers200(`https://127.0.0.1:${o.ports.scheduler}/healthz`, { insecure: true }),
      startTimeoutMs: 90_000,
    }),
    new ManagedProcess({
      name: `kwok-${name}`,
      command: o.binaries.kwok,
      args: [
        `--kubeconfig=${o.adminKubeconfig}`,
        '--manage-all-nodes=false',
        // only Nodes the simulated kubelet registers for a launched instance
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        '--manage-nodes-with-label-selector=',
        '--manage-single-node=',
        // pod IPs for every pod the tests and benchmarks run at once (a /24 holds 254)
        '--cidr=10.128.0.1/16',
        '--node-ip=10.0.0.1',
        '--node-lease-duration-seconds=40',
        `--server-address=127.0.0.1:${o.ports.kwok}`,
      ],
      logFile: join(o.logDir, `kwok-${name}.log`),
      ready: () => answers200(`http://127.0.0.1:${o.ports.kwok}/healthz`),
      startTimeoutMs: 60_000,
    }),
  ];
}

/**
 * moto, with one addition to the AMIs it ships: the node images a release names
 * (release-amis.json), so manifests that select the release's AMI by id — seed 000's
 * EC2NodeClass — work verbatim. Appended to moto's own list before any region loads it
 * (MOTO_AMIS_PATH would replace the list, and drop the regional ones tests use).
 */
function motoProcess(binaries: StackBinaries, logDir: string, ports: Ports): ManagedProcess {
  const script = [
    'import json, os, sys',
    'import moto.ec2.models.amis as amis',
    "amis.AMIS.extend(json.load(open(os.environ['AUTONODE_RELEASE_AMIS'], encoding='utf-8')))",
    'from moto.server import main',
    'main(sys.argv[1:])',
  ].join('\n');
  return new ManagedProcess({
    name: 'moto',
    command: join(dirname(binaries.motoServer), 'python'),
    args: ['-c', script, '-H', '127.0.0.1', '-p', String(ports.moto)],
    // moto answers every region; the fixed fake credentials here are moto's, not AWS's.
    env: { MOTO_ALLOW_NONEXISTENT_REGION: 'false', AUTONODE_RELEASE_AMIS: join(__dirname, 'release-amis.json') },
    logFile: join(logDir, 'moto.log'),
    ready: () => answers200(`http://127.0.0.1:${ports.moto}/moto-api/`),
    startTimeoutMs: 60_000,
  });
}
