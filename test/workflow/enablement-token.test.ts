// The enablement renews autonode's guest token at half its life (the lifetime the activity
// reports, not a fixed 12 h), on Temporal's time-skipping test server with scripted
// activities. The clients that use the token follow the renewed Secret
// (test/unit/kube/secret-kubeconfig.test.ts).
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { recordHistory } from '../support/histories';
import { type EnablementStatus } from '../../workflows/enablement';
import { MINUTE, enablementActivities, startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(180_000);

let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

it('mints a new guest token once half of the last one’s life has gone, and not before', async () => {
  const queue = 'enablement-token';
  const lifetimeMs = 20 * MINUTE;
  const minted: { at: number; renewAfter: number }[] = [];
  const scheduledAt = () => Context.current().info.currentAttemptScheduledTimestampMs;
  const activities = enablementActivities('tok', {
    enableGuest: async () => {
      const at = scheduledAt();
      minted.push({ at, renewAfter: at + lifetimeMs / 2 });
      return {
        kubeconfigSecret: { namespace: 'clusters', name: 'tok-autonode-kubeconfig', key: 'kubeconfig' },
        tokenExpiresAt: new Date(at + lifetimeMs).toISOString(),
        tokenRenewAfter: new Date(at + lifetimeMs / 2).toISOString(),
      };
    },
  });
  const worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities });
  const running = worker.run();
  try {
    const handle = await h.env.client.workflow.start('enablementWorkflow', {
      taskQueue: queue,
      workflowId: 'autonode/clusters/tok',
      args: [{ hostedCluster: { namespace: 'clusters', name: 'tok' }, taskQueues: { control: queue }, resync: '30s' }],
    });
    await h.env.sleep(25 * MINUTE);
    await handle.signal('disable');
    const status = (await handle.result()) as EnablementStatus;
    expect(status.phase).toBe('Disabled');
    // enable, 25 minutes of steady reconciles and token renewals, disable and the teardown, in
    // one run (it stays under the continue-as-new threshold), for test/unit/replay.test.ts
    await recordHistory('enablement-lifetime-timeskipping', () => handle.fetchHistory());

    // minted at the start, then at 10 and 20 minutes (each within one resync of its half-life)
    expect(minted).toHaveLength(3);
    for (let i = 1; i < minted.length; i++) {
      const previous = minted[i - 1]!;
      const current = minted[i]!;
      expect(current.at).toBeGreaterThanOrEqual(previous.renewAfter);
      expect(current.at - previous.renewAfter).toBeLessThanOrEqual(30_000 + 5_000);
    }
  } finally {
    worker.shutdown();
    await running;
  }
});
