import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';

export interface ProcessSpec {
  /** short name used in logs and messages, e.g. `kube-apiserver-guest` */
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  logFile: string;
  /** resolves true once the component answers; polled until `startTimeoutMs` */
  ready: () => Promise<boolean>;
  startTimeoutMs?: number;
  /** how long the stop signal gets before SIGKILL */
  stopTimeoutMs?: number;
  /** the signal `stop()` sends first (default SIGTERM; PostgreSQL's fast shutdown is SIGINT) */
  stopSignal?: NodeJS.Signals;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * One component of the local stack, started by us and stopped by us (by pid: nothing
 * else is ever signalled). Output goes to a log file; a start that fails or times out
 * says which component, why, and shows the end of its log.
 */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private exitDescription: string | undefined;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    const { spec } = this;
    // a restart (stop, then start again) begins with a live process
    this.exitDescription = undefined;
    const log = openSync(spec.logFile, 'a');
    try {
      this.child = spawn(spec.command, spec.args, {
        env: { ...process.env, ...spec.env },
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log);
    }
    const child = this.child;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitDescription = signal ? `killed by ${signal}` : `exited with code ${code}`;
        resolve();
      });
      child.once('error', (err) => {
        this.exitDescription = `could not be started: ${err.message}`;
        resolve();
      });
    });

    const deadline = Date.now() + (spec.startTimeoutMs ?? 90_000);
    while (Date.now() < deadline) {
      if (this.exitDescription !== undefined) {
        throw new Error(`${spec.name} ${this.exitDescription} before it was ready; log ${spec.logFile}:\n${tail(spec.logFile)}`);
      }
      if (await spec.ready().catch(() => false)) return;
      await delay(200);
    }
    await this.stop();
    throw new Error(
      `${spec.name} was not ready within ${(spec.startTimeoutMs ?? 90_000) / 1000}s; log ${spec.logFile}:\n${tail(spec.logFile)}`,
    );
  }

  /** SIGTERM (or the spec's stop signal), then SIGKILL after the grace period. Safe to call twice. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || this.exitDescription !== undefined) return;
    child.kill(this.spec.stopSignal ?? 'SIGTERM');
    const graceful = await Promise.race([this.exited.then(() => true), delay(this.spec.stopTimeoutMs ?? 10_000).then(() => false)]);
    if (!graceful) {
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  /** Whether the OS still has our process (not merely whether we think it exited). */
  isRunning(): boolean {
    const pid = this.child?.pid;
    if (pid === undefined || this.exitDescription !== undefined) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** Synchronous kill for process-exit handlers, where nothing can be awaited. */
  killNow(): void {
    if (this.child && this.exitDescription === undefined) this.child.kill('SIGKILL');
  }
}
