// Replays committed workflow histories against today's workflow code: a change to a
// workflow's command sequence that old runs cannot replay fails here, in CI, before it
// can break a running NodeClaim's life in production (STYLE.md 15: patched() or versioning).
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AesGcmPayloadCodec } from '../../workers/codec/aes-gcm-codec';
import { aKeyring } from '../support/payload-keys';

const dir = join(__dirname, '..', 'fixtures', 'histories');
const histories = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

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
