// A packing worker process SIGKILLed in the middle of a batch creates no duplicate
// capacity: the batch's plan is in the provisioner's history before any claim is created,
// and the worker that takes the batch over creates exactly that plan's claims, by name.
//
// The killed worker is a real child process (`workers/main.ts`, packing queue only). It
// reaches the guest API server through a TCP proxy that slows every byte, so the test can
// freeze it at a chosen moment — after the plan is recorded, or after the first claims
// exist — and then kill the process.
import { AppsV1Api } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeClaimWorkflowId, provisionerWorkflowId } from '../../core/lifecycle';
import { BATCH_LABEL, type PlannedBatch } from '../../core/provisioning';
import { recordedPlans as recordedPlansOf } from '../support/histories';
import { watchWorkflowId } from '../../workflows/watch';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

jest.setTimeout(700_000);

const REPO = join(__dirname, '..', '..');

describe('provisioner: a packing worker killed mid-batch (real process, real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;

  beforeAll(async () => {
    // In-process: control and cloud only. Packing runs in child processes the tests kill.
    lh = await startLifecycleHarness({ run: ['control', 'cloud'] });
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `crash-${lh.id}`;
    pool = `crash-${lh.id}`;
    // the instances launch in moto, but no kubelet joins: the test is about claims, not nodes
    lh.silentPools.add(pool);
    await lh.createNamespace(namespace);
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    // A batch window long enough that each Deployment is one batch (one plan to compare with).
    await lh.t.client.workflow.start('provisionerWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: provisionerWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, batchIdle: '4s', batchMax: '30s' }],
    });
    await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }],
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
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              // one m5.large per pod (1.5 CPU each): N pods, N claims
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
    await lh?.close();
  });

  async function deploy(name: string, replicas: number) {
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              nodeSelector: { 'karpenter.sh/nodepool': pool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '1500m', memory: '1Gi' } } }],
            },
          },
        },
      },
    });
  }

  /** A packing worker as operators run it (`workers/main.ts`), reaching the guest through `proxy`. */
  function spawnPackingWorker(proxy: TcpProxy): ChildProcess {
    const stack = loadStackInfo();
    const guestServer = new URL(stack.guest.server);
    const kubeconfig = join(stack.dir, `crash-${lh.id}-${proxy.port}.kubeconfig`);
    const text = readFileSync(lh.autonodeKubeconfigPath, 'utf8');
    if (!text.includes(guestServer.host)) throw new Error(`the autonode kubeconfig does not name ${guestServer.host}`);
    writeFileSync(kubeconfig, text.split(guestServer.host).join(proxy.address), { mode: 0o600 });
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
        AUTONODE_WORKER_QUEUES: 'packing',
        AUTONODE_TASK_QUEUE_CONTROL: lh.taskQueues.control,
        AUTONODE_TASK_QUEUE_CLOUD: lh.taskQueues.cloud,
        AUTONODE_TASK_QUEUE_PACKING: lh.taskQueues.packing,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the packing worker already exited (${child.exitCode ?? child.signalCode})`);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Each plan the provisioner recorded with claims for this test's pool. */
  const recordedPlans = async () => (await recordedPlansOf(lh.t.client, provisionerWorkflowId(lh.h.cluster.name))).filter((p) => p.claims.some((c) => c.pool === pool));

  const claimsOfBatch = async (batchId: string) =>
    (await lh.claims.list()).filter((c) => c.metadata.labels?.[BATCH_LABEL] === batchId).map((c) => c.metadata.name).sort();

  /** Instances per claim, as EC2 has them (a twin would be a second instance for one claim). */
  async function instancesPerClaim(names: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map(names.map((n) => [n, 0]));
    for (const instance of await lh.h.provider.list()) {
      const claim = instance.tags['karpenter.sh/nodeclaim'] ?? '';
      if (counts.has(claim)) counts.set(claim, (counts.get(claim) ?? 0) + 1);
    }
    return counts;
  }

  async function expectExactlyThePlan(plan: PlannedBatch) {
    const planned = plan.claims.map((c) => c.name).sort();
    // the worker that took over created the rest, by the recorded names, and nothing else
    const made = await eventually('every planned claim created', async () => {
      const names = await claimsOfBatch(plan.batchId);
      return names.length >= planned.length ? names : undefined;
    }, 120_000);
    expect(made).toEqual(planned);
    // one instance per claim: each claim's workflow started once and launched once
    const launched = await eventually('an instance for every claim', async () => {
      const counts = await instancesPerClaim(planned);
      return [...counts.values()].every((n) => n >= 1) ? counts : undefined;
      // 40 launches at once swamp moto on a loaded machine: a node-class resolution whose EC2
      // calls time out holds its claim until the activity's 2-minute start-to-close retries it.
      // What is judged is one instance per claim, not how fast.
    }, 300_000).catch(async (err: unknown) => {
      // say why: each claim without an instance, its conditions and its workflow's state
      const counts = await instancesPerClaim(planned);
      for (const name of planned.filter((n) => counts.get(n) === 0)) {
        const claim = await lh.claims.get(name);
        const described = await lh.t.client.workflow.getHandle(nodeClaimWorkflowId(lh.h.cluster.name, name)).describe().catch((e: unknown) => String(e));
        const pending = typeof described === 'string' ? described : JSON.stringify({ status: described.status.name, pending: described.raw.pendingActivities?.map((a) => ({ type: a.activityType?.name, state: a.state, attempt: a.attempt, started: a.lastStartedTime?.seconds?.toString(), heartbeat: a.lastHeartbeatTime?.seconds?.toString(), worker: a.lastWorkerIdentity, failure: a.lastFailure?.message })) });
        console.log(`claim ${name} has no instance: conditions ${JSON.stringify(claim?.status?.conditions)}; workflow ${pending}`);
      }
      throw err;
    });
    expect([...launched.values()].every((n) => n === 1)).toBe(true);
    // nothing more arrives later (e.g. a late second plan for the same pods)
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await claimsOfBatch(plan.batchId)).toEqual(planned);
    expect((await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool && !planned.includes(c.metadata.name) && !earlier.has(c.metadata.name))).toEqual([]);
    expect([...(await instancesPerClaim(planned)).values()].every((n) => n === 1)).toBe(true);
    for (const name of planned) earlier.add(name);
  }
  const earlier = new Set<string>();

  it('killed between solving and creating: the next worker creates exactly the recorded plan', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(loadStackInfo().guest.server).port) }, { latencyMs: 500 });
    const child = spawnPackingWorker(proxy);
    try {
      await deploy('between', 20);
      const plan = await poll('a recorded plan with claims for the pool', async () => (await recordedPlans())[0]);
      proxy.freeze();
      await kill(child);
      expect(plan.claims.filter((c) => c.pool === pool)).toHaveLength(20);
      // killed with the plan recorded and nothing created yet
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await claimsOfBatch(plan.batchId)).toEqual([]);

      const packing = await lh.startWorkers(['packing']);
      try {
        await expectExactlyThePlan(plan);
      } finally {
        await packing.stop();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await proxy.close();
    }
  });

  it('killed in the middle of creating: the next worker finishes the same claims, none twice', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(loadStackInfo().guest.server).port) }, { latencyMs: 500 });
    const child = spawnPackingWorker(proxy);
    try {
      const before = new Set((await recordedPlans()).map((p) => p.batchId));
      await deploy('middle', 40);
      const plan = await poll('a new recorded plan with claims for the pool', async () => (await recordedPlans()).find((p) => !before.has(p.batchId)));
      // the first claims exist: stop the rest on the wire, then kill the process
      await poll('the first claim of the batch', async () => (await claimsOfBatch(plan.batchId)).length > 0);
      proxy.freeze();
      await kill(child);
      await new Promise((r) => setTimeout(r, 1_000));
      const atKill = (await claimsOfBatch(plan.batchId)).length;
      expect(plan.claims.filter((c) => c.pool === pool)).toHaveLength(40);
      expect(atKill).toBeGreaterThan(0);
      expect(atKill).toBeLessThan(plan.claims.length);

      const packing = await lh.startWorkers(['packing']);
      try {
        await expectExactlyThePlan(plan);
      } finally {
        await packing.stop();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await proxy.close();
    }
  });
});

/** Polls every 20 ms: the test must act while the worker's next requests are still on the (slowed) wire. */
async function poll<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
