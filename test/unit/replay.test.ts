// Replays committed workflow histories against today's workflow code: a change to a
// workflow's command sequence that old runs cannot replay fails here, in CI, before it
// can break a running NodeClaim's life in production (STYLE.md 15: patched() or versioning).
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

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
});
