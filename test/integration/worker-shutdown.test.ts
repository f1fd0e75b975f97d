// Issue 16, Deployment: a worker told to stop (SIGTERM, as the kubelet does before a
// redeploy) finishes the activity it is running — within the Deployment's
// terminationGracePeriodSeconds — and the activity completes on its first attempt instead
// of timing out and running again elsewhere. The real worker process (workers/main.ts), an
// EC2 call held in flight by the fault proxy while the signal arrives.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { z } from 'zod';
import { startEc2FaultProxy, type Ec2FaultProxy } from '../support/ec2-fault-proxy';
import { eventually } from '../support/eventually';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, Worker, workflowBundle, type TemporalHarness } from '../support/temporal';

jest.setTimeout(180_000);

const root = join(__dirname, '..', '..');

/** k8s/worker/worker.yaml's Deployment: how long the kubelet waits between SIGTERM and SIGKILL. */
function terminationGracePeriodSeconds(): number {
  const docs = loadAllYaml(readFileSync(join(root, 'k8s', 'worker', 'worker.yaml'), 'utf8'));
  const deployment = z
    .object({ kind: z.literal('Deployment'), spec: z.object({ template: z.object({ spec: z.object({ terminationGracePeriodSeconds: z.number() }) }) }) })
    .parse(docs.find((d) => z.object({ kind: z.literal('Deployment') }).safeParse(d).success));
  return deployment.spec.template.spec.terminationGracePeriodSeconds;
}

describe('a worker process stopped by SIGTERM drains its in-flight activity (real process)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const queues = { control: `shutdown-${id}-control`, cloud: `shutdown-${id}-cloud` };
  let proxy: Ec2FaultProxy;
  let t: TemporalHarness;
  let workflows: Worker;
  let runningWorkflows: Promise<void>;
  let child: ChildProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    proxy = await startEc2FaultProxy({ target: stack.ec2.endpoint });
    t = await temporalHarness();
    // the workflow side in this process; the activity runs in the worker process under test
    workflows = await Worker.create({ connection: t.connection, namespace: t.namespace, taskQueue: queues.control, workflowBundle: workflowBundle() });
    runningWorkflows = workflows.run();
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    workflows?.shutdown();
    await runningWorkflows;
    await t?.close();
    await proxy?.close();
  });

  it('the activity completes once, after the signal, and the process then exits 0 before the kubelet would kill it', async () => {
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    proxy.inject({ kind: 'hold', action: 'DescribeInstances', hold: async () => (arrived(), released) });

    // the production entry point: one cloud worker, as a Deployment's pod runs it
    child = spawn(process.execPath, ['-r', 'tsx/cjs', join(root, 'workers', 'main.ts')], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: stack.temporal.address,
        TEMPORAL_NAMESPACE: stack.temporal.namespace,
        AUTONODE_GUEST_KUBECONFIG: stack.guest.kubeconfigPath,
        AWS_ENDPOINT_URL_EC2: proxy.endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AUTONODE_WORKER_QUEUES: 'cloud',
        AUTONODE_TASK_QUEUE_CONTROL: queues.control,
        AUTONODE_TASK_QUEUE_CLOUD: queues.cloud,
        AUTONODE_METRICS_PORT: '0',
        AUTONODE_TEMPORAL_METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = child;
    worker.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
    worker.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
    const exited = once(worker, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

    const handle = await t.client.workflow.start('collectGarbageOnceWorkflow', {
      taskQueue: queues.control,
      workflowId: `shutdown-${id}`,
      args: [{ taskQueue: queues.cloud, cluster: { name: `sd-${id}`, region: stack.ec2.region } }],
    });
    await Promise.race([inFlight, exited.then(() => Promise.reject(new Error(`the worker process exited before the activity reached EC2:\n${output.join('')}`)))]);

    const signalledAt = Date.now();
    worker.kill('SIGTERM');
    // the worker waits for its activity: still alive two seconds later, the EC2 call still held
    await new Promise((r) => setTimeout(r, 2_000));
    expect({ exitCode: worker.exitCode, signalCode: worker.signalCode }).toEqual({ exitCode: null, signalCode: null });
    release();

    const result = await handle.result();
    expect(result).toEqual({ terminated: [], kept: 0, skipped: 0 });
    const [code, signal] = await exited;
    const drainedInMs = Date.now() - signalledAt;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(drainedInMs).toBeLessThan(terminationGracePeriodSeconds() * 1000);

    // once: scheduled, started on attempt 1, completed — and EC2 was asked once
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []));
    expect(started).toEqual([1]);
    expect(events.filter((e) => e.activityTaskCompletedEventAttributes).length).toBe(1);
    expect(proxy.count('DescribeInstances')).toBe(1);
    await eventually('the workflow closed', async () => (await handle.describe()).status.name === 'COMPLETED');
    console.log(`worker shutdown: SIGTERM → activity completed → process exited 0 in ${(drainedInMs / 1000).toFixed(1)} s (terminationGracePeriodSeconds ${terminationGracePeriodSeconds()})`);
  });
});
