import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const PidsFileSchema = z.object({ owner: z.number().int() }).catchall(z.number().int().optional());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/**
 * Stops components of earlier stacks whose owner died without cleaning up (a SIGKILLed
 * test run, a crashed `autonode dev`). Only pids recorded in a stack's pids.json are
 * considered, and only while their command line still names that stack's directory or a
 * binary of the stack cache — a recycled pid belonging to something else is never touched.
 * Returns what it stopped.
 */
export function reapOrphanedStacks(options: { parentDir: string; prefix: string; cacheDir: string }): string[] {
  const reaped: string[] = [];
  if (!existsSync(options.parentDir)) return reaped;
  for (const entry of readdirSync(options.parentDir)) {
    if (!entry.startsWith(options.prefix)) continue;
    const dir = join(options.parentDir, entry);
    const pidsFile = join(dir, 'pids.json');
    if (!existsSync(pidsFile)) continue;
    const parsed = PidsFileSchema.safeParse(JSON.parse(readFileSync(pidsFile, 'utf8')));
    if (!parsed.success || alive(parsed.data.owner)) continue;
    const { owner: _owner, ...components } = parsed.data;
    for (const [name, pid] of Object.entries(components)) {
      if (pid === undefined || !alive(pid)) continue;
      const cmd = commandLine(pid);
      if (!cmd.includes(dir) && !cmd.includes(options.cacheDir)) continue;
      process.kill(pid, 'SIGKILL');
      reaped.push(`${name} (pid ${pid}) of ${dir}`);
    }
    rmSync(join(dir, 'etcd'), { recursive: true, force: true });
    rmSync(join(dir, 'postgres'), { recursive: true, force: true });
    rmSync(pidsFile, { force: true });
  }
  return reaped;
}
