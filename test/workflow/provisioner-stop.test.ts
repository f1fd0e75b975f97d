// Stopping a provisioner for a teardown, on Temporal's time-skipping test server: once
// stopped it plans nothing more and stays running, so the watcher's doorbell (signal with
// start) cannot bring a fresh provisioner back while the cluster's nodes drain.
import { Worker } from '@temporalio/worker';
import type { ProvisionBatchInput, ProvisionerActivities } from '../../activities/provisioner/activity';
import type { BatchResult, CreatedClaims, PlannedBatch } from '../../core/provisioning';
import { provisionerWorkflowId } from '../../core/lifecycle';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(120_000);

let h: TimeSkippingHarness;
let packing: Worker;
let running: Promise<void>;
const planned: string[] = [];
const packingQueue = 'packing-stop';

beforeAll(async () => {
  h = await startTimeSkipping();
  const empty = (batchId: string): PlannedBatch => ({ batchId, pending: 0, nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [], templates: [], optionLists: [], claims: [], poolStatus: [] });
  const activities: ProvisionerActivities = {
    async provisionBatch(input: ProvisionBatchInput): Promise<BatchResult> {
      throw new Error(`unexpected pre-patch batch ${input.batchId}`);
    },
    async planBatch(input: ProvisionBatchInput): Promise<PlannedBatch> {
      planned.push(input.cluster.name);
      return empty(input.batchId);
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

const args = (cluster: string) => [{ cluster: { name: cluster, region: 'us-east-1' }, taskQueues: { packing: packingQueue } }];
const plannedFor = (cluster: string) => planned.filter((c) => c === cluster).length;

async function statusWhen(handle: { query: <T>(q: string) => Promise<T> }, ok: (s: ProvisionerStatus) => boolean): Promise<ProvisionerStatus> {
  for (let i = 0; i < 100; i++) {
    const status = await handle.query<ProvisionerStatus>('status');
    if (ok(status)) return status;
    await h.env.sleep('2s');
  }
  throw new Error(`provisioner status never matched: ${JSON.stringify(await handle.query<ProvisionerStatus>('status'))}`);
}

/** What the watcher does when pods are pending. */
const doorbell = (cluster: string) =>
  h.env.client.workflow.signalWithStart('provisionerWorkflow', { taskQueue: packingQueue, workflowId: provisionerWorkflowId(cluster), args: args(cluster), signal: 'podsPending', signalArgs: [] });

it('a stopped provisioner plans nothing more, stays running, and the doorbell cannot restart it', async () => {
  const cluster = 'stop-idle';
  const handle = await h.env.client.workflow.start('provisionerWorkflow', { taskQueue: packingQueue, workflowId: provisionerWorkflowId(cluster), args: args(cluster) });
  await statusWhen(handle, (s) => s.batches === 1 && !s.batching);
  // the doorbell still plans before the stop
  await doorbell(cluster);
  await statusWhen(handle, (s) => s.batches === 2 && !s.batching);
  expect(plannedFor(cluster)).toBe(2);

  await handle.signal('stop', 'autonode is being disabled for this cluster');
  const stopped = await statusWhen(handle, (s) => s.stopped !== undefined);
  expect(stopped.stopped).toBe('autonode is being disabled for this cluster');
  for (let i = 0; i < 5; i++) {
    await doorbell(cluster);
    await h.env.sleep('15s');
  }
  expect(plannedFor(cluster)).toBe(2);
  const described = await handle.describe();
  expect(described.status.name).toBe('RUNNING');
  // the doorbell signalled the same run: no new provisioner started
  expect((await h.env.client.workflow.getHandle(provisionerWorkflowId(cluster)).describe()).runId).toBe(described.runId);
  await handle.terminate('test over');
});

it('a stop during an open batch window drops the batch before it is planned', async () => {
  const cluster = 'stop-window';
  const handle = await h.env.client.workflow.start('provisionerWorkflow', { taskQueue: packingQueue, workflowId: provisionerWorkflowId(cluster), args: [{ ...args(cluster)[0], batchIdle: '30s', batchMax: '60s' }] });
  // the first (start-up) batch's window is open
  await statusWhen(handle, (s) => s.batching);
  await handle.signal('stop', 'teardown');
  await statusWhen(handle, (s) => s.stopped === 'teardown');
  await h.env.sleep('2m');
  expect(plannedFor(cluster)).toBe(0);
  await handle.terminate('test over');
});

it('a provisioner started by the stop signal itself starts parked', async () => {
  const cluster = 'stop-cold';
  const handle = await h.env.client.workflow.signalWithStart('provisionerWorkflow', { taskQueue: packingQueue, workflowId: provisionerWorkflowId(cluster), args: args(cluster), signal: 'stop', signalArgs: ['teardown'] });
  await statusWhen(handle, (s) => s.stopped === 'teardown');
  await doorbell(cluster);
  await h.env.sleep('1m');
  expect(plannedFor(cluster)).toBe(0);
  await handle.terminate('test over');
});
