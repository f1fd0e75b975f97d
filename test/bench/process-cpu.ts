// CPU time by stack component, for the chaos scale run: which part of the local stack (guest
// control planes, kwok, moto, Temporal, PostgreSQL, autonode's workers, the run's own
// simulated kubelets) used the machine in each phase. Earlier runs could only say "node
// joining is the bottleneck" from the outside; this says who spent the cores.
//
// Read from /proc (Linux): each process's utime + stime (fields 14 and 15 of
// /proc/<pid>/stat, in clock ticks), sampled every few seconds. Only the run's own process
// tree counts, so another session's stack on the same machine is not charged to this run. A
// process that exits between two samples loses at most one period of its CPU (a SIGKILLed
// worker: up to the period).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat this module needs. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks */
  cpuTicks: number;
  /** start time after boot, clock ticks: with the pid, a process's identity (pids are reused) */
  startTicks: number;
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
 * spaces or parentheses, so the fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number.parseInt(text, 10);
  // after ')': field 3 (state) onwards
  const rest = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const stat = { pid, ppid: field(4), cpuTicks: field(14) + field(15), startTicks: field(22) };
  return Object.values(stat).every(Number.isFinite) ? stat : undefined;
}

/**
 * A component of the local stack, named from a process's command line: by the executable's
 * own name, since the stack's paths mix names (the Temporal CLI lives in a venv directory
 * called python-temporal…-moto…); an interpreter by what it runs.
 */
export function componentOf(cmdline: string): string {
  const [argv0 = '', ...args] = cmdline.split(' ');
  const exe = argv0.slice(argv0.lastIndexOf('/') + 1);
  const binaries: Record<string, string> = { 'kube-apiserver': 'kube-apiserver', 'kube-controller-manager': 'kube-controller-manager', 'kube-scheduler': 'kube-scheduler', etcd: 'etcd', kwok: 'kwok' };
  if (binaries[exe] !== undefined) return binaries[exe];
  if (exe.startsWith('temporal')) return 'temporal server';
  // the postmaster is `postgres -D …`; its backends retitle themselves `postgres: …`
  if (exe.startsWith('postgres')) return 'postgres';
  const rest = args.join(' ');
  if (exe.startsWith('python') && /moto/.test(rest)) return 'moto (EC2, SQS)';
  if (exe === 'node' && /workers\/main\.(ts|js)/.test(rest)) return 'autonode workers';
  return 'other';
}

/** One process seen by a sample. */
export interface ProcessSample {
  stat: ProcStat;
  cmdline: string;
}

/** Every process on the machine, as /proc shows it now (those that exit mid-read are skipped). */
export function readProcesses(procDir = '/proc'): ProcessSample[] {
  const out: ProcessSample[] = [];
  for (const entry of readdirSync(procDir)) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseProcStat(readFileSync(`${procDir}/${entry}/stat`, 'utf8'));
      if (stat === undefined) continue;
      const cmdline = readFileSync(`${procDir}/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push({ stat, cmdline });
    } catch {
      // it exited between readdir and read
    }
  }
  return out;
}

/** The kernel's clock ticks per second (USER_HZ; 100 on every common Linux build). */
export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

export interface PhaseCpu {
  phase: string;
  seconds: number;
  /** CPU seconds per component in the phase, largest first */
  components: { component: string; cpuSeconds: number; cores: number; share: number }[];
  /** all components together, in cores (CPU seconds per wall second) */
  cores: number;
}

/**
 * CPU seconds by component, from repeated samples of the run's process tree, cut into
 * phases by `mark`: a phase is charged the difference of the totals at its two marks, so CPU
 * spent before the first mark is never counted. An exited process keeps its last reading.
 */
export class CpuLedger {
  /** last ticks seen per process identity, and its component */
  private readonly seen = new Map<string, { component: string; ticks: number }>();
  private readonly marks: { phase: string; at: number; totals: Map<string, number> }[] = [];

  constructor(
    private readonly root: number,
    private readonly ticksPerSecond: number,
    private readonly label: (sample: ProcessSample, isRoot: boolean) => string = (s, isRoot) => (isRoot ? 'scale run (simulated kubelets, checks)' : componentOf(s.cmdline)),
  ) {}

  /** Takes one sample: every process that is the root or descends from it. */
  sample(processes: readonly ProcessSample[]): void {
    const children = new Map<number, ProcessSample[]>();
    for (const p of processes) {
      const siblings = children.get(p.stat.ppid);
      if (siblings === undefined) children.set(p.stat.ppid, [p]);
      else siblings.push(p);
    }
    const rootSample = processes.find((p) => p.stat.pid === this.root);
    if (rootSample === undefined) return;
    const queue = [rootSample];
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      this.seen.set(`${p.stat.pid}:${p.stat.startTicks}`, { component: this.label(p, p === rootSample), ticks: p.stat.cpuTicks });
      queue.push(...(children.get(p.stat.pid) ?? []));
    }
  }

  /** Ends the phase running so far (the first mark starts the first phase). */
  mark(phase: string, at = Date.now()): void {
    this.marks.push({ phase, at, totals: this.totals() });
  }

  /** The phases between consecutive marks: a mark names the phase that starts there. */
  phases(): PhaseCpu[] {
    const out: PhaseCpu[] = [];
    for (let i = 1; i < this.marks.length; i++) {
      const from = this.marks[i - 1]!;
      const to = this.marks[i]!;
      out.push(this.between(from.phase, from.at, from.totals, to.at, to.totals));
    }
    return out;
  }

  /** From the first mark to the last, as one phase named `name`. */
  overall(name = 'whole run'): PhaseCpu | undefined {
    const first = this.marks[0];
    const last = this.marks[this.marks.length - 1];
    if (first === undefined || last === undefined || first === last) return undefined;
    return this.between(name, first.at, first.totals, last.at, last.totals);
  }

  private totals(): Map<string, number> {
    const totals = new Map<string, number>();
    for (const { component, ticks } of this.seen.values()) totals.set(component, (totals.get(component) ?? 0) + ticks);
    return totals;
  }

  private between(phase: string, fromAt: number, from: Map<string, number>, toAt: number, to: Map<string, number>): PhaseCpu {
    const seconds = (toAt - fromAt) / 1000;
    const cpu = [...to.entries()].map(([component, ticks]) => ({ component, cpuSeconds: Math.max(0, ticks - (from.get(component) ?? 0)) / this.ticksPerSecond }));
    const total = cpu.reduce((a, c) => a + c.cpuSeconds, 0);
    const components = cpu
      .filter((c) => c.cpuSeconds > 0)
      .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
      .map((c) => ({ ...c, cores: seconds > 0 ? c.cpuSeconds / seconds : 0, share: total > 0 ? c.cpuSeconds / total : 0 }));
    return { phase, seconds, components, cores: seconds > 0 ? total / seconds : 0 };
  }
}
