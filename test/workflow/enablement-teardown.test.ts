// A HostedCluster deleted while no enablement ran for it: the teardown-only run the
// management watch starts knows its cluster from the spec, so every NodeClaim is deleted and
// every instance waited for before the finalizer goes (time-skipping server, scripted activities).
import { Worker } from '@temporalio/worker';
import { recordHistory } from '../support/histories';
import type { EnablementActivities } from '../../activities/enablement/activity';
import { autonodeKubeconfigSecret } from '../../core/hostedcluster/secrets';
import { type EnablementStatus } from '../../workflows/enablement';
import { startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(180_000);

let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

it('a teardown-only run deletes the claims and waits for the instances of the cluster the spec names', async () => {
  const queue = 'enablement-teardown';
  const calls: { name: string; arg: unknown }[] = [];
  let left = 2;
  const activities: EnablementActivities = {
    observeHostedCluster: async () => ({ state: 'ok', deleting: true, config: { infraID: 'gone-1', region: 'us-east-1', roleARN: 'arn:aws:iam::123456789012:role/gone', releaseImage: 'quay.io/x:1', generation: 3 } }),
    enableGuest: async () => {
      throw new Error('a teardown sets nothing up');
    },
    reconcileNodeClasses: async () => {
      throw new Error('a teardown sets nothing up');
    },
    startClusterWorkflows: async () => {
      throw new Error('a teardown starts nothing');
    },
    syncInterruption: async () => {
      throw new Error('a teardown starts nothing');
    },
    reportHostedCluster: async () => undefined,
    stopProvisioning: async (arg) => void calls.push({ name: 'stopProvisioning', arg }),
    removeNodeClaims: async (arg) => {
      calls.push({ name: 'removeNodeClaims', arg });
      left = Math.max(0, left - 1);
      return { nodeClaims: left, instances: left };
    },
    disableGuest: async (arg) => void calls.push({ name: 'disableGuest', arg }),
  };
  const worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities });
  const running = worker.run();
  try {
    const status = (await h.env.client.workflow.execute('enablementWorkflow', {
      taskQueue: queue,
      workflowId: 'autonode/clusters/gone',
      args: [{ hostedCluster: { namespace: 'clusters', name: 'gone' }, taskQueues: { control: queue } }],
    })) as EnablementStatus;
    expect(status.phase).toBe('Disabled');
    expect(status.cluster).toBe('gone-1');
    const cluster = { name: 'gone-1', region: 'us-east-1', credentialsRef: 'arn:aws:iam::123456789012:role/gone', kubeconfigSecret: autonodeKubeconfigSecret({ namespace: 'clusters', name: 'gone' }) };
    expect(calls.map((c) => c.name)).toEqual(['stopProvisioning', 'removeNodeClaims', 'removeNodeClaims', 'disableGuest']);
    await recordHistory('enablement-teardown-only-timeskipping', () => h.env.client.workflow.getHandle('autonode/clusters/gone').fetchHistory());
    expect(calls[0]!.arg).toEqual(expect.objectContaining({ cluster }));
    expect(calls[1]!.arg).toEqual(expect.objectContaining({ cluster }));
    expect(calls[3]!.arg).toEqual(expect.objectContaining({ cluster }));
  } finally {
    worker.shutdown();
    await running;
  }
});
