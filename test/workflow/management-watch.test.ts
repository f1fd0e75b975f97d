// The management watch workflow on Temporal's test server: it keeps one HostedCluster watch
// activity running in the mode the Autoprovision gate asks for, and restarts it only when a
// worker reports a different gate.
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { recordHistory } from '../support/histories';
import type { ManagementWatchActivities } from '../../activities/enablement/management-watch';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../core/enablement/management-watch';
import type { ManagementWatchStatus } from '../../workflows/management-watch';
import { startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(120_000);

let h: TimeSkippingHarness;
let worker: Worker;
let running: Promise<void>;
const starts: boolean[] = [];
let cancelled = 0;
const queue = 'management-watch';

beforeAll(async () => {
  h = await startTimeSkipping();
  const activities: ManagementWatchActivities = {
    async watchHostedClusters(raw: unknown): Promise<void> {
      starts.push((raw as { autoprovision: boolean }).autoprovision);
      const ctx = Context.current();
      try {
        for (;;) {
          ctx.heartbeat();
          await ctx.sleep(50);
        }
      } catch (err) {
        cancelled += 1;
        throw err;
      }
    },
  };
  worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities, maxHeartbeatThrottleInterval: '50ms' });
  running = worker.run();
}, 120_000);
afterAll(async () => {
  worker?.shutdown();
  await running;
  await h?.close();
});

const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

it('runs the watch in the gate’s mode, restarts it on a gate change and not on a repeat', async () => {
  const handle = await h.env.client.workflow.signalWithStart('managementWatchWorkflow', {
    taskQueue: queue,
    workflowId: MANAGEMENT_WATCH_WORKFLOW_ID,
    args: [{ autoprovision: false, taskQueues: { control: queue } }],
    signal: 'featureGates',
    signalArgs: [{ autoprovision: false }],
  });
  await until('the report-only watch', () => starts.length === 1);
  expect(starts).toEqual([false]);

  // another worker with the same flags: nothing restarts
  await handle.signal('featureGates', { autoprovision: false });
  await new Promise((r) => setTimeout(r, 1_000));
  expect(starts).toEqual([false]);
  const same = await handle.query<ManagementWatchStatus>('status');
  expect(same).toEqual(expect.objectContaining({ autoprovision: false, starts: 1 }));

  // a worker with the gate on: the watch is cancelled and starts again in Autoprovision mode
  await handle.signal('featureGates', { autoprovision: true });
  await until('the Autoprovision watch', () => starts.length === 2);
  expect(starts).toEqual([false, true]);
  expect(cancelled).toBe(1);
  expect(await handle.query<ManagementWatchStatus>('status')).toEqual(expect.objectContaining({ autoprovision: true, starts: 2 }));
  await recordHistory('management-watch-gate-change-timeskipping', () => handle.fetchHistory());
  await handle.terminate('test over');
});
