// The disruption workflow's command steps on Temporal's time-skipping server, activities
// scripted: a command is validated after the delay before anything is touched, a command
// that no longer holds is dropped untouched, and a carried-out command taints, deletes and
// waits for its nodes.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { DisruptionActivities, PlanRoundResult } from '../../activities/disruption/activity';
import type { MultiNodeSimulation, ProvisionerActivities } from '../../activities/provisioner/activity';
import type { CompactClaim, PlannedBatch } from '../../core/provisioning';
import type { CommandCandidate, DisruptionCommand } from '../../core/disruption';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { recordHistory } from '../support/histories';
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
/** what holds the 'slowcloud' cluster's cloud pass */
const slowPass: { promise: Promise<void>; release: () => void } = (() => {
  let release = () => {};
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
})();
/** per cluster: the server times of its cloud passes (kept apart from `calls`: they run on their own cadence) */
const cloudPasses = new Map<string, number[]>();

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
  const activities: DisruptionActivities & Pick<ProvisionerActivities, 'simulateMultiNodeConsolidation' | 'simulateConsolidation' | 'revalidateConsolidation' | 'createClaims'> = {
    async planRound(input): Promise<PlanRoundResult> {
      await log(input.cluster, 'planRound');
      const n = (rounds.get(input.cluster.name) ?? 0) + 1;
      rounds.set(input.cluster.name, n);
      const multi = multiNode.get(input.cluster.name);
      // multi-node clusters: the same three consolidation candidates every round, their pods unchanged
      if (multi) return { consolidate: multi.candidates, multiNode: multi.candidates, considered: { consolidation: 3 }, blocked: [], memory: {}, nodes: 3 };
      // the first round finds the command; later ones find nothing ('edited': its node classes change at round 5)
      return { ...(n === 1 ? { command } : {}), ...(input.cluster.name === 'edited' ? { classesKey: n >= 5 ? 'b' : 'a' } : {}), considered: { emptiness: n === 1 ? 1 : 0 }, blocked: [], memory: {}, nodes: 1 };
    },
    async simulateMultiNodeConsolidation(input): Promise<MultiNodeSimulation> {
      await log(input.cluster, 'simulateMultiNodeConsolidation');
      if (input.cluster.name === 'flaky') throw ApplicationFailure.nonRetryable('resource ephemeral-storage is not a known dimension');
      const multi = multiNode.get(input.cluster.name)!;
      if (multi.result.decision.kind !== 'reject' && (rounds.get(input.cluster.name) ?? 0) > 1) return { simulations: 1, tried: [], candidates: [], decision: { kind: 'reject', reason: 'done already' } };
      return multi.result;
    },
    async simulateConsolidation(input) {
      await log(input.cluster, 'simulateConsolidation');
      return { planned: planned(input.batchId, []), decision: { kind: 'reject', reason: 'its pods would need 2 new nodes' } };
    },
    async revalidateConsolidation(input) {
      await log(input.cluster, `revalidateConsolidation ${input.decided.kind}`);
      return resimulated.get(input.cluster.name) ?? { ok: true };
    },
    async createClaims(input) {
      await log(input.cluster, `createClaims ${input.claims.map((c) => c.name).join(',')}`);
      return { created: input.claims.map((c) => c.name), resumed: [], refused: [] };
    },
    async refreshCloudFacts(input) {
      const t = await h.env.currentTimeMs();
      cloudPasses.set(input.cluster.name, [...(cloudPasses.get(input.cluster.name) ?? []), t]);
      // 'slowcloud': its pass holds until the test lets it go (EC2 slow, or its worker restarting)
      if (input.cluster.name === 'slowcloud') {
        const beat = setInterval(() => Context.current().heartbeat(), 200);
        await slowPass.promise.finally(() => clearInterval(beat));
      }
      if (input.cluster.name === 'cloudless') throw ApplicationFailure.nonRetryable('UnauthorizedOperation: ec2:DescribeInstances');
      return { instances: 2, classesWritten: 0, claimsWritten: 1 };
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
    async replacementsState(input) {
      await log(input.cluster, 'replacementsState');
      return { initialized: input.names, gone: [] };
    },
    async abandonCommand(input) {
      await log(input.cluster, 'abandonCommand');
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
  // (a held pass would keep the worker from shutting down)
  slowPass.release();
  worker?.shutdown();
  await running;
  await h?.close();
});

async function runUntil(cluster: string, ok: (s: DisruptionStatus) => boolean, step = '1s'): Promise<DisruptionStatus> {
  const handle = h.env.client.workflow.getHandle(disruptionWorkflowId(cluster));
  for (let i = 0; i < 100; i++) {
    const status = await handle.query<DisruptionStatus>('status');
    if (ok(status)) return status;
    await h.env.sleep(step);
  }
  throw new Error(`status never matched: ${JSON.stringify(await handle.query<DisruptionStatus>('status'))}`);
}

const start = (cluster: string) =>
  h.env.client.workflow.start('disruptionWorkflow', { taskQueue: queue, workflowId: disruptionWorkflowId(cluster), args: [{ cluster: { name: cluster, region: 'us-east-1' }, taskQueues: { control: queue, packing: queue } }] });

const planned = (batchId: string, claims: CompactClaim[]): PlannedBatch => ({ batchId, pending: 0, nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [], templates: [], optionLists: [['m5.xlarge']], claims, poolStatus: [] });
const candidate = (name: string): CommandCandidate => ({ nodeClaim: name, node: `node-${name}`, nodePool: 'p' });
/** per cluster: what the re-simulation at validation says (default: the same shape) */
const resimulated = new Map<string, { ok: true } | { ok: false; reason: string }>();
/** per cluster: multi-node candidates every round, and what their simulation finds */
const multiNode = new Map<string, { candidates: CommandCandidate[]; result: MultiNodeSimulation }>();

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
  // committed for test/unit/replay.test.ts (npm run record:histories): validate, taint, delete, wait gone
  await recordHistory('disruption-command-timeskipping', () => handle.fetchHistory());
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

it('many-to-many: the longest worthwhile prefix is re-packed — replacements launched and Initialized before the candidates go', async () => {
  const claim = (name: string): CompactClaim => ({ name, pool: 'p', options: 0, requirements: [], requests: { cpu: '1' }, price: 0.19, pods: 1 });
  multiNode.set('repack', {
    candidates: ['a', 'b', 'c'].map(candidate),
    result: {
      simulations: 2,
      tried: [],
      candidates: [{ nodeClaim: 'a', node: 'node-a' }, { nodeClaim: 'b', node: 'node-b' }],
      planned: planned('sim', [claim('r-1'), claim('r-2')]),
      decision: { kind: 'repack', claims: [{ claim: 'r-1', options: ['m5.xlarge'], capacityTypes: ['on-demand'] }, { claim: 'r-2', options: ['m5.xlarge'], capacityTypes: ['on-demand'] }], savingsPerHour: 0.2, worstSavingsPerHour: 0.1, pricePerHour: 0.38 },
      lpBoundPerHour: 0.35,
    },
  });
  script.set('repack', { valid: true, goneAfter: 0 });
  const handle = await start('repack');
  const status = await runUntil('repack', (s) => s.lastCommand !== undefined);
  expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'done' }));
  expect(status.lastCommand!.command).toEqual(expect.objectContaining({ method: 'consolidation', reason: 'Underutilized', replace: true, candidates: [candidate('a'), candidate('b')], summary: expect.stringContaining('the pods of 2 nodes re-packed into 2 cheaper nodes') }));
  expect(status.lastCommand!.command.summary).toContain('new nodes $0.3800/h, LP bound $0.3500/h (1.086×)');
  const made = calls.get('repack')!.map((c) => c.name);
  expect(made.slice(0, 9)).toEqual(['planRound', 'simulateMultiNodeConsolidation', 'validateCommand', 'revalidateConsolidation repack', 'startCommand', 'createClaims r-1,r-2', 'replacementsState', 'deleteCandidates', 'commandNodesLeft']);
  // the multi-node round and its command: taint, replacements, wait Initialized, delete
  await recordHistory('disruption-many-to-many-timeskipping', () => handle.fetchHistory());
  await handle.terminate('test over');
});

it('a multi-node set found not worth it is not simulated again while its pods stay the same; single-node goes on', async () => {
  multiNode.set('same', { candidates: ['a', 'b', 'c'].map(candidate), result: { simulations: 2, tried: [], candidates: [], decision: { kind: 'reject', reason: 'saves less than 5 %' } } });
  const handle = await start('same');
  await runUntil('same', (s) => s.rounds >= 3);
  const made = calls.get('same')!.map((c) => c.name);
  expect(made.filter((n) => n === 'simulateMultiNodeConsolidation')).toHaveLength(1);
  expect(made.filter((n) => n === 'simulateConsolidation').length).toBeGreaterThanOrEqual(1);
  await handle.terminate('test over');
});

it('a set held back only for now (pending pods waiting for new nodes) is simulated again next round, its pods unchanged', async () => {
  multiNode.set('waiting', { candidates: ['a', 'b', 'c'].map(candidate), result: { simulations: 2, tried: [], candidates: [], decision: { kind: 'reject', reason: '4 pending pod(s) need new nodes: the provisioner launches for them before consolidation moves pods', transient: true } } });
  const handle = await start('waiting');
  const status = await runUntil('waiting', (s) => s.rounds >= 3);
  expect(status.lastMultiNode?.verdict).toMatch(/pending pod\(s\) need new nodes/);
  const made = calls.get('waiting')!.map((c) => c.name);
  expect(made.filter((n) => n === 'simulateMultiNodeConsolidation').length).toBeGreaterThanOrEqual(3);
  await handle.terminate('test over');
});

it('a consolidation whose re-simulation after the delay no longer has its shape is dropped before any node is touched', async () => {
  const claim: CompactClaim = { name: 'r-1', pool: 'p', options: 0, requirements: [], requests: { cpu: '1' }, price: 0.19, pods: 1 };
  multiNode.set('moved', {
    candidates: ['a', 'b'].map(candidate),
    result: {
      simulations: 1,
      tried: [],
      candidates: [{ nodeClaim: 'a', node: 'node-a' }, { nodeClaim: 'b', node: 'node-b' }],
      planned: planned('sim', [claim]),
      decision: { kind: 'replace', claim: 'r-1', options: ['m5.xlarge'], capacityTypes: ['on-demand'], savingsPerHour: 0.1 },
    },
  });
  script.set('moved', { valid: true, goneAfter: 0 });
  resimulated.set('moved', { ok: false, reason: 're-simulated after the validation delay: its pods now need 2 new nodes, not one' });
  const handle = await start('moved');
  const status = await runUntil('moved', (s) => s.lastCommand !== undefined);
  expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'abandoned', why: expect.stringContaining('its pods now need 2 new nodes') }));
  const made = calls.get('moved')!.map((c) => c.name);
  expect(made.slice(0, 4)).toEqual(['planRound', 'simulateMultiNodeConsolidation', 'validateCommand', 'revalidateConsolidation replace']);
  for (const step of ['startCommand', 'deleteCandidates']) expect(made).not.toContain(step);
  expect(made.filter((n) => n.startsWith('createClaims'))).toEqual([]);
  await handle.terminate('test over');
});

it('an emptiness command is not re-simulated (nothing moves; its validation re-checks it is still empty)', async () => {
  expect(calls.get('holds')!.map((c) => c.name)).not.toContainEqual(expect.stringContaining('revalidateConsolidation'));
});

it('a simulation that fails every retry is a rejected set, not the end of the workflow: the rounds go on', async () => {
  multiNode.set('flaky', { candidates: ['a', 'b'].map(candidate), result: { simulations: 0, tried: [], candidates: [], decision: { kind: 'reject', reason: 'unused' } } });
  const handle = await start('flaky');
  const status = await runUntil('flaky', (s) => s.rounds >= 3);
  expect(status.lastMultiNode?.verdict).toBe('simulation failed: resource ephemeral-storage is not a known dimension');
  // not simulated again until its pods change (as any rejected set)
  expect(calls.get('flaky')!.filter((c) => c.name === 'simulateMultiNodeConsolidation')).toHaveLength(1);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  await handle.terminate('test over');
});

// (these workflows poll every second: the time-skipping server does not always skip in this
// file once earlier tests have run, so a 10-second poll would make them minutes long)
const beginFast = (cluster: string, cloudFactsInterval: string) =>
  h.env.client.workflow.start('disruptionWorkflow', { taskQueue: queue, workflowId: disruptionWorkflowId(cluster), args: [{ cluster: { name: cluster, region: 'us-east-1' }, taskQueues: { control: queue, packing: queue }, pollInterval: '1s', cloudFactsInterval }] });

it('the cloud pass runs at the start and then every cloudFactsInterval, not in each round', async () => {
  script.set('cloudy', { valid: true, goneAfter: 0 });
  const handle = await beginFast('cloudy', '10s');
  const cloudy = await runUntil('cloudy', (s) => s.rounds >= 25);
  expect(cloudy.lastCloudFacts).toEqual(expect.objectContaining({ instances: 2, classesWritten: 0, claimsWritten: 1 }));
  const passes = cloudPasses.get('cloudy')!;
  const rounds = calls.get('cloudy')!.filter((c) => c.name === 'planRound');
  // 25 rounds a second apart (and a 15 s command): at least two passes, 10 s apart, the first before the first round
  expect(passes.length).toBeGreaterThanOrEqual(2);
  expect(passes.length).toBeLessThan(rounds.length / 4);
  expect(passes[0]!).toBeLessThanOrEqual(rounds[0]!.at);
  expect(passes[1]! - passes[0]!).toBeGreaterThanOrEqual(9_000);
  await handle.terminate('test over');
});

it('a cloud pass that fails every attempt leaves the rounds going and is tried again a minute later, not at the interval', async () => {
  script.set('cloudless', { valid: true, goneAfter: 0 });
  const handle = await beginFast('cloudless', '10m');
  const failing = await runUntil('cloudless', (s) => s.rounds >= 5 && (cloudPasses.get('cloudless')?.length ?? 0) >= 2, '5s');
  expect(failing.lastCloudFactsError?.message).toBe('UnauthorizedOperation: ec2:DescribeInstances');
  expect(failing.lastCloudFacts).toBeUndefined();
  // (the failure is non-retryable: one attempt a pass) the next pass a minute after the first
  const tries = cloudPasses.get('cloudless')!;
  // (each try's time is read by the activity as it runs, a few ms after it was scheduled)
  expect(tries[1]! - tries[0]!).toBeGreaterThanOrEqual(59_000);
  expect(tries[1]! - tries[0]!).toBeLessThan(600_000);
  await handle.terminate('test over');
}, 180_000);

it('a slow cloud pass holds the rounds only for cloudFactsWait, then they go on beside it', async () => {
  script.set('slowcloud', { valid: true, goneAfter: 0 });
  const handle = await h.env.client.workflow.start('disruptionWorkflow', {
    taskQueue: queue,
    workflowId: disruptionWorkflowId('slowcloud'),
    args: [{ cluster: { name: 'slowcloud', region: 'us-east-1' }, taskQueues: { control: queue, packing: queue }, pollInterval: '1s', cloudFactsInterval: '10m', cloudFactsWait: '2s' }],
  });
  // (an activity in flight keeps the test server from skipping time: these are real seconds)
  const beside = await runUntil('slowcloud', (s) => s.rounds >= 4);
  expect(beside.cloudFactsRunningSince).toBeDefined();
  expect(beside.lastCloudFacts).toBeUndefined();
  expect(cloudPasses.get('slowcloud')).toHaveLength(1);
  slowPass.release();
  const after = await runUntil('slowcloud', (s) => s.lastCloudFacts !== undefined);
  expect(after.cloudFactsRunningSince).toBeUndefined();
  // one pass for all those rounds: the next is due 10 minutes after it started
  expect(cloudPasses.get('slowcloud')).toHaveLength(1);
  await handle.terminate('test over');
});

it('a node class edit seen by a round brings the cloud pass forward: the next round judges drift by what the class resolves to now', async () => {
  script.set('edited', { valid: true, goneAfter: 0 });
  const handle = await beginFast('edited', '1h');
  await runUntil('edited', (s) => s.rounds >= 8);
  const passes = cloudPasses.get('edited')!;
  const rounds = calls.get('edited')!.filter((c) => c.name === 'planRound');
  // the first pass, then one right after round 5 saw the edit (before round 6), and none for the hour after
  expect(passes).toHaveLength(2);
  expect(passes[1]!).toBeGreaterThanOrEqual(rounds[4]!.at);
  expect(passes[1]!).toBeLessThanOrEqual(rounds[5]!.at);
  await handle.terminate('test over');
});
