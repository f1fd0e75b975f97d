// The solver thread's body: HiGHS is loaded once per thread, then every batch's input is
// solved here, off the worker's event loop, so heartbeats and other activities keep going.
import { parentPort } from 'node:worker_threads';
import { solve, type LinearSolver, type PackingInput } from '../../core/packing';
import { loadLinearSolver } from '../packing/highs';

let linearSolver: Promise<LinearSolver> | undefined;

parentPort?.on('message', (message: { id: number; input: PackingInput; guided: boolean }) => {
  void (async () => {
    try {
      const options = message.guided ? { linearSolver: await (linearSolver ??= loadLinearSolver()) } : {};
      parentPort?.postMessage({ id: message.id, plan: solve(message.input, options) });
    } catch (err) {
      parentPort?.postMessage({ id: message.id, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) });
    }
  })();
});
