// `npm run scale:idle`: N NodeClaim workflows parked in steady state on one worker process,
// and what that process costs at rest (RSS, CPU). Not part of `npm test`: it prints figures.
//
// The worker is the real one — `workers/main.ts` in its own process, polling the control
// queue with the real workflow code and activities — and each workflow is the real
// nodeClaimWorkflow, started the way continue-as-new restarts a steady claim: with the
// carried-over state `Initialized` (claim facts, instance, node name). Its first task
// decides "steady → wait", upserts its search attributes and arms a timer of
// `--resync` (default 24h), so no activity runs: what is left is timers and the cache.
//
//   npm run scale:idle                                   10,000 workflows, dev server
//   npm run scale:idle -- --workflows 2000 --rest 120    a smaller, shorter run
//   AUTONODE_TEMPORAL=production npm run scale:idle      PostgreSQL + the Temporal server build
//   TEMPORAL_ADDRESS=host:7233 npm run scale:idle        an existing cluster (the workflows are terminated at the end)
//   ... -- --cache 10000                                 AUTONODE_MAX_CACHED_WORKFLOWS for the worker
//   ... -- --worker-heap-mb 1024                         the worker's V8 heap limit (--max-old-space-size; the SDK's
//                                                        default cache follows it: 600 workflows per GiB above 200 MiB)
//   ... -- --prebuilt-bundle                             (--worker source) the worker loads a bundle built here
//                                                        (AUTONODE_WORKFLOW_BUNDLE) instead of running webpack itself
//
// Without --worker, the worker is the one that ships: the shipped code built as `npm run build`
// builds it (tsc, then dist/workers/bundle.js writing the workflow bundles beside it), into
// .autonode/scale-idle-build-<pid>/, run as the Deployment in k8s/worker/worker.yaml runs it —
// `node dist/workers/main.js` with that container's literal env (NODE_OPTIONS: the heap limit;
// the workflow cache then follows it). --cache and --worker-heap-mb override those two.
// `--worker source` runs workers/main.ts through tsx instead, with Node's defaults.
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { Command } from 'commander';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { nodeClaimWorkflowId, type NodeClaimWorkflowInput } from '../../core/lifecycle';
import type { NodeClaimCarryOver } from '../../workflows/nodeclaim';
import { resolveBinaries, resolveProductionTemporal } from '../../dev/stack/binaries';
import { freePortsFor } from '../../dev/stack/ports';
import type { ManagedProcess } from '../../dev/stack/process';
import { startTemporal } from '../../dev/stack/temporal';
import { projectRoot } from '../../dev/paths';
import { buildShippedWorker, shippedWorkerEnvOfCheckout } from '../support/shipped-worker';
import { workflowCacheSize } from '../../workers/sizing';
import { clockTicksPerSecond, parseProcStat } from './process-cpu';
import { rssMiBFromStatus } from './scale-checks';

const say = (line: string) => process.stderr.write(`[scale] ${new Date().toISOString().slice(11, 19)} ${line}\n`);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLOCK_TICKS = clockTicksPerSecond();

interface Options {
  workflows: number;
  rest: number;
  resync: string;
  concurrency: number;
  cache: number | undefined;
  prebuiltBundle: boolean;
  steadyTimeout: number;
  workerHeapMb: number | undefined;
  server: 'dev' | 'production';
  worker: 'shipped' | 'source';
}

function parseOptions(argv: readonly string[]): Options {
  const program = new Command('scale-idle')
    .option('--workflows <n>', 'steady NodeClaim workflows to park', '10000')
    .option('--rest <seconds>', 'how long to measure the worker at rest', '180')
    .option('--resync <duration>', 'the steady re-check timer each workflow waits on', '24h')
    .option('--concurrency <n>', 'workflow starts in flight', '64')
    .option('--cache <n>', 'the worker\'s AUTONODE_MAX_CACHED_WORKFLOWS (default: the SDK\'s)')
    .option('--worker-heap-mb <n>', 'the worker process\'s --max-old-space-size (default: Node\'s)')
    .option('--steady-timeout <seconds>', 'how long to wait for every workflow to reach steady state', '1200')
    .option('--prebuilt-bundle', 'with --worker source: build the workflow bundle here and hand it to the worker', false)
    .option('--worker <kind>', 'shipped (built as npm run build does, run as k8s/worker/worker.yaml runs it) | source (workers/main.ts through tsx)', 'shipped')
    .option('--server <kind>', 'dev | production (default AUTONODE_TEMPORAL, else dev); ignored with TEMPORAL_ADDRESS')
    .parse([...argv], { from: 'node' });
  const o = program.opts<{ workflows: string; rest: string; resync: string; concurrency: string; cache?: string; prebuiltBundle: boolean; steadyTimeout: string; workerHeapMb?: string; server?: string; worker: string }>();
  if (o.worker !== 'shipped' && o.worker !== 'source') throw new Error(`--worker must be shipped or source, not ${o.worker}`);
  if (o.worker === 'shipped' && o.prebuiltBundle) throw new Error('--prebuilt-bundle is for --worker source: the shipped build has its bundle');
  const server = o.server ?? process.env.AUTONODE_TEMPORAL ?? 'dev';
  if (server !== 'dev' && server !== 'production') throw new Error(`--server must be dev or production, not ${server}`);
  const int = (name: string, value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not ${value}`);
    return n;
  };
  return {
    workflows: int('workflows', o.workflows),
    rest: int('rest', o.rest),
    resync: o.resync,
    concurrency: Math.max(1, int('concurrency', o.concurrency)),
    cache: o.cache === undefined ? undefined : int('cache', o.cache),
    prebuiltBundle: o.prebuiltBundle,
    steadyTimeout: int('steady-timeout', o.steadyTimeout),
    workerHeapMb: o.workerHeapMb === undefined ? undefined : int('worker-heap-mb', o.workerHeapMb),
    server,
    worker: o.worker,
  };
}

/** One reading of a process from /proc: resident memory and CPU time used so far. */
interface Reading {
  at: number;
  rssMiB: number;
  cpuSeconds: number;
}

function read(pid: number): Reading {
  const rssMiB = rssMiBFromStatus(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? NaN;
  const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return { at: Date.now(), rssMiB, cpuSeconds: (stat?.cpuTicks ?? NaN) / CLOCK_TICKS };
}

interface Window {
  seconds: number;
  cpuPercentOfCore: number;
  rssMiB: { min: number; mean: number; max: number };
}

/** Samples every 5 s for `seconds`: CPU as a share of one core over the window, RSS min/mean/max. */
async function measure(pid: number, seconds: number): Promise<Window> {
  const readings = [read(pid)];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    await delay(Math.min(5_000, Math.max(0, end - Date.now())));
    readings.push(read(pid));
  }
  const first = readings[0]!;
  const last = readings[readings.length - 1]!;
  const rss = readings.map((r) => r.rssMiB);
  return {
    seconds: (last.at - first.at) / 1000,
    cpuPercentOfCore: (100 * (last.cpuSeconds - first.cpuSeconds)) / ((last.at - first.at) / 1000),
    rssMiB: { min: Math.min(...rss), mean: rss.reduce((a, b) => a + b, 0) / rss.length, max: Math.max(...rss) },
  };
}

/** The V8 heap limit (MiB) a process started with these NODE_OPTIONS gets. */
function heapLimitUnder(nodeOptions: string | undefined): number {
  const out = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { env: { ...process.env, NODE_OPTIONS: nodeOptions ?? '' }, encoding: 'utf8' });
  return Number(out) / 1024 / 1024;
}

/** The worker process, as deployed: control queue only, nothing it could reach but Temporal. */
async function startWorker(o: {
  address: string;
  namespace: string;
  taskQueue: string;
  dir: string;
  /** `node <entry>` (a built dist/workers/main.js) or workers/main.ts through tsx */
  entry: { kind: 'built'; main: string } | { kind: 'source' };
  /** env of the shipped Deployment, below what the run sets itself */
  baseEnv: Record<string, string>;
  cache: number | undefined;
  bundle: string | undefined;
  heapMb: number | undefined;
}): Promise<{ child: ChildProcess; sdkMetricsUrl: string }> {
  const { sdkMetrics } = await freePortsFor(['sdkMetrics']);
  const log = openSync(join(o.dir, 'worker.log'), 'a');
  const heap = o.heapMb !== undefined ? [`--max-old-space-size=${o.heapMb}`] : [];
  const args = o.entry.kind === 'built' ? [...heap, o.entry.main] : [...heap, '-r', 'tsx/cjs', join(projectRoot(), 'workers', 'main.ts')];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot(),
    env: {
      ...process.env,
      ...o.baseEnv,
      // a command-line --max-old-space-size wins over NODE_OPTIONS'
      TEMPORAL_ADDRESS: o.address,
      TEMPORAL_NAMESPACE: o.namespace,
      AUTONODE_WORKER_QUEUES: 'control',
      AUTONODE_TASK_QUEUE_CONTROL: o.taskQueue,
      // Steady workflows run no activity: these are never read, but the worker needs a
      // resolver to start. Nothing listens on port 9.
      AUTONODE_GUEST_KUBECONFIG: join(o.dir, 'no-guest.kubeconfig'),
      AWS_ENDPOINT_URL_EC2: 'http://127.0.0.1:9',
      AUTONODE_ISOLATED_VPC: 'true',
      AUTONODE_METRICS_PORT: '0',
      AUTONODE_TEMPORAL_METRICS_PORT: String(sdkMetrics),
      AUTONODE_METRICS_HOST: '127.0.0.1',
      AUTONODE_LOG_LEVEL: 'warn',
      ...(o.cache !== undefined ? { AUTONODE_MAX_CACHED_WORKFLOWS: String(o.cache) } : {}),
      ...(o.bundle !== undefined ? { AUTONODE_WORKFLOW_BUNDLE: o.bundle } : {}),
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  return { child, sdkMetricsUrl: `http://127.0.0.1:${sdkMetrics}/metrics` };
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000}s`);
    await delay(1_000);
  }
}

/** Gauges and counters of the SDK's Prometheus exporter whose names contain one of `names`. */
async function sdkMetrics(url: string, names: readonly string[]): Promise<string[]> {
  const text = await (await fetch(url)).text();
  return text.split('\n').filter((line) => !line.startsWith('#') && names.some((n) => line.startsWith(n)));
}

function steadyClaim(cluster: string, i: number, taskQueue: string, resync: string): { input: NodeClaimWorkflowInput; carried: NodeClaimCarryOver; id: string } {
  const name = `idle-${String(i).padStart(5, '0')}`;
  const instanceId = `i-${(0x1000000 + i).toString(16).padStart(17, '0')}`;
  return {
    id: nodeClaimWorkflowId(cluster, name),
    input: {
      cluster: { name: cluster, region: 'us-east-1' },
      taskQueues: { control: taskQueue, cloud: `${taskQueue}-cloud`, packing: `${taskQueue}-packing` },
      nodeClaim: { name, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
      timeouts: { steadyResync: resync },
    },
    carried: {
      state: {
        phase: 'Initialized',
        claim: { nodePool: 'default' },
        instance: {
          providerId: `aws:///us-east-1a/${instanceId}`,
          instanceId,
          instanceType: 'c6a.large',
          zone: 'us-east-1a',
          capacityType: 'spot',
          imageId: 'ami-00722494a4a3fa2af',
          privateDnsName: `ip-10-0-${(i >> 8) & 255}-${i & 255}.ec2.internal`,
          privateIpAddresses: [`10.0.${(i >> 8) & 255}.${i & 255}`],
          launchTime: '2026-01-01T00:00:00.000Z',
        },
        nodeName: `ip-10-0-${(i >> 8) & 255}-${i & 255}.ec2.internal`,
      },
      timings: {},
    },
  };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dir = mkdtempSync(join(tmpdir(), 'autonode-stack-'));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(dir, 'no-guest.kubeconfig'), '');
  // inside the checkout (gitignored .autonode/), so the built code finds node_modules
  const buildDir = join(projectRoot(), '.autonode', `scale-idle-build-${process.pid}`);
  const processes: ManagedProcess[] = [];
  // recorded as the launcher does, so a run killed half-way is reaped by the next stack start
  const recordPids = () => writeFileSync(join(dir, 'pids.json'), JSON.stringify({ owner: process.pid, ...Object.fromEntries(processes.map((p) => [p.spec.name, p.pid])) }));
  let worker: ChildProcess | undefined;
  const stopAll = async () => {
    if (worker && worker.exitCode === null) {
      worker.kill('SIGTERM');
      await Promise.race([new Promise((r) => worker?.once('exit', r)), delay(20_000)]);
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    }
    for (const p of [...processes].reverse()) await p.stop();
    rmSync(join(dir, 'pids.json'), { force: true });
    // the production server's database and the bundle; the logs stay
    rmSync(join(dir, 'postgres'), { recursive: true, force: true });
    rmSync(join(dir, 'workflow-bundle.js'), { force: true });
    rmSync(buildDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));

  const external = process.env.TEMPORAL_ADDRESS;
  const server = external ? 'external' : options.server;
  try {
    // the worker as shipped: built like `npm run build`, the Deployment's env
    const shippedEnv = options.worker === 'shipped' ? shippedWorkerEnvOfCheckout() : {};
    if (options.worker === 'shipped') {
      const t0 = Date.now();
      say(`building the shipped code into ${buildDir} (tsc -p tsconfig.build.json, then workers/bundle.js)`);
      buildShippedWorker(buildDir);
      say(`built in ${fmt((Date.now() - t0) / 1000)}s; the Deployment's env: ${Object.entries(shippedEnv).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    }
    const nodeOptions = options.workerHeapMb !== undefined ? `--max-old-space-size=${options.workerHeapMb}` : options.worker === 'shipped' ? shippedEnv.NODE_OPTIONS : process.env.NODE_OPTIONS;
    const workerHeapLimit = heapLimitUnder(nodeOptions);
    const cacheSetting = options.cache ?? (shippedEnv.AUTONODE_MAX_CACHED_WORKFLOWS !== undefined ? Number(shippedEnv.AUTONODE_MAX_CACHED_WORKFLOWS) : undefined);
    const cache = cacheSetting ?? workflowCacheSize({ heapLimitMiB: workerHeapLimit });
    say(`Temporal: ${external ? `existing server at ${external}` : `${server} server (starting)`}; logs in ${logDir}`);
    const temporal = await startTemporal({
      binary: external ? undefined : resolveBinaries(process.env).temporal,
      ...(server === 'production' ? { production: resolveProductionTemporal(process.env), historyShards: Number(process.env.AUTONODE_TEMPORAL_HISTORY_SHARDS ?? 4) } : {}),
      log: say,
      started: (p) => {
        processes.push(p);
        recordPids();
      },
      address: external,
      namespace: process.env.TEMPORAL_NAMESPACE,
      dir,
      logDir,
    });
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace });
    const cluster = `scale-idle-${Date.now().toString(36)}`;
    const taskQueue = `autonode-control-${cluster}`;

    let bundle: string | undefined;
    if (options.prebuiltBundle) {
      const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: say, error: say } });
      bundle = join(dir, 'workflow-bundle.js');
      writeFileSync(bundle, code);
    }
    const started = await startWorker({
      address: temporal.address,
      namespace: temporal.namespace,
      taskQueue,
      dir: logDir,
      entry: options.worker === 'shipped' ? { kind: 'built', main: join(buildDir, 'workers', 'main.js') } : { kind: 'source' },
      baseEnv: shippedEnv,
      cache: options.cache,
      bundle,
      heapMb: options.workerHeapMb,
    });
    say(`worker: ${options.worker === 'shipped' ? 'as shipped (built, the Deployment\'s env)' : 'from source'}; heap limit ${fmt(workerHeapLimit, 0)} MiB (NODE_OPTIONS ${nodeOptions ?? 'unset'}), workflow cache ${cache}${cacheSetting === undefined ? ' (the worker\'s default, from the heap limit)' : ''}`);
    worker = started.child;
    const pid = worker.pid;
    if (pid === undefined) throw new Error('the worker process did not start');
    const workerUp = await waitFor('worker polling its queue', 120_000, async () => {
      const queue = await connection.workflowService.describeTaskQueue({ namespace: temporal.namespace, taskQueue: { name: taskQueue }, taskQueueType: 1 });
      return queue.pollers.length > 0;
    });
    say(`worker pid ${pid} polling ${taskQueue} after ${fmt(workerUp / 1000)}s`);
    await delay(10_000);
    const empty = await measure(pid, 30);
    say(`empty worker at rest: RSS ${fmt(empty.rssMiB.mean)} MiB, CPU ${fmt(empty.cpuPercentOfCore, 2)}% of a core`);

    // Start N steady claims. Each start is a real StartWorkflowExecution; its first task runs on the worker.
    const beforeStart = read(pid);
    // the peak on the way (starts and first tasks): what a pod's memory limit must allow
    let peakRssMiB = beforeStart.rssMiB;
    const sampler = setInterval(() => {
      try {
        peakRssMiB = Math.max(peakRssMiB, read(pid).rssMiB);
      } catch {
        // the worker exited: the run reports it below
      }
    }, 2_000);
    const t0 = Date.now();
    const limit = pLimit(options.concurrency);
    let done = 0;
    await Promise.all(
      Array.from({ length: options.workflows }, (_, i) =>
        limit(async () => {
          const claim = steadyClaim(cluster, i, taskQueue, options.resync);
          await client.workflow.start('nodeClaimWorkflow', { taskQueue, workflowId: claim.id, args: [claim.input, claim.carried] });
          if (++done % 1000 === 0) say(`${done} started (${fmt(done / ((Date.now() - t0) / 1000))}/s)`);
        }),
      ),
    );
    const startSeconds = (Date.now() - t0) / 1000;
    say(`${options.workflows} workflows started in ${fmt(startSeconds)}s (${fmt(options.workflows / startSeconds)}/s)`);

    // Steady: every workflow has run its first task (it upserts AutoNodePhase=Initialized there).
    const query = `AutoNodeCluster = "${cluster}" AND AutoNodePhase = "Initialized" AND ExecutionStatus = "Running"`;
    // A worker that cannot keep up is a result too: measure what was reached, and say so.
    let steadyCount = 0;
    let progressAt = Date.now();
    const steadyAfter = await waitFor('every workflow steady (visibility)', options.steadyTimeout * 1000, async () => {
      steadyCount = (await client.workflow.count(query)).count;
      if (Date.now() - progressAt >= 60_000) {
        progressAt = Date.now();
        say(`${steadyCount} steady; worker RSS ${fmt(read(pid).rssMiB)} MiB (peak so far ${fmt(peakRssMiB)})`);
      }
      return steadyCount >= options.workflows;
    }).catch((err: unknown) => {
      say(`${err instanceof Error ? err.message : String(err)}: ${steadyCount} of ${options.workflows} steady; measuring anyway`);
      return undefined;
    });
    clearInterval(sampler);
    const afterStart = read(pid);
    const firstTaskCpuMs = (1000 * (afterStart.cpuSeconds - beforeStart.cpuSeconds)) / Math.max(1, steadyCount);
    say(`${steadyCount} steady ${steadyAfter === undefined ? '(not all!)' : `${fmt(steadyAfter / 1000)}s after the last start`}; worker CPU ${fmt(firstTaskCpuMs, 2)} ms per steady workflow (start to steady), RSS ${fmt(afterStart.rssMiB)} MiB (peak on the way ${fmt(peakRssMiB)})`);

    await delay(30_000);
    say(`measuring the worker at rest for ${options.rest}s`);
    const rest = await measure(pid, options.rest);
    const stillSteady = (await client.workflow.count(query)).count;
    const heap = await sdkMetrics(started.sdkMetricsUrl, ['temporal_sticky_cache_size', 'temporal_workflow_task_execution_latency_seconds_count', 'temporal_activity_execution_latency_seconds_count', 'temporal_workflow_active_thread_count']);

    const result = {
      server,
      workflows: options.workflows,
      steadyResync: options.resync,
      worker: options.worker === 'shipped' ? 'as shipped (npm run build, k8s/worker/worker.yaml env)' : 'from source (tsx)',
      maxCachedWorkflows: cacheSetting === undefined ? `${cache} (the worker's default from its heap limit)` : cache,
      workflowBundle: options.worker === 'shipped' ? 'pre-built by the build (dist/workflow-bundle.js)' : options.prebuiltBundle ? 'pre-built' : 'bundled by the worker at start',
      workerHeapMb: `${fmt(workerHeapLimit, 0)} (V8's limit; NODE_OPTIONS ${nodeOptions ?? 'unset'})`,
      startsPerSecond: Number(fmt(options.workflows / startSeconds)),
      steadyBeforeRest: steadyCount,
      secondsFromLastStartToAllSteady: steadyAfter === undefined ? null : Number(fmt(steadyAfter / 1000)),
      rssMiBWhenSteady: Number(fmt(afterStart.rssMiB)),
      peakRssMiBOnTheWay: Number(fmt(Math.max(peakRssMiB, afterStart.rssMiB))),
      workerCpuMsPerWorkflowToSteady: Number(fmt(firstTaskCpuMs, 2)),
      emptyWorker: { rssMiB: Number(fmt(empty.rssMiB.mean)), cpuPercentOfCore: Number(fmt(empty.cpuPercentOfCore, 2)) },
      atRest: {
        seconds: Number(fmt(rest.seconds, 0)),
        rssMiB: { min: Number(fmt(rest.rssMiB.min)), mean: Number(fmt(rest.rssMiB.mean)), max: Number(fmt(rest.rssMiB.max)) },
        cpuPercentOfCore: Number(fmt(rest.cpuPercentOfCore, 2)),
      },
      steadyAfterRest: stillSteady,
      sdkMetrics: heap,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      [
        '',
        `idle scale (${server} Temporal): ${options.workflows} steady NodeClaim workflows on one worker process (cache ${result.maxCachedWorkflows}, heap ${result.workerHeapMb}, bundle ${result.workflowBundle})`,
        `  started at ${result.startsPerSecond}/s; all steady ${result.secondsFromLastStartToAllSteady ?? 'NOT'} s after the last start; worker CPU to steady: ${result.workerCpuMsPerWorkflowToSteady} ms per workflow; RSS peak on the way ${result.peakRssMiBOnTheWay} MiB`,
        `  empty worker:  RSS ${result.emptyWorker.rssMiB} MiB, CPU ${result.emptyWorker.cpuPercentOfCore}% of a core`,
        `  at rest (${result.atRest.seconds}s): RSS ${result.atRest.rssMiB.mean} MiB (max ${result.atRest.rssMiB.max}), CPU ${result.atRest.cpuPercentOfCore}% of a core`,
        `  goal: RSS < 1024 MiB, CPU < 5% of a core; still steady after the window: ${stillSteady}/${options.workflows}`,
        '',
      ].join('\n'),
    );

    if (external) {
      say('terminating the workflows on the existing server');
      const terminate = pLimit(options.concurrency);
      await Promise.all(
        Array.from({ length: options.workflows }, (_, i) => terminate(() => client.workflow.getHandle(steadyClaim(cluster, i, taskQueue, options.resync).id).terminate('scale:idle done'))),
      );
    }
    await connection.close();
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`scale:idle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
