// The production Temporal's frontend restarted alone while a NodeClaim lives (issue 17's
// "the Temporal frontend restarted once"). The launcher runs history, matching, frontend and
// worker as four processes (dev/stack/temporal-production.ts); this test starts its own
// production Temporal (own PostgreSQL) beside the stack, a real worker process
// (workers/main.ts) on it, and a NodeClaim workflow against the stack's guest and moto.
// Mid-lifecycle the frontend is stopped and started again; history, matching and the
// internal worker keep running (same pids), and the claim still initializes, is disrupted
// and ends with no instance left.
//
// Runs under AUTONODE_TEMPORAL=production (`npm run test:production-temporal`), which is
// when the production build is in the cache; skipped otherwise.
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { Client, Connection } from '@temporalio/client';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeClaimWorkflowId, type NodeClaimStatusView } from '../../core/lifecycle';
import { resolveProductionTemporal } from '../../dev/stack/binaries';
import { restartByName } from '../../dev/stack/launcher';
import type { ManagedProcess } from '../../dev/stack/process';
import { startTemporal } from '../../dev/stack/temporal';
import { temporalProcessName } from '../../dev/stack/temporal-production';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { hasExited, spawnWorkerProcess } from '../support/worker-process';

const production = process.env.AUTONODE_TEMPORAL === 'production';

(production ? describe : describe.skip)('production Temporal: the frontend restarted alone while a NodeClaim lives', () => {
  let lh: LifecycleHarness;
  const processes: ManagedProcess[] = [];
  let dir: string;
  let connection: Connection | undefined;
  let worker: ChildProcess | undefined;
  const log: string[] = [];

  beforeAll(async () => {
    lh = await startLifecycleHarness({ run: [] });
    dir = mkdtempSync(join(tmpdir(), 'autonode-frontend-restart-'));
    mkdirSync(join(dir, 'logs'));
  });
  afterAll(async () => {
    if (worker && !hasExited(worker)) {
      worker.kill('SIGKILL');
      await once(worker, 'exit');
    }
    await connection?.close();
    for (const p of [...processes].reverse()) await p.stop();
    rmSync(join(dir, 'postgres'), { recursive: true, force: true });
    await lh?.close();
  });

  it('history, matching and the internal worker stay up, the worker process rides it out, and the claim lives and ends', async () => {
    const temporal = await startTemporal({
      binary: undefined,
      production: resolveProductionTemporal(process.env),
      historyShards: 2,
      started: (p) => processes.push(p),
      address: undefined,
      namespace: 'default',
      dir,
      logDir: join(dir, 'logs'),
    });
    expect(processes.map((p) => p.spec.name)).toEqual(['postgres', 'temporal-history', 'temporal-matching', 'temporal-frontend', 'temporal-worker']);
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace });

    const queues = { control: `${lh.taskQueues.control}-fe`, cloud: `${lh.taskQueues.cloud}-fe`, packing: `${lh.taskQueues.packing}-fe` };
    worker = spawnWorkerProcess({
      temporal: { address: temporal.address, namespace: temporal.namespace },
      env: {
        AUTONODE_GUEST_KUBECONFIG: lh.autonodeKubeconfigPath,
        AWS_ENDPOINT_URL_EC2: lh.h.proxy.endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AUTONODE_ISOLATED_VPC: 'true',
        AUTONODE_METRICS_PORT: '0',
        AUTONODE_TEMPORAL_METRICS_PORT: '0',
        AUTONODE_WORKER_QUEUES: 'control,cloud',
        AUTONODE_TASK_QUEUE_CONTROL: queues.control,
        AUTONODE_TASK_QUEUE_CLOUD: queues.cloud,
        AUTONODE_TASK_QUEUE_PACKING: queues.packing,
        ...(process.env.AUTONODE_WORKFLOW_BUNDLE ? { AUTONODE_WORKFLOW_BUNDLE: process.env.AUTONODE_WORKFLOW_BUNDLE } : {}),
      },
      onOutput: (chunk) => log.push(chunk),
    });

    const name = `lc-${lh.id}-fe`;
    const uid = await lh.createNodeClaim(name);
    const handle = await client.workflow.start('nodeClaimWorkflow', {
      taskQueue: queues.control,
      workflowId: nodeClaimWorkflowId(lh.h.cluster.name, name),
      args: [{ cluster: { name: lh.h.cluster.name, region: lh.h.cluster.region }, taskQueues: queues, nodeClaim: { name, uid }, timeouts: { resync: '1s', steadyResync: '2s' } }],
    });
    // mid-life: the instance exists, the node has not joined yet (or just has)
    await eventually('the claim to launch', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase !== 'Pending' && s.phase !== 'Launching' ? s : undefined;
    }, 120_000);

    const others = processes.filter((p) => p.spec.name !== temporalProcessName('frontend'));
    const pidsBefore = others.map((p) => p.pid);
    const down = await restartByName(processes, temporalProcessName('frontend'));
    expect(down).toBeLessThan(60_000);
    expect(others.map((p) => p.pid)).toEqual(pidsBefore);
    expect(others.every((p) => p.isRunning())).toBe(true);

    await eventually('the node to initialize after the frontend restart', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Initialized' ? s : undefined;
    }, 150_000);
    // the same worker process carried on through the outage
    expect(hasExited(worker)).toBe(false);

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test done' }] });
    await handle.result();
    const out = await lh.h.direct.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodeclaim', Values: [name] }] }));
    const live = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).filter((i) => i.State?.Name !== 'terminated' && i.State?.Name !== 'shutting-down');
    expect(live).toEqual([]);
    expect(lh.h.proxy.count('CreateFleet')).toBe(1);
  });
});
