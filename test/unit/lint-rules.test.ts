// The folder contracts of ARCHITECTURE.md are enforced by ESLint (eslint.config.mjs); this
// proves each rule fires on a violation and stays quiet on what is allowed.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

function lint(fileName: string, source: string): string[] {
  const run = spawnSync(process.execPath, [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--format', 'json', '--stdin', '--stdin-filename', fileName], {
    cwd: root,
    input: source,
    encoding: 'utf8',
  });
  const results: unknown = JSON.parse(run.stdout || '[]');
  if (!Array.isArray(results)) throw new Error(`eslint printed no results: ${run.stderr}`);
  return results.flatMap((r: { messages?: { ruleId?: string | null; message: string }[] }) => (r.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`));
}

describe('folder import rules', () => {
  it.each([
    ['core/x.ts', "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n", /no-restricted-imports: .*core\/ is pure/],
    ['core/x.ts', "import { Client } from '@temporalio/client';\nexport const c = Client;\n", /no-restricted-imports: .*no I\/O or Temporal/],
    ['core/x.ts', 'export const now = () => Date.now();\n', /no-restricted-properties: .*no clock/],
    ['core/x.ts', 'export const r = () => Math.random();\n', /no-restricted-properties: .*deterministic/],
    ['core/x.ts', "import { startStack } from '../dev/stack/launcher';\nexport const s = startStack;\n", /core\/ imports only core/],
    ['workflows/x.ts', "import { readFileSync } from 'fs';\nexport const f = readFileSync;\n", /Temporal sandbox: no Node built-ins/],
    ['workflows/x.ts', "import { createNodeClaimKubeActivities } from '../activities/nodeclaim/kube';\nexport const a = createNodeClaimKubeActivities;\n", /only \*types\* from activities/],
    ['workflows/x.ts', "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n", /do I\/O in activities/],
    // metrics are counted where things happen (activities), never in the replayed workflow code or the pure core
    ['workflows/x.ts', "import { Counter } from 'prom-client';\nexport const c = Counter;\n", /do I\/O in activities/],
    ['core/x.ts', "import { Counter } from 'prom-client';\nexport const c = Counter;\n", /no-restricted-imports: .*no I\/O or Temporal/],
  ])('%s: %s is refused', (file, source, rule) => {
    expect(lint(file, source).join('\n')).toMatch(rule);
  });

  it.each([
    ['workflows/x.ts', "import type { NodeClaimKubeActivities } from '../activities/nodeclaim/kube';\nexport type A = NodeClaimKubeActivities;\n"],
    ['core/x.ts', "import { z } from 'zod';\nexport const s = z.string();\n"],
    ['activities/x.ts', "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n"],
  ])('%s: allowed imports pass', (file, source) => {
    expect(lint(file, source)).toEqual([]);
  });
});

describe('dev/ stays out of the shipped build', () => {
  it.each([
    ['starter/commands/x.ts', "import { startStack } from '../../dev/stack/launcher';\nexport const s = startStack;\n"],
    ['workers/x.ts', "import { SimulatedKubeletFleet } from '../dev/simkubelet';\nexport const f = SimulatedKubeletFleet;\n"],
    ['activities/kube/x.ts', "import { projectRoot } from '../../dev/paths';\nexport const r = projectRoot;\n"],
    ['core/x.ts', "import { projectRoot } from '../dev/paths';\nexport const r = projectRoot;\n"],
  ])('%s may not import dev/', (file, source) => {
    expect(lint(file, source).join('\n')).toMatch(/no-restricted-imports: .*(dev\/ is not shipped|core\/ imports only core)/);
  });

  it.each([
    ['dev/x.ts', "import { buildCli } from '../starter/cli';\nexport const b = buildCli;\n"],
    ['test/support/x.ts', "import { startStack } from '../../dev/stack/launcher';\nexport const s = startStack;\n"],
  ])('%s may import it', (file, source) => {
    expect(lint(file, source)).toEqual([]);
  });
});
