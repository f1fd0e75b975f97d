// The interruption workflow and the enablement's part in it, on Temporal's time-skipping
// test server with scripted activities: the order of a replacement-first (cordon, plan,
// launch, wait, drain), its deadline, a duplicate warning while it runs, a round that
// fails (its messages stay in the queue), and the enablement starting, moving and ending
// the workflow as the HostedCluster's queue comes, changes and goes. The real activities
// against moto and the API server are test/integration/interruption.test.ts.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { EnablementActivities } from '../../activities/enablement/activity';
import type { HandledInterruptions, InterruptionActivities, InterruptionQueueActivities, ReceivedInterruption } from '../../activities/interruption/activity';
import type { ProvisionerActivities } from '../../activities/provisioner/activity';
import type { DisruptionActivities } from '../../activities/disruption/activity';
import { type PlannedBatch } from '../../core/provisioning/batch';
import { type InterruptionStatus } from '../../workflows/interruption';
import { recordHistory } from '../support/histories';
import { MINUTE, startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(180_000);

let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const cluster = { name: 'intr', region: 'us-east-1' };
const EMPTY = 'no more scripted messages';
let runs = 0;
const spot = (messageId: string, receivedAt: number): ReceivedInterruption => ({
  messageId,
  receipt: `r-${messageId}`,
  receivedAt,
  message: { kind: 'spot_interrupted', id: messageId, time: new Date(receivedAt).toISOString(), instanceIds: ['i-0abc'] },
});
const aPlan = (names: string[]): PlannedBatch => ({ batchId: 'b', pending: 1, nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0.1, solveMs: 1, skipped: [], templates: [], optionLists: [], claims: names.map((name) => ({ name }) as PlannedBatch['claims'][number]), poolStatus: [] });

interface World {
  /** what each poll returns, in order; then nothing (a 20 s long poll, skipped) */
  polls: (ReceivedInterruption[] | Error)[];
  handle: (input: { messages: unknown[]; replacing?: string[] }, now: number) => HandledInterruptions | Error;
  /** when the replacement is Initialized (epoch ms of the skipped clock); never if undefined */
  initializedAt?: number;
  /** the replacement plan fails for good (the packing queue's answer) */
  planFails?: string;
}

async function runInterruption(world: World, forMs: number) {
  const id = `intr-${++runs}`;
  const queues = { control: `control-${id}`, cloud: `cloud-${id}`, packing: `packing-${id}` };
  const calls: { name: string; at: number; arg?: unknown }[] = [];
  const at = () => Context.current().info.currentAttemptScheduledTimestampMs;
  let poll = 0;
  const cloud: InterruptionQueueActivities = {
    receiveInterruptionMessages: async () => {
      const next = world.polls[poll++];
      calls.push({ name: 'receive', at: at() });
      if (next instanceof Error) throw ApplicationFailure.nonRetryable(next.message, 'Transient');
      if (next) return { messages: next };
      // An empty long poll waits 20 s on SQS, which a time-skipping server cannot skip while
      // the activity runs; a failed poll waits out the workflow's backoff on a timer, which it can.
      throw ApplicationFailure.nonRetryable(EMPTY, 'Transient');
    },
    deleteInterruptionMessages: async (arg) => {
      calls.push({ name: 'delete', at: at(), arg: arg.messages.map((m) => m.messageId) });
      return { deleted: arg.messages.length, failed: 0 };
    },
  };
  const control: InterruptionActivities & Pick<DisruptionActivities, 'replacementsState'> = {
    handleInterruptionMessages: async (arg) => {
      calls.push({ name: 'handle', at: at(), arg: { messages: arg.messages.map((m) => m.messageId), replacing: arg.replacing } });
      const out = world.handle(arg, at());
      if (out instanceof Error) throw ApplicationFailure.nonRetryable(out.message, 'Transient');
      return out;
    },
    cordonInterrupted: async (arg) => void calls.push({ name: 'cordon', at: at(), arg: arg.node }),
    drainInterrupted: async (arg) => {
      calls.push({ name: 'drain', at: at(), arg: arg.nodeClaim });
      return { began: true };
    },
    replacementsState: async (arg) => {
      calls.push({ name: 'replacementsState', at: at() });
      return world.initializedAt !== undefined && at() >= world.initializedAt ? { initialized: arg.names, gone: [] } : { initialized: [], gone: [] };
    },
  };
  const packing: Pick<ProvisionerActivities, 'planReplacements' | 'createClaims'> = {
    planReplacements: async (arg) => {
      calls.push({ name: 'plan', at: at(), arg: arg.unavailable });
      if (world.planFails) throw ApplicationFailure.nonRetryable(world.planFails, 'Invalid');
      return aPlan(['spot-new01']);
    },
    createClaims: async () => {
      calls.push({ name: 'create', at: at() });
      return { created: ['spot-new01'], resumed: [], refused: [] };
    },
  };
  const workers = [
    await Worker.create({ connection: h.env.nativeConnection, taskQueue: queues.control, workflowBundle: h.workflowBundle, activities: control }),
    await Worker.create({ connection: h.env.nativeConnection, taskQueue: queues.cloud, activities: cloud }),
    await Worker.create({ connection: h.env.nativeConnection, taskQueue: queues.packing, activities: packing }),
  ];
  const running = workers.map((w) => w.run());
  const handle = await h.env.client.workflow.start('interruptionWorkflow', { taskQueue: queues.control, workflowId: `autonode/${id}/interruption`, args: [{ cluster, taskQueues: queues, queue: 'q', errorBackoff: '10s' }] });
  const started = (await handle.describe()).startTime.getTime();
  await h.env.sleep(forMs);
  const status = await handle.query<InterruptionStatus>('status');
  await handle.terminate('test over');
  for (const w of workers) w.shutdown();
  await Promise.all(running);
  return { calls, status, started };
}

const replaceJob = (drainBy: number): HandledInterruptions => ({
  outcomes: [{ messageId: 'm1', kind: 'spot_interrupted', claims: [{ name: 'spot-abc12', action: 'replaceFirst' }], unmatched: 0 }],
  offerings: [{ instanceType: 'c6a.large', zone: 'us-east-1a', capacityType: 'spot' }],
  replace: [{ nodeClaim: 'spot-abc12', node: 'ip-10-0-0-1', nodePool: 'spot', kind: 'spot_interrupted', drainBy, offering: { instanceType: 'c6a.large', zone: 'us-east-1a', capacityType: 'spot' } }],
});

it('a spot warning with time to spare: cordon, plan without the offering, launch, and drain once the replacement is initialized — the message deleted at once', async () => {
  let t0 = 0;
  const { calls, status } = await runInterruption(
    {
      polls: [[spot('m1', Date.now())]],
      handle: (_arg, now) => {
        t0 = now;
        return replaceJob(now + 60_000);
      },
      get initializedAt() {
        return t0 === 0 ? undefined : t0 + 20_000;
      },
    },
    2 * MINUTE,
  );
  // the job runs beside the round: the message is deleted while the replacement is planned
  const names = calls.filter((c) => !['receive', 'replacementsState', 'delete'].includes(c.name)).map((c) => c.name);
  expect(names).toEqual(['handle', 'cordon', 'plan', 'create', 'drain']);
  expect(calls.find((c) => c.name === 'delete')!.at).toBeLessThan(calls.find((c) => c.name === 'create')!.at + 1);
  expect(calls.find((c) => c.name === 'plan')?.arg).toEqual([{ instanceType: 'c6a.large', zone: 'us-east-1a', capacityType: 'spot' }]);
  const drainAt = calls.find((c) => c.name === 'drain')!.at;
  // drained when the replacement was initialized (20 s), not at the deadline (60 s)
  expect(drainAt - t0).toBeGreaterThanOrEqual(20_000);
  expect(drainAt - t0).toBeLessThan(30_000);
  expect(status.replacing).toEqual({});
  expect(status.replaced).toEqual([expect.objectContaining({ nodeClaim: 'spot-abc12', replacements: ['spot-new01'], because: 'the replacements were initialized' })]);
  expect([status.received, status.deleted]).toEqual([1, 1]);
});

it('a replacement that never initializes: the drain begins at the deadline anyway', async () => {
  let t0 = 0;
  const { calls, status } = await runInterruption(
    {
      polls: [[spot('m1', Date.now())]],
      handle: (_arg, now) => {
        t0 = now;
        return replaceJob(now + 60_000);
      },
    },
    3 * MINUTE,
  );
  const drains = calls.filter((c) => c.name === 'drain');
  expect(drains).toHaveLength(1);
  expect(status.replaced[0]?.because).toBe('the deadline came before the replacements were initialized');
  expect(drains[0]!.at - t0).toBeGreaterThanOrEqual(60_000);
  expect(drains[0]!.at - t0).toBeLessThan(65_000);
});

it('a replacement that cannot be planned: the drain begins at once, and the status says why', async () => {
  let t0 = 0;
  const { calls, status } = await runInterruption(
    {
      polls: [[spot('m1', Date.now())]],
      handle: (_arg, now) => {
        t0 = now;
        return replaceJob(now + 60_000);
      },
      planFails: 'NodePool spot: no instance type fits',
    },
    2 * MINUTE,
  );
  expect(calls.filter((c) => !['receive', 'delete'].includes(c.name)).map((c) => c.name)).toEqual(['handle', 'cordon', 'plan', 'drain']);
  expect(calls.find((c) => c.name === 'drain')!.at - t0).toBeLessThan(5_000);
  expect(status.replaced).toEqual([expect.objectContaining({ nodeClaim: 'spot-abc12', replacements: [], because: expect.stringContaining('no instance type fits') })]);
});

it('the same warning again while the replacement runs: the claim is named as being replaced, and nothing is launched twice', async () => {
  const { calls } = await runInterruption(
    {
      polls: [[spot('m1', Date.now())], [spot('m1-again', Date.now())]],
      handle: (arg, now) => (arg.replacing?.includes('spot-abc12') ? { outcomes: [{ messageId: 'm1-again', kind: 'spot_interrupted', claims: [{ name: 'spot-abc12', action: 'none' }], unmatched: 0 }], offerings: [], replace: [] } : replaceJob(now + 60_000)),
    },
    3 * MINUTE,
  );
  const handles = calls.filter((c) => c.name === 'handle').map((c) => c.arg);
  expect(handles).toEqual([
    { messages: ['m1'], replacing: [] },
    { messages: ['m1-again'], replacing: ['spot-abc12'] },
  ]);
  expect(calls.filter((c) => c.name === 'create')).toHaveLength(1);
  expect(calls.filter((c) => c.name === 'drain')).toHaveLength(1);
  expect(calls.filter((c) => c.name === 'delete').map((c) => c.arg)).toEqual([['m1'], ['m1-again']]);
});

it('a round whose handling fails leaves its messages in the queue (SQS delivers them again), and the polling goes on', async () => {
  let failures = 1;
  const { calls, status } = await runInterruption(
    {
      polls: [[spot('m1', Date.now())], new Error('SQS away'), [spot('m1', Date.now())]],
      handle: () => (failures-- > 0 ? new Error('the API server is away') : { outcomes: [{ messageId: 'm1', kind: 'spot_interrupted', claims: [], unmatched: 1 }], offerings: [], replace: [] }),
    },
    2 * MINUTE,
  );
  expect(calls.filter((c) => c.name === 'handle')).toHaveLength(2);
  expect(calls.filter((c) => c.name === 'delete').map((c) => c.arg)).toEqual([['m1']]);
  expect(calls.filter((c) => c.name === 'receive').length).toBeGreaterThan(3);
  expect([status.received, status.deleted]).toEqual([2, 1]);
  expect(status.lastError).toBeDefined();
});

it('the enablement starts the interruption workflow when the HostedCluster names a queue, moves it when the queue changes, ends it when it goes', async () => {
  const queue = 'enablement-interruption';
  const synced: { at: number; queue: string | undefined }[] = [];
  const at = () => Context.current().info.currentAttemptScheduledTimestampMs;
  let t0: number | undefined;
  const queueAt = (now: number): string | undefined => {
    t0 ??= now;
    const minute = Math.floor((now - t0) / MINUTE);
    return minute < 1 ? undefined : minute < 2 ? 'team-a-interruption' : minute < 3 ? 'team-a-interruption-2' : undefined;
  };
  const activities: EnablementActivities = {
    observeHostedCluster: async () => {
      const interruptionQueue = queueAt(at());
      return { state: 'ok', deleting: false, config: { infraID: 'intr', region: 'us-east-1', roleARN: 'arn:aws:iam::123456789012:role/intr', releaseImage: 'quay.io/x:1', generation: 1, ...(interruptionQueue ? { interruptionQueue } : {}) } };
    },
    enableGuest: async () => ({ kubeconfigSecret: { namespace: 'clusters', name: 'intr-autonode-kubeconfig', key: 'kubeconfig' }, tokenExpiresAt: '2099-01-01T00:00:00Z', tokenRenewAfter: '2098-01-01T00:00:00Z' }),
    reconcileNodeClasses: async () => ({ images: { amd64: 'ami-0123' }, userDataHash: 'abc', created: [], updated: [], classes: 1 }),
    startClusterWorkflows: async () => undefined,
    syncInterruption: async (arg) => void synced.push({ at: at(), queue: arg.queue }),
    reportHostedCluster: async () => ({ nodeCount: 0, nodeClaimCount: 0, vCPUs: 0 }),
    stopProvisioning: async () => undefined,
    removeNodeClaims: async () => ({ nodeClaims: 0, instances: 0 }),
    disableGuest: async () => undefined,
  };
  const worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities });
  const running = worker.run();
  try {
    const handle = await h.env.client.workflow.start('enablementWorkflow', { taskQueue: queue, workflowId: 'autonode/clusters/intr', args: [{ hostedCluster: { namespace: 'clusters', name: 'intr' }, taskQueues: { control: queue }, resync: '20s' }] });
    await h.env.sleep(4 * MINUTE);
    await handle.signal('disable');
    await handle.result();
    // a queue named, changed and removed in one run (behind patched('interruption-queue')), for test/unit/replay.test.ts
    await recordHistory('enablement-interruption-queue-timeskipping', () => handle.fetchHistory());
    // once per change, never per resync
    expect(synced.map((s) => s.queue)).toEqual(['team-a-interruption', 'team-a-interruption-2', undefined]);
  } finally {
    worker.shutdown();
    await running;
  }
});
