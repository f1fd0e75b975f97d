import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ManagedProcess } from './process';

export interface PostgresOptions {
  /** PostgreSQL's bin directory (initdb, postgres) */
  bin: string;
  /** LD_LIBRARY_PATH for libraries unpacked beside it, when the machine lacks some */
  libraryPath: string | undefined;
  dataDir: string;
  port: number;
  logDir: string;
  /** the superuser initdb creates (trust authentication on 127.0.0.1 only) */
  user: string;
}

/**
 * PostgreSQL refuses to run as root (initdb and postgres both check). As root, it runs in a
 * user namespace where our uid is mapped to `nobody`: it is not uid 0 to itself, but the
 * kernel still sees root's uid, so it reads its binaries under a 0700 home and owns the
 * data directory it creates. The alternative, a system user plus chown/chmod of the cache
 * and the stack directory, changes the machine; this changes nothing outside the stack.
 */
export function unprivileged(command: string, args: string[]): { command: string; args: string[] } {
  if (process.getuid?.() !== 0) return { command, args };
  return { command: 'unshare', args: ['--user', '--map-user=65534', '--map-group=65534', command, ...args] };
}

function libraryEnv(o: Pick<PostgresOptions, 'libraryPath'>): Record<string, string> {
  return o.libraryPath ? { LD_LIBRARY_PATH: o.libraryPath } : {};
}

/** Creates the cluster's data directory unless it exists (a reused stack directory keeps its data). */
export async function initPostgres(o: PostgresOptions): Promise<'created' | 'existing'> {
  if (existsSync(join(o.dataDir, 'PG_VERSION'))) return 'existing';
  // test data: fsync buys nothing here (etcd runs with --unsafe-no-fsync for the same reason)
  const { command, args } = unprivileged(join(o.bin, 'initdb'), ['-D', o.dataDir, '-U', o.user, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const logFile = join(o.logDir, 'postgres-initdb.log');
  await runLogged({ command, args, env: libraryEnv(o), logFile, what: 'initdb' });
  return 'created';
}

export function postgresProcess(o: PostgresOptions): ManagedProcess {
  const { command, args } = unprivileged(join(o.bin, 'postgres'), [
    '-D', o.dataDir,
    '-p', String(o.port),
    '-c', 'listen_addresses=127.0.0.1',
    // TCP only: no socket file whose path length depends on the stack directory
    '-c', "unix_socket_directories=",
    // Temporal's four services each keep a pool (up to 20 + visibility): above the default 100
    '-c', 'max_connections=300',
    // a local stack's data: durability buys nothing (etcd runs with --unsafe-no-fsync too)
    '-c', 'fsync=off',
    '-c', 'synchronous_commit=off',
    '-c', 'full_page_writes=off',
  ]);
  return new ManagedProcess({
    name: 'postgres',
    command,
    args,
    env: libraryEnv(o),
    logFile: join(o.logDir, 'postgres.log'),
    ready: () => postgresReady(o.dataDir, o.port),
    startTimeoutMs: 60_000,
    // SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for every client to disconnect)
    stopSignal: 'SIGINT',
  });
}

/**
 * The postmaster writes `ready` as the status line of postmaster.pid once it accepts
 * connections (pidfile.h: PM_STATUS_READY); the port must also answer.
 */
async function postgresReady(dataDir: string, port: number): Promise<boolean> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return false;
  const status = readFileSync(pidFile, 'utf8').split('\n')[7]?.trim();
  if (status !== 'ready') return false;
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs a setup command to completion, output appended to a log; fails with the end of that log. */
export async function runLogged(o: { command: string; args: string[]; env?: Record<string, string>; logFile: string; what: string }): Promise<void> {
  const log = openSync(o.logFile, 'a');
  try {
    const child = spawn(o.command, o.args, { env: { ...process.env, ...o.env }, stdio: ['ignore', log, log] });
    const code = await new Promise<number | string>((resolve) => {
      child.once('error', (err) => resolve(err.message));
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown'));
    });
    if (code !== 0) {
      const tail = readFileSync(o.logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
      throw new Error(`${o.what} failed (${code}); log ${o.logFile}:\n${tail}`);
    }
  } finally {
    closeSync(log);
  }
}
