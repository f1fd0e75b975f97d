// The real CLI, end to end: `node bin/autonode.js plan …` in a child process (sources run
// through tsx; AUTONODE_FROM_SOURCE makes sure a stale dist/ is never used), with the
// HiGHS-backed LP guide the command loads itself.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCUMENT_KEYS, NODECLAIM_KEYS, expectEachPendingPodOnce, nodePoolV1, onDemand, pod, replicated, yamlStream, type PlanDoc } from './helpers';

const ROOT = join(__dirname, '..', '..', '..');
const env = { ...process.env, AUTONODE_FROM_SOURCE: '1' };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'autonode-plan-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('autonode plan (child process)', () => {
  it('plans two -f files and prints only the JSON document on stdout', () => {
    const pools = join(dir, 'pools.yaml');
    const apps = join(dir, 'apps.yaml');
    // No EC2NodeClass: a warning, which must go to stderr, not into the document.
    writeFileSync(pools, nodePoolV1('default', { requirements: onDemand('m5.large', 'm5.xlarge') }));
    writeFileSync(apps, yamlStream(replicated('Deployment', 'web', 3, { requests: { cpu: '1', memory: '1Gi' } }), pod('huge', { requests: { cpu: '1000' } })));

    const stdout = execFileSync(process.execPath, ['bin/autonode.js', 'plan', '-f', pools, '-f', apps, '-o', 'json'], {
      cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 50_000,
    });
    const doc = JSON.parse(stdout) as PlanDoc;
    expect(stdout).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(Object.keys(doc)).toEqual(DOCUMENT_KEYS);
    for (const claim of doc.nodeClaims) {
      expect(Object.keys(claim)).toEqual(NODECLAIM_KEYS);
      expect(claim).toMatchObject({ nodePool: 'default', capacityType: 'on-demand' });
      expect(claim.zone).toMatch(/^us-east-1[a-z]$/);
    }
    expectEachPendingPodOnce(doc, ['default/web-0', 'default/web-1', 'default/web-2', 'default/huge']);
    expect(doc.unschedulable).toEqual([{ pod: 'default/huge', reason: expect.stringContaining('cpu') }]);
    expect(doc.totalPrice).toBeGreaterThan(0);
    expect(doc.totalPrice).toBeCloseTo(doc.nodeClaims.reduce((sum, c) => sum + c.price, 0), 6);
  }, 60_000);

  it('exits 2 with a usage message when no -f is given', () => {
    const result = spawnSync(process.execPath, ['bin/autonode.js', 'plan', '-o', 'json'], { cwd: ROOT, env, encoding: 'utf8', timeout: 50_000 });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('autonode plan: give at least one manifest file with -f\n');
  }, 60_000);
});
