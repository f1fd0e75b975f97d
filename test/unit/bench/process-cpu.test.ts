import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { componentOf, CpuLedger, parseProcStat, readProcesses, type ProcessSample } from '../../bench/process-cpu';

/** A /proc/<pid>/stat line with the given fields (the rest zero). */
function statLine(o: { pid: number; comm?: string; ppid: number; utime: number; stime: number; start: number }): string {
  const fields = Array.from({ length: 52 }, () => '0');
  fields[0] = String(o.pid);
  fields[1] = `(${o.comm ?? 'proc'})`;
  fields[2] = 'S';
  fields[3] = String(o.ppid);
  fields[13] = String(o.utime);
  fields[14] = String(o.stime);
  fields[21] = String(o.start);
  return fields.join(' ');
}

const proc = (pid: number, ppid: number, ticks: number, cmdline: string, start = pid): ProcessSample => ({ stat: { pid, ppid, cpuTicks: ticks, startTicks: start }, cmdline });

describe('parseProcStat', () => {
  it('reads ppid, utime + stime and the start time', () => {
    expect(parseProcStat(statLine({ pid: 42, ppid: 7, utime: 120, stime: 30, start: 9000 }))).toEqual({ pid: 42, ppid: 7, cpuTicks: 150, startTicks: 9000 });
  });

  it('counts fields from the last parenthesis: a command name with spaces and ")" does not shift them', () => {
    expect(parseProcStat(statLine({ pid: 5, comm: 'odd) name (x', ppid: 1, utime: 10, stime: 2, start: 77 }))).toEqual({ pid: 5, ppid: 1, cpuTicks: 12, startTicks: 77 });
  });

  it('refuses a truncated line', () => {
    expect(parseProcStat('12 (x) S 1 2 3')).toBeUndefined();
    expect(parseProcStat('garbage')).toBeUndefined();
  });

  it('reads this very process from the real /proc', () => {
    const self = readProcesses().find((p) => p.stat.pid === process.pid);
    expect(self?.stat.ppid).toBe(process.ppid);
    expect(self?.cmdline).toContain('node');
  });
});

describe('readProcesses', () => {
  it('skips entries that are not processes and processes that vanished mid-read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'proc-'));
    mkdirSync(join(dir, '10'));
    writeFileSync(join(dir, '10', 'stat'), statLine({ pid: 10, ppid: 1, utime: 3, stime: 4, start: 5 }));
    writeFileSync(join(dir, '10', 'cmdline'), 'kwok\0--config\0x\0');
    mkdirSync(join(dir, '11')); // no stat: exited
    mkdirSync(join(dir, 'self'));
    expect(readProcesses(dir)).toEqual([{ stat: { pid: 10, ppid: 1, cpuTicks: 7, startTicks: 5 }, cmdline: 'kwok --config x' }]);
  });
});

describe('componentOf', () => {
  it.each([
    ['/c/kubernetes-v1.34.2/bin/kube-apiserver --etcd-servers=http://127.0.0.1:2379', 'kube-apiserver'],
    ['/c/kubernetes-v1.34.2/bin/kube-controller-manager --kubeconfig x', 'kube-controller-manager'],
    ['/c/kubernetes-v1.34.2/bin/kube-scheduler --kubeconfig x', 'kube-scheduler'],
    ['/c/etcd-v3.5.33/etcd --data-dir /tmp/e', 'etcd'],
    ['/c/kwok-v0.7.0/kwok --kubeconfig x', 'kwok'],
    ['/c/python-temporal1.9.1-moto5.2.5/bin/python -c import moto.ec2.models.amis as amis; from moto.server import main', 'moto (EC2, SQS)'],
    // the stack's real path: the Temporal CLI sits in a venv whose directory names moto
    ['/c/python-temporal1.9.1-moto5.2.5/bin/temporal server start-dev --ip 127.0.0.1', 'temporal server'],
    ['postgres: autonode temporal 127.0.0.1(5432) idle', 'postgres'],
    ['/c/temporal-server-1.29/temporal-server --service frontend start', 'temporal server'],
    ['/usr/lib/postgresql/15/bin/postgres -D /c/pg', 'postgres'],
    ['/usr/bin/node /c/node_modules/.bin/jest --selectProjects unit', 'other'],
    ['/usr/bin/node --max-old-space-size=512 -r tsx/cjs /w/workers/main.ts', 'autonode workers'],
    ['/bin/sh -c true', 'other'],
  ])('%s → %s', (cmdline, component) => {
    expect(componentOf(cmdline)).toBe(component);
  });
});

describe('CpuLedger', () => {
  it('charges each phase the CPU its process tree spent in it, by component, and nothing outside the tree', () => {
    const ledger = new CpuLedger(100, 100);
    // 100 is the run; 200 (apiserver) and 300 (worker) its children; 400 another session's
    const at = (run: number, api: number, worker: number, other: number) => [
      proc(100, 1, run, 'node scale.ts'),
      proc(200, 100, api, '/c/bin/kube-apiserver --etcd-servers=x'),
      proc(300, 100, worker, '/usr/bin/node -r tsx/cjs /w/workers/main.ts'),
      proc(400, 1, other, '/c/bin/kube-apiserver'),
    ];
    ledger.sample(at(1000, 5000, 0, 9000)); // before the scenario: not charged
    ledger.mark('up', 0);
    ledger.sample(at(1100, 5400, 200, 99999));
    ledger.mark('down', 10_000);
    ledger.sample(at(1150, 5500, 300, 99999));
    ledger.mark('end', 20_000);

    const [up, down] = ledger.phases();
    expect(up).toEqual({
      phase: 'up',
      seconds: 10,
      cores: 0.7,
      components: [
        { component: 'kube-apiserver', cpuSeconds: 4, cores: 0.4, share: 4 / 7 },
        { component: 'autonode workers', cpuSeconds: 2, cores: 0.2, share: 2 / 7 },
        { component: 'scale run (simulated kubelets, checks)', cpuSeconds: 1, cores: 0.1, share: 1 / 7 },
      ],
    });
    expect(down?.components.map((c) => [c.component, c.cpuSeconds])).toEqual([
      ['kube-apiserver', 1],
      ['autonode workers', 1],
      ['scale run (simulated kubelets, checks)', 0.5],
    ]);
    expect(ledger.overall()?.cores).toBeCloseTo(0.475);
  });

  it('keeps a killed worker’s CPU and counts its successor (same pid, new start time) on its own', () => {
    const ledger = new CpuLedger(1, 100);
    ledger.sample([proc(1, 0, 0, 'node scale.ts'), proc(2, 1, 0, 'node /w/workers/main.ts', 50)]);
    ledger.mark('up', 0);
    ledger.sample([proc(1, 0, 0, 'node scale.ts'), proc(2, 1, 300, 'node /w/workers/main.ts', 50)]);
    // killed; the pid comes back for the restarted worker
    ledger.sample([proc(1, 0, 0, 'node scale.ts'), proc(2, 1, 100, 'node /w/workers/main.ts', 900)]);
    ledger.mark('end', 1_000);
    expect(ledger.phases()[0]?.components).toEqual([{ component: 'autonode workers', cpuSeconds: 4, cores: 4, share: 1 }]);
  });

  it('counts grandchildren (a postgres backend under its postmaster)', () => {
    const ledger = new CpuLedger(1, 100);
    const tree = (backend: number) => [proc(1, 0, 0, 'node scale.ts'), proc(2, 1, 0, '/usr/lib/postgresql/15/bin/postgres -D x'), proc(3, 2, backend, 'postgres: temporal idle')];
    ledger.sample(tree(0));
    ledger.mark('up', 0);
    ledger.sample(tree(250));
    ledger.mark('end', 5_000);
    expect(ledger.phases()[0]?.components).toEqual([{ component: 'postgres', cpuSeconds: 2.5, cores: 0.5, share: 1 }]);
  });
});
