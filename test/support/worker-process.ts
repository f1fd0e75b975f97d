/**
 * The production worker entry point (workers/main.ts) as its own OS process, configured the
 * way a deployment configures it: by environment. For tests and benchmarks that kill and
 * restart workers (worker-crash, the chaos scale run). Only the variables given here reach
 * the child besides PATH and HOME, so nothing of the parent's environment leaks in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

export interface WorkerProcessOptions {
  temporal: { address: string; namespace: string };
  /** AUTONODE_* and AWS_* settings (workers/config.ts) */
  env: Record<string, string>;
  /** append stdout/stderr to this file (default: piped to `onOutput`) */
  logFile?: string;
  onOutput?: (chunk: string) => void;
  /** V8's --max-old-space-size */
  heapMb?: number;
  /** more node options, before the entry point (e.g. --cpu-prof, which NODE_OPTIONS refuses) */
  nodeArgs?: readonly string[];
  /** a compiled workers/main.js (buildShippedWorker) to run with plain node; default: the source through tsx */
  compiledMain?: string;
}

export function spawnWorkerProcess(o: WorkerProcessOptions): ChildProcess {
  const heap = o.heapMb !== undefined ? [`--max-old-space-size=${o.heapMb}`] : [];
  const log = o.logFile !== undefined ? openSync(o.logFile, 'a') : undefined;
  try {
    const entry = o.compiledMain !== undefined ? [o.compiledMain] : ['-r', 'tsx/cjs', join(root, 'workers', 'main.ts')];
    const child = spawn(process.execPath, [...heap, ...(o.nodeArgs ?? []), ...entry], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: o.temporal.address,
        TEMPORAL_NAMESPACE: o.temporal.namespace,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...o.env,
      },
      stdio: log !== undefined ? ['ignore', log, log] : ['ignore', 'pipe', 'pipe'],
    });
    if (log === undefined) {
      child.stdout?.on('data', (d: Buffer) => o.onOutput?.(d.toString()));
      child.stderr?.on('data', (d: Buffer) => o.onOutput?.(d.toString()));
    }
    return child;
  } finally {
    if (log !== undefined) closeSync(log);
  }
}

/** Whether the child has exited (by code or signal). */
export const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
