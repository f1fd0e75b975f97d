// The disruption workflow's command steps on Temporal's time-skipping server, activities
// scripted: a command is validated after the delay before anything is touched, a command
// that no longer holds is dropped untouched, and a carried-out command taints, deletes and
// waits for its nodes.
import { Worker } from '@temporalio/worker';
import type { DisruptionActivities, PlanRoundResult } from '../../activities/disruption/activity';
import type { DisruptionCommand } from '../../core/disruption';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { type DisruptionStatus } from '../../workflows/disruption';
import { startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(120_000);

const command: DisruptionCommand = { method: 'emptiness', reason: 'Empty', candidates: [{ nodeClaim: 'a', node: 'node-a', nodePool: 'p' }], replace: false, summary: '1 empty node(s)' };

let h: TimeSkippingHarness;
let worker: Worker;
let running: Promise<void>;
const queue = 'disruption-steps';
/** per cluster: the calls made, in order, with the server time they were made at */
const calls = new Map<string, { name: string; at: number }[]>();
/** per cluster: whether validation holds, and how many polls until the nodes are gone */
const script = new Map<string, { valid: boolean; goneAfter: number }>();

beforeAll(async () => {
  h = await startTimeSkipping();
  // the server's (skipped) time: activity code runs on the real clock
  const log = (cluster: { name: string }, name: string) => {
    const list = calls.get(cluster.name) ?? [];
    const entry = { name, at: 0 };
    list.push(entry);
    calls.set(cluster.name, list);
    return h.env.currentTimeMs().then((t) => void (entry.at = t));
  };
  const rounds = new Map<string, number>();
  const activities: DisruptionActivities = {
    async planRound(input): Promise<PlanRoundResult> {
      await log(input.cluster, 'planRound');
      const n = (rounds.get(input.cluster.name) ?? 0) + 1;
      rounds.set(input.cluster.name, n);
      // the first round finds the command; later ones find nothing
      return { ...(n === 1 ? { command } : {}), considered: { emptiness: n === 1 ? 1 : 0 }, blocked: [], memory: {}, nodes: 1 };
    },
    async validateCommand(input) {
      await log(input.cluster, 'validateCommand');
      return script.get(input.cluster.name)!.valid ? { ok: true } : { ok: false, reason: 'a: it runs pods that would have to move' };
    },
    async startCommand(input) {
      await log(input.cluster, 'startCommand');
    },
    async deleteCandidates(input) {
      await log(input.cluster, 'deleteCandidates');
    },
    async commandNodesLeft(input) {
      await log(input.cluster, 'commandNodesLeft');
      const s = script.get(input.cluster.name)!;
      return s.goneAfter-- > 0 ? ['a'] : [];
    },
  };
  worker = await Worker.create({ connection: h.env.nativeConnection, taskQueue: queue, workflowBundle: h.workflowBundle, activities });
  running = worker.run();
}, 120_000);
afterAll(async () => {
  worker?.shutdown();
  await running;
  await h?.close();
});

async function runUntil(cluster: string, ok: (s: DisruptionStatus) => boolean): Promise<DisruptionStatus> {
  const handle = h.env.client.workflow.getHandle(disruptionWorkflowId(cluster));
  for (let i = 0; i < 100; i++) {
    const status = await handle.query<DisruptionStatus>('status');
    if (ok(status)) return status;
    await h.env.sleep('1s');
  }
  throw new Error(`status never matched: ${JSON.stringify(await handle.query<DisruptionStatus>('status'))}`);
}

const start = (cluster: string) =>
  h.env.client.workflow.start('disruptionWorkflow', { taskQueue: queue, workflowId: disruptionWorkflowId(cluster), args: [{ cluster: { name: cluster, region: 'us-east-1' }, taskQueues: { control: queue } }] });

it('a command that still holds after the 15 s delay is carried out: taint, delete, wait until the nodes are gone', async () => {
  script.set('holds', { valid: true, goneAfter: 2 });
  const handle = await start('holds');
  const status = await runUntil('holds', (s) => s.lastCommand !== undefined);
  expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command }));
  expect(status.commands).toBe(1);
  const made = calls.get('holds')!;
  expect(made.slice(0, 7).map((c) => c.name)).toEqual(['planRound', 'validateCommand', 'startCommand', 'deleteCandidates', 'commandNodesLeft', 'commandNodesLeft', 'commandNodesLeft']);
  // Karpenter's commandValidationDelay: nothing is touched for 15 s after the decision
  expect(made[1]!.at - made[0]!.at).toBeGreaterThanOrEqual(15_000);
  // right after a command, the next round at once (not after the poll interval)
  await runUntil('holds', (s) => s.rounds >= 2);
  await handle.terminate('test over');
});

it('a command that no longer holds is dropped before any node is touched', async () => {
  script.set('stale', { valid: false, goneAfter: 0 });
  const handle = await start('stale');
  const status = await runUntil('stale', (s) => s.lastCommand !== undefined);
  expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'abandoned', why: 'a: it runs pods that would have to move' }));
  expect(status.commands).toBe(0);
  expect(calls.get('stale')!.map((c) => c.name)).not.toContain('startCommand');
  expect(calls.get('stale')!.map((c) => c.name)).not.toContain('deleteCandidates');
  await handle.terminate('test over');
});
