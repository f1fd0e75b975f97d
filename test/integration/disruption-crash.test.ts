// A worker killed in the middle of a disruption command resumes it (issue 15, "Crashes"):
// no candidate is drained before its replacement is Initialized, no replacement is
// launched twice, and nothing is leaked or left tainted.
//
// The killed workers are real child processes (`workers/main.ts`) polling the control
// queue (the disruption, watch, provisioner and NodeClaim workflows, and the Kubernetes
// activities) and the packing queue (the replacements' createClaims). The harness's
// in-process workers poll only the cloud queue, so nothing takes over silently while a
// child is alive. Each child reaches the guest API server through a TCP proxy, slowed when
// the test must catch a moment between two of its requests and frozen just before the kill.
//
// One NodePool, two nodes, a template change: both nodes drift and are replaced one at a
// time (budget nodes: "1"). Worker A is killed the moment the first replacement's NodeClaim
// exists (createClaims had not heard back); worker B takes over and is killed while the
// second command waits for its old node to drain; worker C finishes. Then a third
// command's replacement cannot launch (no capacity): C is killed as it is created, and the
// in-process worker that takes over gives the command up and takes the taint back.
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type StoredNodeClaim } from '../../core/api/nodeclaim';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { BATCH_LABEL } from '../../core/provisioning';
import { type DisruptionStatus } from '../../workflows/disruption';
import { watchWorkflowId } from '../../workflows/watch';
import { activityCalls } from '../support/histories';
import { ZONES } from '../support/cloud';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

jest.setTimeout(420_000);

const REPO = join(__dirname, '..', '..');
const DISRUPTED_TAINT = 'karpenter.sh/disrupted';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface WorkerProcess {
  label: string;
  child: ChildProcess;
  proxy: TcpProxy;
  log: string;
}

/** What the test saw of each of the pool's claims, polled: a claim deleted between two polls still left its timestamps. */
interface ClaimSeen {
  deletionTimestamp?: string;
  initializedAt?: string;
  nodeName?: string;
}

const StartCommandInput = z.object({ command: z.object({ candidates: z.array(z.object({ nodeClaim: z.string() })) }) });
const CreateClaimsInput = z.object({ claims: z.array(z.object({ name: z.string() })) });

const initializedAt = (c: StoredNodeClaim) => c.status?.conditions?.find((x) => x.type === 'Initialized' && x.status === 'True')?.lastTransitionTime;
const isInitialized = (c: StoredNodeClaim) => initializedAt(c) !== undefined;
/** API timestamps have whole seconds (deletionTimestamp) or more: compare at the second */
const atSecond = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe('disruption: a worker killed mid-command (real processes, real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;
  const workers: WorkerProcess[] = [];
  // filled by the recorder loop below
  const seen = new Map<string, ClaimSeen>();
  const servingGaps: string[] = [];
  let fewestRunning = Number.POSITIVE_INFINITY;
  let recording = false;
  let recorder: Promise<void> | undefined;
  let originals: string[] = [];

  beforeAll(async () => {
    // In-process: the cloud queue only (launch, terminate). Control and packing run in the children.
    lh = await startLifecycleHarness({ run: ['cloud'] });
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `dcrash-${lh.id}`;
    pool = `dcrash-${lh.id}`;
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', { taskQueue: lh.taskQueues.control, workflowId: watchWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }] });
    await lh.t.client.workflow.start('disruptionWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: disruptionWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, pollInterval: '2s', validationDelay: '3s' }],
    });
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: pool },
        spec: {
          // drift only: no emptiness or consolidation command competes with it
          disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] },
          template: {
            metadata: { labels: { 'example.com/rev': '1' } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              // m5.large: one 1500m pod per node
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  });

  afterAll(async () => {
    recording = false;
    await recorder;
    for (const w of workers) {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await w.proxy.close();
    }
    // the pods first: Pending pods of a pool that is about to go would be the next file's to plan
    await lh?.guest.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await lh?.close();
  });

  /** A control + packing worker as operators run it (`workers/main.ts`), reaching the guest through its own proxy. */
  async function spawnWorker(label: string): Promise<WorkerProcess> {
    const stack = loadStackInfo();
    const guestServer = new URL(stack.guest.server);
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(guestServer.port) });
    const kubeconfig = join(stack.dir, `dcrash-${lh.id}-${label}.kubeconfig`);
    const text = readFileSync(lh.autonodeKubeconfigPath, 'utf8');
    if (!text.includes(guestServer.host)) throw new Error(`the autonode kubeconfig does not name ${guestServer.host}`);
    writeFileSync(kubeconfig, text.split(guestServer.host).join(proxy.address), { mode: 0o600 });
    const log = join(stack.dir, `dcrash-${lh.id}-${label}.log`);
    const out = openSync(log, 'a');
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', join(REPO, 'workers', 'main.ts')], {
      cwd: REPO,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporal.address,
        TEMPORAL_NAMESPACE: stack.temporal.namespace,
        AUTONODE_GUEST_KUBECONFIG: kubeconfig,
        AWS_ENDPOINT_URL_EC2: lh.h.proxy.endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AUTONODE_WORKER_QUEUES: 'control,packing',
        AUTONODE_TASK_QUEUE_CONTROL: lh.taskQueues.control,
        AUTONODE_TASK_QUEUE_CLOUD: lh.taskQueues.cloud,
        AUTONODE_TASK_QUEUE_PACKING: lh.taskQueues.packing,
      },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    child.once('exit', (code) => {
      // killed by the test: expected; anything else explains a failure that follows
      if (code !== null) console.log(`worker ${label} exited with ${code}; its log (${log}):\n${readFileSync(log, 'utf8').split('\n').slice(-40).join('\n')}`);
    });
    const w = { label, child, proxy, log };
    workers.push(w);
    return w;
  }

  /** Nothing more reaches the guest from this worker, then SIGKILL. */
  async function kill(w: WorkerProcess): Promise<void> {
    if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`worker ${w.label} already exited (${w.child.exitCode ?? w.child.signalCode}); log ${w.log}`);
    w.proxy.freeze();
    const exited = new Promise<void>((resolve) => w.child.once('exit', () => resolve()));
    w.child.kill('SIGKILL');
    await exited;
  }

  const claimsOfPool = async () => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
  const podsOf = async () => (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=api' })).items;
  const disruption = () => lh.t.client.workflow.getHandle(disruptionWorkflowId(lh.h.cluster.name));
  /** the workflow's status, or undefined while no worker answers */
  const status = () => disruption().query<DisruptionStatus>('status').catch(() => undefined);

  /**
   * Polls the pool every 250 ms while the test runs: every claim's deletion and
   * initialization, and each moment the pool had fewer than two Initialized nodes not being
   * deleted (the two pods' room) — a candidate drained before its replacement was ready.
   */
  function recordPool() {
    recording = true;
    recorder = (async () => {
      while (recording) {
        try {
          const claims = await claimsOfPool();
          for (const c of claims) {
            const s = seen.get(c.metadata.name) ?? {};
            if (c.metadata.deletionTimestamp !== undefined && s.deletionTimestamp === undefined) s.deletionTimestamp = String(c.metadata.deletionTimestamp);
            const at = initializedAt(c);
            if (at !== undefined && s.initializedAt === undefined) s.initializedAt = String(at);
            if (c.status?.nodeName !== undefined) s.nodeName = c.status.nodeName;
            seen.set(c.metadata.name, s);
          }
          const serving = claims.filter((c) => isInitialized(c) && c.metadata.deletionTimestamp === undefined);
          if (serving.length < 2) servingGaps.push(`${new Date().toISOString()}: ${claims.map((c) => `${c.metadata.name}${isInitialized(c) ? '' : ' (not initialized)'}${c.metadata.deletionTimestamp ? ' (deleting)' : ''}`).join(', ')}`);
          const running = (await podsOf()).filter((p) => p.status?.phase === 'Running' && p.metadata?.deletionTimestamp === undefined).length;
          fewestRunning = Math.min(fewestRunning, running);
        } catch {
          // a slow or refused list: the next poll looks again
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
  }

  /** The disruption workflow's commands as its history has them: each one's candidates, and the replacement claims it created. */
  async function recordedCommands(): Promise<{ candidates: string[]; replacements: string[][]; createAttempts: number[] }> {
    const calls = await activityCalls(lh.t.client, disruptionWorkflowId(lh.h.cluster.name));
    const starts = calls.filter((c) => c.type === 'startCommand').map((c) => StartCommandInput.parse(c.input).command.candidates.map((x) => x.nodeClaim));
    const creates = calls.filter((c) => c.type === 'createClaims');
    return {
      candidates: starts.flat(),
      replacements: creates.map((c) => CreateClaimsInput.parse(c.input).claims.map((x) => x.name)),
      createAttempts: creates.map((c) => c.attempt ?? 0),
    };
  }

  /** Every EC2 instance this pool ever had, terminated ones too, counted per NodeClaim tag. */
  async function instancesPerClaim(): Promise<Map<string, number>> {
    const out = await lh.h.direct.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodepool', Values: [pool] }, { Name: `tag:kubernetes.io/cluster/${lh.h.cluster.name}`, Values: ['owned'] }] }));
    const counts = new Map<string, number>();
    for (const i of (out.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
      const claim = i.Tags?.find((t) => t.Key === 'karpenter.sh/nodeclaim')?.Value ?? '(untagged)';
      counts.set(claim, (counts.get(claim) ?? 0) + 1);
    }
    return counts;
  }

  let workerB: WorkerProcess;
  let workerC: WorkerProcess;
  let firstCandidate: string;
  let firstReplacement: string;

  it('killed as the first replacement is created: the next worker finishes that command with the same replacement, launched once, and drains the old node only after it is Initialized', async () => {
    const workerA = await spawnWorker('a');
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'api' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: {
              nodeSelector: { 'karpenter.sh/nodepool': pool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '1500m', memory: '512Mi' } } }],
            },
          },
        },
      },
    });
    const before = await eventually('two initialized nodes running the pods', async () => {
      const all = await claimsOfPool();
      const running = (await podsOf()).filter((p) => p.status?.phase === 'Running').length;
      return all.length === 2 && all.every(isInitialized) && running === 2 ? all : undefined;
    }, 240_000);
    originals = before.map((c) => c.metadata.name).sort();
    recordPool();

    const t0 = Date.now();
    await lh.guest.customObjects.patchClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: pool, body: { spec: { template: { metadata: { labels: { 'example.com/rev': '2' } } } } } }, mergePatch);
    // the first command has planned its replacement: slow worker A's guest traffic so the
    // test sees the replacement's NodeClaim before A hears that it was created
    const planned = await poll('the first command validating, its replacement planned', async () => {
      const s = await status();
      return s?.inFlight?.replacements?.length ? s.inFlight : undefined;
    }, 120_000, 100);
    workerA.proxy.setLatency(300);
    expect(planned.command).toEqual(expect.objectContaining({ method: 'drift', replace: true }));
    expect(planned.command.candidates).toHaveLength(1);
    expect(planned.replacements).toHaveLength(1);
    const candidate = planned.command.candidates[0]!.nodeClaim;
    firstCandidate = candidate;
    firstReplacement = planned.replacements![0]!;
    expect(originals).toContain(candidate);

    await poll('the replacement NodeClaim created', async () => (await lh.claims.get(firstReplacement)) !== undefined, 60_000);
    await kill(workerA);
    const killedAt = Date.now();
    // killed with the replacement made and not yet Initialized, the candidate untouched
    const atKill = await lh.claims.get(firstReplacement);
    expect(atKill && isInitialized(atKill)).toBe(false);
    expect((await lh.claims.get(candidate))?.metadata.deletionTimestamp).toBeUndefined();
    console.log(`worker A killed ${((killedAt - t0) / 1000).toFixed(1)} s after the template change, replacement ${firstReplacement} created, candidate ${candidate} untouched`);

    workerB = await spawnWorker('b');
    await eventually('the candidate gone and its replacement Initialized', async () => {
      const all = await claimsOfPool();
      const replacement = all.find((c) => c.metadata.name === firstReplacement);
      return !all.some((c) => c.metadata.name === candidate) && replacement && isInitialized(replacement) ? true : undefined;
    }, 240_000);
    console.log(`first command finished ${((Date.now() - killedAt) / 1000).toFixed(1)} s after worker A was killed`);

    // the command's createClaims did not complete on A (it had not heard back): B ran it again, by name
    const recorded = await recordedCommands();
    expect(recorded.candidates[0]).toBe(candidate);
    expect(recorded.replacements[0]).toEqual([firstReplacement]);
    expect(recorded.createAttempts[0]).toBeGreaterThanOrEqual(2);
    // one claim in the replacement's batch, one instance for it
    const batch = (await lh.claims.get(firstReplacement))?.metadata.labels?.[BATCH_LABEL];
    expect(batch).toBeDefined();
    expect((await lh.claims.list()).filter((c) => c.metadata.labels?.[BATCH_LABEL] === batch).map((c) => c.metadata.name)).toEqual([firstReplacement]);
    expect((await instancesPerClaim()).get(firstReplacement)).toBe(1);
    // drained only after the replacement was Initialized
    const candidateSeen = seen.get(candidate);
    const replacementSeen = seen.get(firstReplacement);
    expect(candidateSeen?.deletionTimestamp).toBeDefined();
    expect(replacementSeen?.initializedAt).toBeDefined();
    expect(atSecond(candidateSeen!.deletionTimestamp!)).toBeGreaterThanOrEqual(atSecond(replacementSeen!.initializedAt!));
    expect(servingGaps).toEqual([]);
  });

  it('killed while the second command waits for its old node to drain: the next worker finishes it, and nothing is doubled, leaked or left tainted', async () => {
    expect(workerB).toBeDefined();
    // B is live when it answers; the second command is the other original node's
    const launching = await poll('the second command launching its replacement', async () => {
      const s = await status();
      const c = s?.inFlight?.command.candidates[0]?.nodeClaim;
      return c !== undefined && c !== firstCandidate && s?.inFlight?.step === 'launching replacements' ? s.inFlight : undefined;
    }, 180_000, 100);
    const candidate = launching.command.candidates[0]!.nodeClaim;
    expect(originals).toContain(candidate);
    // widen the drain so the test catches it
    workerB.proxy.setLatency(150);
    const waiting = await poll('the second command waiting for its old node to go', async () => {
      const s = await status();
      return s?.inFlight?.step === 'waiting for the nodes to go' ? s.inFlight : s?.lastCommand?.command.candidates[0]?.nodeClaim === candidate ? 'missed' : undefined;
    }, 180_000, 50);
    if (waiting === 'missed') throw new Error('the second command finished before the test could catch it waiting');
    workerB.proxy.freeze();
    const atKill = await lh.claims.get(candidate);
    await kill(workerB);
    const killedAt = Date.now();
    // deleted, not gone yet
    expect(atKill?.metadata.deletionTimestamp).toBeDefined();
    console.log(`worker B killed with ${candidate} deleting; its replacement ${waiting.replacements?.join(', ')}`);

    workerC = await spawnWorker('c');
    const after = await eventually('the original nodes gone, two replacements Initialized, both pods Running on them', async () => {
      const all = await claimsOfPool();
      const nodes = new Set(all.map((c) => c.status?.nodeName));
      const pods = await podsOf();
      return all.length === 2 && !all.some((c) => originals.includes(c.metadata.name)) && all.every(isInitialized) && pods.length === 2 && pods.every((p) => p.status?.phase === 'Running' && nodes.has(p.spec?.nodeName)) ? all : undefined;
    }, 300_000);
    console.log(`second command finished ${((Date.now() - killedAt) / 1000).toFixed(1)} s after worker B was killed`);
    const done = await eventually('the workflow idle, its last command done', async () => {
      const s = await status();
      return s && s.inFlight === undefined && s.lastCommand?.command.candidates[0]?.nodeClaim === candidate ? s : undefined;
    }, 60_000);
    expect(done.lastCommand?.outcome).toBe('done');
    // nothing arrives late (a second replacement, a stray claim)
    await new Promise((r) => setTimeout(r, 5_000));
    recording = false;
    await recorder;

    const recorded = await recordedCommands();
    const replacements = recorded.replacements.flat();
    // one command per original node, one replacement each, and only those claims ever in the pool
    expect([...recorded.candidates].sort()).toEqual(originals);
    expect(recorded.replacements.every((r) => r.length === 1)).toBe(true);
    expect([...replacements].sort()).toEqual(after.map((c) => c.metadata.name).sort());
    expect([...seen.keys()].sort()).toEqual([...originals, ...replacements].sort());
    // each claim launched exactly one instance, ever
    const instances = await instancesPerClaim();
    expect(Object.fromEntries(instances)).toEqual(Object.fromEntries([...originals, ...replacements].map((n) => [n, 1])));
    // no instance without a live claim: only the replacements' are still running
    const live = (await lh.h.provider.list()).map((i) => i.tags['karpenter.sh/nodeclaim']).sort();
    expect(live).toEqual([...replacements].sort());
    // every candidate drained after its own replacement was Initialized
    recorded.candidates.forEach((c, i) => {
      const replacement = recorded.replacements[i]![0]!;
      expect(atSecond(seen.get(c)!.deletionTimestamp!)).toBeGreaterThanOrEqual(atSecond(seen.get(replacement)!.initializedAt!));
    });
    expect(servingGaps).toEqual([]);
    expect(fewestRunning).toBeGreaterThanOrEqual(1);
    // no disrupted taint left on any node the pool ever had (the guest is shared: other
    // files' nodes are theirs to clean up)
    const poolNodes = new Set([...seen.values()].map((s) => s.nodeName).filter((n) => n !== undefined));
    expect(poolNodes.size).toBe(seen.size);
    const tainted = (await lh.guest.core.listNode()).items.filter((n) => poolNodes.has(n.metadata?.name ?? '') && n.spec?.taints?.some((t) => t.key === DISRUPTED_TAINT)).map((n) => n.metadata?.name);
    expect(tainted).toEqual([]);
  });

  it('killed with a replacement on the way that then cannot launch: the next worker gives the command up, and no taint is left', async () => {
    expect(workerC).toBeDefined();
    const survivors = (await claimsOfPool()).map((c) => c.metadata.name).sort();
    expect(survivors).toHaveLength(2);
    const nodeOf = new Map((await claimsOfPool()).map((c) => [c.metadata.name, c.status?.nodeName ?? '']));
    const taintsOf = async (node: string) => ((await lh.guest.core.readNode({ name: node })).spec?.taints ?? []).map((t) => t.key);
    // no m5.large anywhere: every replacement's launch ends in InsufficientInstanceCapacity
    lh.h.proxy.exhaust(ZONES.map((zone) => ({ instanceType: 'm5.large', zone, capacityType: 'on-demand' as const })));
    await lh.guest.customObjects.patchClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: pool, body: { spec: { template: { metadata: { labels: { 'example.com/rev': '3' } } } } } }, mergePatch);
    const planned = await poll('the third command validating, its replacement planned', async () => {
      const s = await status();
      const c = s?.inFlight?.command.candidates[0]?.nodeClaim;
      return c !== undefined && survivors.includes(c) && s?.inFlight?.replacements?.length ? s.inFlight : undefined;
    }, 120_000, 100);
    workerC.proxy.setLatency(300);
    const candidate = planned.command.candidates[0]!.nodeClaim;
    const replacement = planned.replacements![0]!;
    await poll('the replacement NodeClaim created', async () => (await lh.claims.get(replacement)) !== undefined, 60_000);
    await kill(workerC);
    const killedAt = Date.now();
    // tainted before the replacement was created
    expect(await taintsOf(nodeOf.get(candidate)!)).toContain(DISRUPTED_TAINT);

    // the last takeover runs in-process (stopped by the harness's close)
    await lh.startWorkers(['control', 'packing']);
    const given = await eventually('the command given up', async () => {
      const s = await status();
      return s?.lastCommand?.outcome === 'abandoned' && s.lastCommand.command.candidates[0]?.nodeClaim === candidate ? s.lastCommand : undefined;
    }, 180_000);
    console.log(`third command given up ${((Date.now() - killedAt) / 1000).toFixed(1)} s after worker C was killed: ${given.why}`);
    expect(given.why).toContain(replacement);
    // the taint is gone as the command is given up (the next attempt is a poll and a validation away)
    expect(await taintsOf(nodeOf.get(candidate)!)).not.toContain(DISRUPTED_TAINT);

    // no more attempts: then nothing may be left tainted, launched or deleted
    await lh.guest.customObjects.patchClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: pool, body: { spec: { disruption: { budgets: [{ nodes: '0' }] } } } }, mergePatch);
    await eventually('no command in flight, no node tainted', async () => {
      const s = await status();
      if (!s || s.inFlight !== undefined) return undefined;
      for (const name of survivors) if ((await taintsOf(nodeOf.get(name)!)).includes(DISRUPTED_TAINT)) return undefined;
      return true;
    }, 180_000);
    const all = await claimsOfPool();
    expect(all.map((c) => c.metadata.name).sort()).toEqual(survivors);
    expect(all.every((c) => isInitialized(c) && c.metadata.deletionTimestamp === undefined)).toBe(true);
    const failed = (await recordedCommands()).replacements.flat().filter((n) => !survivors.includes(n) && !originals.includes(n));
    expect(failed).toContain(replacement);
    // none of the failed replacements got an instance, and only the survivors run
    const instances = await instancesPerClaim();
    for (const name of failed) expect(instances.get(name)).toBeUndefined();
    expect((await lh.h.provider.list()).map((i) => i.tags['karpenter.sh/nodeclaim']).sort()).toEqual(survivors);
    const pods = await podsOf();
    expect(pods.filter((p) => p.status?.phase === 'Running' && survivors.some((n) => nodeOf.get(n) === p.spec?.nodeName))).toHaveLength(2);
    lh.h.proxy.reset();
  });
});

/** Polls every 20 ms (by default): the test must act while the worker's next requests are still on the (slowed) wire. */
async function poll<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
