// The provisioner's unavailable-offerings memory, fed by NodeClaim launches, on Temporal's
// time-skipping test server: the real nodeclaim and provisioner workflows, activities
// scripted. A launch that succeeded after the fleet refused some offerings reports them
// (recorded, no re-plan); a launch that ended in insufficient capacity reports them as it
// always did (recorded, re-planned).
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { type temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { ProvisionBatchInput, ProvisionerActivities } from '../../activities/provisioner/activity';
import type { BatchResult, CreatedClaims, PlannedBatch } from '../../core/provisioning';
import { provisionerWorkflowId, type OfferingRef } from '../../core/lifecycle';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { instance, named, startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(120_000);

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const exhausted: OfferingRef[] = [
  { instanceType: 'c5.large', zone: 'us-east-1a', capacityType: 'on-demand' },
  { instanceType: 'c5.large', zone: 'us-east-1b', capacityType: 'on-demand' },
];
const key = (o: OfferingRef) => `${o.instanceType}/${o.zone}/${o.capacityType}`;

let h: TimeSkippingHarness;
let packing: Worker;
let running: Promise<void>;
const batches: ProvisionBatchInput[] = [];
const packingQueue = 'packing-partial-ice';

beforeAll(async () => {
  h = await startTimeSkipping();
  // Every batch plans nothing: the test is about what the provisioner holds and when it plans.
  const activities: ProvisionerActivities = {
    async provisionBatch(input: ProvisionBatchInput): Promise<BatchResult> {
      batches.push(input);
      return { batchId: input.batchId, pending: 0, created: [], resumed: [], nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [] };
    },
    async planBatch(input: ProvisionBatchInput): Promise<PlannedBatch> {
      batches.push(input);
      return { batchId: input.batchId, pending: 0, nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [], templates: [], optionLists: [], claims: [], poolStatus: [] };
    },
    async planReplacements(): Promise<PlannedBatch> {
      throw new Error('not in this test');
    },
    async simulateConsolidation(): Promise<never> {
      throw new Error('not in this test');
    },
    async simulateMultiNodeConsolidation(): Promise<never> {
      throw new Error('not in this test');
    },
    async revalidateConsolidation(): Promise<never> {
      throw new Error('not in this test');
    },
    async createClaims(): Promise<CreatedClaims> {
      return { created: [], resumed: [], refused: [] };
    },
  };
  packing = await Worker.create({ connection: h.env.nativeConnection, taskQueue: packingQueue, workflowBundle: h.workflowBundle, activities });
  running = packing.run();
}, 120_000);
afterAll(async () => {
  packing?.shutdown();
  await running;
  await h?.close();
});

/** A provisioner for `cluster` that has run its first (start-up) batch and waits for a doorbell. */
async function startProvisioner(cluster: string) {
  const handle = await h.env.client.workflow.start('provisionerWorkflow', {
    taskQueue: packingQueue,
    workflowId: provisionerWorkflowId(cluster),
    args: [{ cluster: { name: cluster, region: 'us-east-1' }, taskQueues: { packing: packingQueue } }],
  });
  await statusWhen(handle, (s) => s.batches === 1 && !s.batching);
  return handle;
}

type ProvisionerHandle = Awaited<ReturnType<typeof startProvisioner>>;

/** Polls the provisioner's status, letting server time run on (batch windows are timers). */
async function statusWhen(handle: { query: ProvisionerHandle['query'] }, ok: (s: ProvisionerStatus) => boolean): Promise<ProvisionerStatus> {
  for (let i = 0; i < 100; i++) {
    const status = await handle.query<ProvisionerStatus>('status');
    if (ok(status)) return status;
    await h.env.sleep('2s');
  }
  throw new Error(`provisioner status never matched: ${JSON.stringify(await handle.query<ProvisionerStatus>('status'))}`);
}

/** The claim is deleted as soon as it has launched: its life ends without long waits. */
function deletedAfterLaunch() {
  let launchedAt: number | undefined;
  return {
    launchedAt: () => launchedAt ?? Number.NaN,
    claim: (now: number) => ({ exists: true, deleting: launchedAt !== undefined && now > launchedAt }),
    mark: (now: number) => void (launchedAt ??= now),
  };
}

const quick = { resync: '1s', steadyResync: '1s' };

const signalsIn = (events: HistoryEvent[]) => events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'offeringsUnavailable');
/** Commands the provisioner issued after the last offeringsUnavailable signal: a re-plan starts a batch window timer. */
function commandsAfterLastSignal(events: HistoryEvent[]): HistoryEvent[] {
  const last = events.lastIndexOf(signalsIn(events).at(-1) ?? {});
  return events.slice(last + 1).filter((e) => e.timerStartedEventAttributes || e.activityTaskScheduledEventAttributes);
}
function patchesIn(events: HistoryEvent[]): unknown[] {
  return events.flatMap((e) => {
    const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return payload ? [defaultPayloadConverter.fromPayload(payload)] : [];
  });
}

describe('the provisioner remembers offerings a launch found exhausted (time-skipping)', () => {
  it('a claim launched after a partial fleet error has the provisioner hold the refused offerings, without a re-plan', async () => {
    const cluster = 'pice-partial';
    const provisioner = await startProvisioner(cluster);
    const claim = deletedAfterLaunch();
    const { result, calls, workflowId } = await h.run(
      {
        claim: claim.claim,
        launch: (now) => {
          claim.mark(now);
          return { ...instance, exhaustedOfferings: exhausted };
        },
      },
      { cluster: { name: cluster, region: 'us-east-1' }, timeouts: quick },
      undefined,
      { step: '1s' },
    );
    // the claim's own life is untouched: it ran on its instance, without the field in its state
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    expect(result.instance).toEqual(instance);
    expect(named(calls, 'reviewRegistration')[0]?.input).toEqual(expect.objectContaining({ instance }));
    const claimHistory = (await h.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(patchesIn(claimHistory)).toContainEqual(expect.objectContaining({ id: 'partial-ice-memory' }));

    const status = await statusWhen(provisioner, (s) => s.unavailableOfferings.length > 0);
    expect(status.unavailableOfferings.map(key).sort()).toEqual(exhausted.map(key).sort());
    for (const held of status.unavailableOfferings) {
      // held 3 minutes from the report (server time: the launch was scheduled just before it)
      const heldFor = Date.parse(held.until) - claim.launchedAt();
      expect(heldFor).toBeGreaterThan(2 * 60_000);
      expect(heldFor).toBeLessThanOrEqual(3 * 60_000 + 30_000);
    }
    const history = (await provisioner.fetchHistory()).events ?? [];
    const signals = signalsIn(history);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.workflowExecutionSignaledEventAttributes?.input?.payloads).toHaveLength(2);
    // recorded only: no batch window opened, no batch ran
    expect(commandsAfterLastSignal(history)).toEqual([]);
    expect(status.batches).toBe(1);

    // The next batch, rung by anyone, plans without them.
    await provisioner.signal('podsPending');
    await statusWhen(provisioner, (s) => s.batches === 2);
    const last = batches.filter((b) => b.cluster.name === cluster).at(-1);
    expect((last?.unavailable ?? []).map(key).sort()).toEqual(exhausted.map(key).sort());
    await provisioner.terminate('test done');
  });

  it('records the patch marker only on a launch that reported something, and sends nothing otherwise', async () => {
    const cluster = 'pice-clean';
    const provisioner = await startProvisioner(cluster);
    const claim = deletedAfterLaunch();
    const { result, workflowId } = await h.run(
      {
        claim: claim.claim,
        launch: (now) => {
          claim.mark(now);
          return instance;
        },
      },
      { cluster: { name: cluster, region: 'us-east-1' }, timeouts: quick },
      undefined,
      { step: '1s' },
    );
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    const claimHistory = (await h.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(claimHistory.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
    expect(patchesIn(claimHistory)).not.toContainEqual(expect.objectContaining({ id: 'partial-ice-memory' }));
    const status = await provisioner.query<ProvisionerStatus>('status');
    expect(status.unavailableOfferings).toEqual([]);
    expect(signalsIn((await provisioner.fetchHistory()).events ?? [])).toEqual([]);
    await provisioner.terminate('test done');
  });

  it('a claim that ends in insufficient capacity still sends the one-argument signal, and the provisioner re-plans', async () => {
    const cluster = 'pice-ice';
    const provisioner = await startProvisioner(cluster);
    const { result } = await h.run(
      {
        launch: () => {
          throw ApplicationFailure.create({ type: 'InsufficientCapacity', nonRetryable: true, message: 'insufficient capacity', details: [{ offerings: exhausted.map((o) => ({ ...o, reason: 'InsufficientInstanceCapacity' })) }] });
        },
      },
      { cluster: { name: cluster, region: 'us-east-1' }, timeouts: quick },
      undefined,
      { step: '1s' },
    );
    expect(result.end).toEqual({ kind: 'insufficientCapacity', offerings: exhausted });
    const status = await statusWhen(provisioner, (s) => s.batches === 2);
    expect(status.unavailableOfferings.map(key).sort()).toEqual(exhausted.map(key).sort());
    const history = (await provisioner.fetchHistory()).events ?? [];
    const signals = signalsIn(history);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.workflowExecutionSignaledEventAttributes?.input?.payloads).toHaveLength(1);
    expect(commandsAfterLastSignal(history).length).toBeGreaterThan(0);
    await provisioner.terminate('test done');
  });
});
