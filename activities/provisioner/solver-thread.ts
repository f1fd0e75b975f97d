import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type PackingInput, type Plan } from '../../core/packing';

/** Solves packing inputs on a worker thread of its own (started on first use, kept). */
export interface SolverThread {
  solve(input: PackingInput, options: { guided: boolean }): Promise<Plan>;
  close(): Promise<void>;
}

/**
 * One thread, one solve at a time: the packing worker runs one batch per process, and a
 * solve is CPU-bound, so more threads than cores would only slow each one down. From the
 * sources (tsx, jest) the thread loads its TypeScript through tsx; from dist/, the .js.
 */
export function createSolverThread(): SolverThread {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (plan: Plan) => void; reject: (err: Error) => void }>();
  const start = () => {
    const compiled = join(__dirname, 'solver-thread-main.js');
    const fromSource = !existsSync(compiled);
    const w = new Worker(fromSource ? join(__dirname, 'solver-thread-main.ts') : compiled, fromSource ? { execArgv: ['--require', 'tsx/cjs'] } : {});
    w.on('message', (message: { id: number; plan?: Plan; error?: string }) => {
      const entry = waiting.get(message.id);
      waiting.delete(message.id);
      if (!entry) return;
      if (message.plan) entry.resolve(message.plan);
      else entry.reject(new Error(`the solver thread failed: ${message.error ?? 'no plan'}`));
    });
    const failAll = (err: Error) => {
      for (const entry of waiting.values()) entry.reject(err);
      waiting.clear();
      worker = undefined;
    };
    w.on('error', failAll);
    w.on('exit', (code) => failAll(new Error(`the solver thread exited (code ${code})`)));
    // a thread waiting for work must not keep the process alive
    w.unref();
    return w;
  };
  return {
    solve(input, options) {
      worker ??= start();
      const id = nextId++;
      const w = worker;
      return new Promise<Plan>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.postMessage({ id, input, guided: options.guided });
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
