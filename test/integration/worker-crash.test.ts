import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { nodeClaimWorkflowId, type NodeClaimStatusView } from '../../core/lifecycle';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { spawnWorkerProcess } from '../support/worker-process';

/** The production worker entry point, as its own process, polling this harness's queues. */
function startWorkerProcess(lh: LifecycleHarness, log: string[]): ChildProcess {
  const stack = loadStackInfo();
  return spawnWorkerProcess({
    temporal: stack.temporal,
    env: {
      AUTONODE_GUEST_KUBECONFIG: lh.autonodeKubeconfigPath,
      AWS_ENDPOINT_URL_EC2: lh.h.proxy.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AUTONODE_TASK_QUEUE_CONTROL: `${lh.taskQueues.control}-proc`,
      AUTONODE_TASK_QUEUE_CLOUD: `${lh.taskQueues.cloud}-proc`,
    },
    onOutput: (chunk) => log.push(chunk),
  });
}

describe('worker crash during launch (separate worker process)', () => {
  let lh: LifecycleHarness;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    lh = await startLifecycleHarness();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await lh?.close();
  });

  it('a worker killed after CreateFleet was forwarded but before its answer leaves exactly one instance', async () => {
    const log: string[] = [];
    const queues = { control: `${lh.taskQueues.control}-proc`, cloud: `${lh.taskQueues.cloud}-proc` };
    const first = startWorkerProcess(lh, log);
    children.push(first);
    // moto creates the instance; then, before the answer reaches the worker, the worker dies.
    lh.h.proxy.inject({
      kind: 'drop-response',
      action: 'CreateFleet',
      beforeDrop: async () => {
        first.kill('SIGKILL');
        await once(first, 'exit');
      },
    });

    const name = `lc-${lh.id}-crash`;
    const uid = await lh.createNodeClaim(name);
    const handle = await lh.t.client.workflow.start('nodeClaimWorkflow', {
      taskQueue: queues.control,
      workflowId: nodeClaimWorkflowId(lh.h.cluster.name, name),
      args: [{ cluster: { name: lh.h.cluster.name, region: lh.h.cluster.region }, taskQueues: queues, nodeClaim: { name, uid }, timeouts: { resync: '1s', steadyResync: '2s', launchAttempt: '5s' } }],
    });
    await eventually('the worker to be killed by the proxy', async () => first.exitCode !== null || first.signalCode !== null, 120_000);
    expect(first.signalCode).toBe('SIGKILL');
    expect(lh.h.proxy.requests.filter((r) => r.action === 'CreateFleet').map((r) => r.status)).toEqual(['dropped']);

    // A fresh worker process picks the launch up after the attempt times out.
    const second = startWorkerProcess(lh, log);
    children.push(second);
    await eventually('the node to initialize under the new worker', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Initialized' ? s : undefined;
    }, 150_000);

    const out = await lh.h.direct.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodeclaim', Values: [name] }] }));
    const live = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).filter((i) => i.State?.Name !== 'terminated' && i.State?.Name !== 'shutting-down');
    expect(live).toHaveLength(1);
    // and the second attempt found that instance instead of creating another
    expect(lh.h.proxy.count('CreateFleet')).toBe(1);
    const claim = await lh.claims.get(name);
    expect(claim?.status?.providerID).toContain(live[0]?.InstanceId ?? 'missing');

    await handle.executeUpdate('disrupt', { args: [{ reason: 'test done' }] });
    await handle.result();
    second.kill('SIGTERM');
    await once(second, 'exit');
  });
});
