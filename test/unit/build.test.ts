// What `npm run build` compiles into dist/: the shipped folders, and nothing from dev/
// (local stack, simulated kubelets) or test/. tsc compiles every file the included ones
// import, so this checks the program, not just tsconfig.build.json's include list.
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

function buildFiles(): string[] {
  const run = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--listFilesOnly'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`tsc --listFilesOnly failed: ${run.stdout}${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((file) => relative(root, file))
    .filter((file) => !file.startsWith('node_modules/') && !file.startsWith('..'));
}

describe('npm run build', () => {
  it('compiles the CLI, workers, workflows and activities, and nothing from dev/ or test/', () => {
    const files = buildFiles();
    expect(files).toEqual(expect.arrayContaining(['starter/cli.ts', 'workers/main.ts', 'workflows/index.ts', 'activities/packing/highs.ts']));
    const topFolders = [...new Set(files.map((file) => file.split('/')[0]))].sort();
    expect(topFolders).toEqual(['activities', 'core', 'starter', 'workers', 'workflows']);
  });
});
