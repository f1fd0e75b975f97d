// Replays committed workflow histories against today's workflow code: a change to a
// workflow's command sequence that old runs cannot replay fails here, in CI, before it
// can break a running NodeClaim's life in production (STYLE.md 15: patched() or versioning).
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AesGcmPayloadCodec } from '../../workers/codec/aes-gcm-codec';
import { aKeyring } from '../support/payload-keys';
import { alteredWorkflowBundle, type SourceEdit } from '../support/replay/altered-bundle';

const dir = join(__dirname, '..', 'fixtures', 'histories');
const histories = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const historyOf = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));

describe('workflow replay of committed histories', () => {
  let workflowBundle: { code: string };
  beforeAll(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch (err) {
      if (!(err instanceof Error && /already/i.test(err.message))) throw err;
    }
    workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
  }, 120_000);

  it('has histories to replay', () => {
    expect(histories.length).toBeGreaterThan(0);
  });

  it.each(histories)('%s replays without nondeterminism', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    await expect(Worker.runReplayHistory({ workflowBundle }, history)).resolves.toBeUndefined();
  }, 60_000);

  // Turning payload encryption on (AUTONODE_PAYLOAD_KEYS_FILE) must not break runs recorded
  // without it: the codec passes their plain payloads through.
  it.each(histories)('%s replays on a worker that encrypts payloads', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    const dataConverter = { payloadCodecs: [new AesGcmPayloadCodec(aKeyring(['k1']))] };
    await expect(Worker.runReplayHistory({ workflowBundle, dataConverter }, history)).resolves.toBeUndefined();
  }, 60_000);
});

/**
 * The gate tested: the workflow code with one deliberate change that alters the commands an
 * old run recorded must fail to replay that run, with the error a broken deploy would hit —
 * else the passes above prove nothing. And a change Temporal does not check (a timer's
 * length) must still replay: the gate fails on nondeterminism, not on any change.
 */
describe('the replay gate fails on a nondeterministic change', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch (err) {
      if (!(err instanceof Error && /already/i.test(err.message))) throw err;
    }
  });

  it('every committed history fails on workflows that run one more command (a timer) before their first step', async () => {
    const workflowBundle = await alteredWorkflowBundle({ interceptorModules: [require.resolve('../support/replay/extra-timer-interceptor')] });
    const outcomes = await Promise.all(histories.map(async (file) => {
      const error = await Worker.runReplayHistory({ workflowBundle }, historyOf(file)).then(() => undefined, (err: unknown) => err);
      return { file, failed: error instanceof DeterminismViolationError };
    }));
    expect(outcomes.filter((o) => !o.failed).map((o) => o.file)).toEqual([]);
    expect(outcomes.length).toBe(histories.length);
  }, 120_000);

  // Each: a history recorded before a patch, and the edit that drops the patch (its new path
  // taken by every run, the mistake patched() exists to prevent); and a revert.
  const droppedPatches: { history: string; what: string; edit: SourceEdit }[] = [
    { history: 'provisioner-batches.json', what: "patched('plan-then-create') dropped", edit: { file: 'workflows/provisioner.ts', from: "patched('plan-then-create')", to: 'true' } },
    { history: 'nodeclaim-v1-happy-path.json', what: 'patched(LIFECYCLE_AS_DATA) dropped', edit: { file: 'workflows/nodeclaim.ts', from: 'patched(LIFECYCLE_AS_DATA)', to: 'true' } },
    { history: 'watch-gc-failures-before-patch.json', what: "patched('surface-gc-failures') dropped", edit: { file: 'workflows/watch.ts', from: "patched('surface-gc-failures')", to: 'true' } },
    // and the other way: the new path's history on code that went back to the old one
    { history: 'provisioner-plan-then-create.json', what: "the plan-then-create path reverted", edit: { file: 'workflows/provisioner.ts', from: "patched('plan-then-create')", to: 'false' } },
  ];
  it.each(droppedPatches)('$history fails to replay with $what', async ({ history, edit }) => {
    const workflowBundle = await alteredWorkflowBundle({ edits: [edit] });
    await expect(Worker.runReplayHistory({ workflowBundle }, historyOf(history))).rejects.toBeInstanceOf(DeterminismViolationError);
  }, 120_000);

  it('disruption-many-to-many-timeskipping.json fails to replay once the command\'s validation step is removed', async () => {
    const workflowBundle = await alteredWorkflowBundle({ edits: [{ file: 'workflows/disruption.ts', from: 'const valid = await rounds.validateCommand({ cluster, command, memory, batchMaxMs });', to: "const valid = { ok: true, reason: '' };" }] });
    await expect(Worker.runReplayHistory({ workflowBundle }, historyOf('disruption-many-to-many-timeskipping.json'))).rejects.toBeInstanceOf(DeterminismViolationError);
  }, 120_000);

  it('a change Temporal does not check (the nodeclaim waits a different length) still replays', async () => {
    const workflowBundle = await alteredWorkflowBundle({ edits: [{ file: 'workflows/nodeclaim.ts', from: 'resyncMs: durationToMs(t.resync) ?? 15_000', to: 'resyncMs: (durationToMs(t.resync) ?? 15_000) + 1' }] });
    await expect(Worker.runReplayHistory({ workflowBundle }, historyOf('nodeclaim-happy-path.json'))).resolves.toBeUndefined();
  }, 120_000);
});
