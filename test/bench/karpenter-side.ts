// Karpenter's own `Scheduler.Solve` (sigs.k8s.io/karpenter v1.15.0, from the Go module
// proxy) on the very pods autonode's benchmark solves, so the bench table compares the two
// on one input instead of quoting numbers measured on another.
//
// Build, once per harness version, into a cache outside the repository
// (`$AUTONODE_CACHE`, default ~/.cache/autonode/karpenter-solve-v1.15.0-<hash>/):
//  1. `go mod download -json sigs.k8s.io/karpenter@v1.15.0` (the module zip, checked
//     against go.sum's database by the go command);
//  2. unzip it into the cache; if the local Go is older than the module's `go` directive
//     (v1.15.0 says 1.26.9), lower the directive to the local version — it only gates the
//     toolchain, and the build either compiles or fails loudly;
//  3. copy test/go/karpenter-solve/exported_solve_test.go into its scheduling package
//     (it reuses Karpenter's benchmark `setupScheduler`) and `go test -c` it.
// Run: the pods go to a JSON file; the test binary reads it, builds the pods with
// Karpenter's test.Pod, and times Solve exactly as BenchmarkScheduling* does.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { PackingInput } from '../../core/packing';

const karpenterVersion = 'v1.15.0';
const harness = join(__dirname, '..', 'go', 'karpenter-solve', 'exported_solve_test.go');
const schedulingPackage = join('pkg', 'controllers', 'provisioning', 'scheduling');

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.error !== undefined) throw new Error(`cannot run ${command} (${result.error.message}): Karpenter's side of the bench needs Go and unzip on PATH`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stderr.slice(-4000)}`);
  return result.stdout;
}

const goEnv = (): NodeJS.ProcessEnv => ({ ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', CGO_ENABLED: '0' });

const downloadSchema = z.object({ Dir: z.string().optional(), Zip: z.string().optional(), Error: z.string().optional() });

/** The Karpenter test binary with the harness compiled in; built on first use. */
export function karpenterSolveBinary(log: (line: string) => void = () => {}): string {
  const hash = createHash('sha256').update(karpenterVersion).update(readFileSync(harness)).digest('hex').slice(0, 16);
  const cacheRoot = process.env.AUTONODE_CACHE ?? join(homedir(), '.cache', 'autonode');
  const dir = join(cacheRoot, `karpenter-solve-${karpenterVersion}-${hash}`);
  const binary = join(dir, 'karpenter-solve.test');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  log(`building Karpenter ${karpenterVersion}'s scheduler with the export harness into ${dir} (first run: a few minutes)`);
  // With a local Go older than the module's directive the command exits 1 after fetching
  // the zip, reporting that in the JSON's Error: the zip is all this needs.
  const fetched = spawnSync('go', ['mod', 'download', '-json', `sigs.k8s.io/karpenter@${karpenterVersion}`], { cwd: dir, env: goEnv(), encoding: 'utf8' });
  if (fetched.error !== undefined) throw new Error(`cannot run go (${fetched.error.message}): Karpenter's side of the bench needs Go on PATH`);
  const download = downloadSchema.parse(JSON.parse(fetched.stdout));
  const source = join(dir, 'src');
  rmSync(source, { recursive: true, force: true });
  if (download.Dir !== undefined && existsSync(download.Dir)) {
    cpSync(download.Dir, source, { recursive: true });
  } else if (download.Zip !== undefined) {
    // The go command leaves Dir unset when the local toolchain is older than the module asks for.
    const unpacked = join(dir, 'unpacked');
    rmSync(unpacked, { recursive: true, force: true });
    run('unzip', ['-q', download.Zip, '-d', unpacked]);
    renameSync(join(unpacked, 'sigs.k8s.io', `karpenter@${karpenterVersion}`), source);
    rmSync(unpacked, { recursive: true, force: true });
  } else {
    throw new Error(`go mod download of sigs.k8s.io/karpenter@${karpenterVersion} gave no module: ${download.Error ?? 'no error either'}`);
  }
  run('chmod', ['-R', 'u+w', source]);
  const localGo = /go(\d+\.\d+(?:\.\d+)?)/.exec(run('go', ['env', 'GOVERSION']))?.[1];
  const goMod = join(source, 'go.mod');
  const wanted = /^go (\S+)$/m.exec(readFileSync(goMod, 'utf8'))?.[1];
  if (localGo !== undefined && wanted !== undefined && compareVersions(localGo, wanted) < 0) {
    log(`lowering the module's go directive ${wanted} to the local ${localGo}`);
    writeFileSync(goMod, readFileSync(goMod, 'utf8').replace(/^go \S+$/m, `go ${localGo}`));
  }
  cpSync(harness, join(source, schedulingPackage, 'autonode_exported_solve_test.go'));
  const temporary = `${binary}.building-${process.pid}`;
  run('go', ['test', '-c', '-tags=test_performance', '-o', temporary, `./${schedulingPackage}`], { cwd: source, env: goEnv() });
  renameSync(temporary, binary);
  return binary;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The pods in the harness's JSON shape (exported_solve_test.go `exportedPod`). */
export function exportPods(input: PackingInput): unknown[] {
  return input.pods.map((pod) => ({
    name: pod.name,
    labels: pod.labels,
    cpu: pod.requests.cpu ?? '0',
    memory: pod.requests.memory ?? '0',
    terms: [
      ...pod.topologySpread.map((c) => ({ kind: 'spread', topologyKey: c.topologyKey, maxSkew: c.maxSkew, matchLabels: c.labelSelector?.matchLabels ?? {} })),
      ...pod.podAffinity.required.map((t) => ({ kind: 'affinity', topologyKey: t.topologyKey, maxSkew: 0, matchLabels: t.labelSelector?.matchLabels ?? {} })),
      ...pod.podAntiAffinity.required.map((t) => ({ kind: 'anti', topologyKey: t.topologyKey, maxSkew: 0, matchLabels: t.labelSelector?.matchLabels ?? {} })),
    ],
  }));
}

export const karpenterResultSchema = z.object({
  pods: z.number(),
  seconds: z.array(z.number()),
  nodeClaims: z.number(),
  podsScheduled: z.number(),
  podErrors: z.number(),
  price: z.number(),
  maxRssMiB: z.number(),
  heapMiB: z.number(),
  placement: z.record(z.string(), z.number()).optional(),
});
export type KarpenterResult = z.infer<typeof karpenterResultSchema>;

/**
 * Karpenter's Solve on the input's pods, `runs` times (each on a fresh scheduler, as its
 * benchmark's setup is untimed). The input must be the fake-catalog benchmark input: the
 * harness uses Karpenter's own fake.InstanceTypes(400) and NodePool, not the input's.
 */
export function karpenterSolve(input: PackingInput, runs: number, log?: (line: string) => void): KarpenterResult {
  const binary = karpenterSolveBinary(log);
  const unsupported = input.pods.find((p) => p.topologySpread.some((c) => c.labelSelector?.matchExpressions !== undefined && c.labelSelector.matchExpressions.length > 0)
    || Object.keys(p.nodeSelector).length > 0 || p.tolerations.length > 0 || p.hostPorts.length > 0);
  if (unsupported !== undefined) throw new Error(`pod ${unsupported.name}: the Karpenter export harness carries labels, requests, spread and pod (anti-)affinity with matchLabels only`);
  const file = join(tmpdir(), `autonode-karpenter-pods-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(exportPods(input)));
  try {
    const stdout = run(binary, ['-test.run=^TestAutonodeExportedSolve$', '-test.count=1'], { env: { ...process.env, AUTONODE_EXPORTED_PODS: file, AUTONODE_RUNS: String(runs) } });
    const line = stdout.split('\n').find((l) => l.startsWith('AUTONODE_RESULT '));
    if (line === undefined) throw new Error(`Karpenter harness printed no result:\n${stdout.slice(-2000)}`);
    return karpenterResultSchema.parse(JSON.parse(line.slice('AUTONODE_RESULT '.length)));
  } finally {
    rmSync(file, { force: true });
  }
}
