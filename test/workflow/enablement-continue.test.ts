// The enablement continues as new (every 2,000 events, or when the server suggests it; the
// integration stack suggests it at 150). The next run must not read `Validating` until its
// first reconcile: an Enabled cluster that flips to Validating for a moment in its status
// query and AutoNodePhase is wrong for operators and scripts (`autonode status`,
// enablement-two-clusters.test.ts saw it in CI). Time-skipping server, scripted activities.
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { type EnablementStatus } from '../../workflows/enablement';
import { enablementActivities, startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(180_000);

let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

it('a continued run reports the phase, steps and counts its predecessor ended with until its own first reconcile', async () => {
  const queue = 'enablement-continue';
  let firstRun: string | undefined;
  let releaseObserve: () => void = () => undefined;
  const held = new Promise<void>((resolve) => void (releaseObserve = resolve));
  let observeHeld: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => void (observeHeld = resolve));
  const healthy = enablementActivities('cont', { reportHostedCluster: async () => ({ nodeCount: 3, nodeClaimCount: 3, vCPUs: 12 }) });
  const activities = enablementActivities('cont', {
    reportHostedCluster: healthy.reportHostedCluster,
    observeHostedCluster: async (input) => {
      const runId = Context.current().info.workflowExecution?.runId ?? '';
      firstRun ??= runId;
      // the continued run's first look is held: its status is what it carried
      if (runId !== firstRun) {
        observeHeld();
        await held;
      }
      return healthy.observeHostedCluster(input);
    },
  });
  const worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities });
  const running = worker.run();
  try {
    // the first run continues as new after a few reconciles
    const handle = await h.env.client.workflow.start('enablementWorkflow', {
      taskQueue: queue,
      workflowId: 'autonode/clusters/cont',
      args: [{ hostedCluster: { namespace: 'clusters', name: 'cont' }, taskQueues: { control: queue }, resync: '1s', maxHistoryEvents: 60 }],
    });
    await holding;
    const latest = h.env.client.workflow.getHandle('autonode/clusters/cont');
    expect((await latest.describe()).runId).not.toBe(firstRun);
    const status = await latest.query<EnablementStatus>('status');
    expect(status.phase).toBe('Enabled');
    expect(status).toEqual(expect.objectContaining({ cluster: 'cont', nodeCount: 3, nodeClaimCount: 3, vCPUs: 12 }));
    expect(status.steps.map((s) => s.step)).toEqual(expect.arrayContaining(['validate', 'guest', 'nodeClasses', 'workflows']));

    releaseObserve();
    await latest.signal('disable');
    expect(((await latest.result()) as EnablementStatus).phase).toBe('Disabled');
    void handle;
  } finally {
    releaseObserve();
    worker.shutdown();
    await running;
  }
});
