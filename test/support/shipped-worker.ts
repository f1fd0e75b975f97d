// The worker as shipped: the literal environment of the worker container in
// k8s/worker/worker.yaml's Deployment. The scale runs start their workers with it, so what
// they measure is what an operator who applies the manifest runs.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { projectRoot } from '../../dev/paths';

/** The worker container's literal env (NODE_OPTIONS, the AUTONODE_* settings it ships with). */
export function shippedWorkerEnv(manifest: string): Record<string, string> {
  for (const doc of parseAllDocuments(manifest)) {
    const o = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> } } } } | null;
    if (o?.kind !== 'Deployment') continue;
    const container = o.spec?.template?.spec?.containers?.find((c) => c.name === 'worker');
    if (!container) throw new Error('k8s/worker/worker.yaml: the Deployment has no container named worker');
    return Object.fromEntries((container.env ?? []).flatMap((e) => (e.value !== undefined ? [[e.name, e.value]] : [])));
  }
  throw new Error('k8s/worker/worker.yaml has no Deployment');
}

/** The shipped manifest's worker env, read from this checkout. */
export const shippedWorkerEnvOfCheckout = (): Record<string, string> => shippedWorkerEnv(readFileSync(join(projectRoot(), 'k8s', 'worker', 'worker.yaml'), 'utf8'));

/** V8's --max-old-space-size in NODE_OPTIONS, in MiB. */
export function heapMbOf(nodeOptions: string | undefined): number | undefined {
  const match = /--max-old-space-size[= ](\d+)/.exec(nodeOptions ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * The shipped settings that shape a worker's own behaviour under load — heap, workflow cache,
 * steady resync, EC2 request rate — without those a test harness must set itself (ports,
 * log level, identity, versioning).
 */
export function shippedWorkerTuning(env: Record<string, string>): { heapMb: number | undefined; env: Record<string, string> } {
  const keep = ['AUTONODE_MAX_CACHED_WORKFLOWS', 'AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS', 'AUTONODE_STEADY_RESYNC', 'AUTONODE_CLOUD_RPS'];
  return { heapMb: heapMbOf(env.NODE_OPTIONS), env: Object.fromEntries(keep.flatMap((k) => (env[k] !== undefined ? [[k, env[k]]] : []))) };
}

/**
 * The shipped code built as `npm run build` builds it (tsc, then the workflow bundles beside
 * it) into `outDir`; its worker entry point is `<outDir>/workers/main.js`.
 */
export function buildShippedWorker(outDir: string): string {
  const root = projectRoot();
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [join(outDir, 'workers', 'bundle.js')], { cwd: root, stdio: 'inherit' });
  return join(outDir, 'workers', 'main.js');
}
