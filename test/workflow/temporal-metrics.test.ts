// The Temporal SDK's own worker metrics and log lines, from a worker process set up the way
// workers/main.ts sets one up: its Prometheus exporter on its own port, every SDK log line
// as JSON on stdout. A child process, because the Temporal runtime is installed once per
// process and this one's is the test harness's.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseExposition, samplesOf, type Exposition } from '../support/prometheus';
import { testServerPath } from './support';

jest.setTimeout(120_000);

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a worker process\'s Temporal SDK metrics and logs', () => {
  let env: TestWorkflowEnvironment;
  let child: ChildProcessWithoutNullStreams | undefined;
  const stdout: string[] = [];
  const stderr: string[] = [];

  beforeAll(async () => {
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: testServerPath() } } });
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await env?.teardown();
  });

  it('serves the SDK\'s worker metrics in Prometheus format on the configured port, and logs JSON lines', async () => {
    const port = await freePort();
    const root = join(__dirname, '..', '..');
    child = spawn(process.execPath, ['--require', 'tsx/cjs', join(__dirname, 'worker-process.ts'), env.address, String(port), 'metrics-probe'], { cwd: root });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));

    const scraped = await until<Exposition>(`the worker's pollers on http://127.0.0.1:${port}/metrics (stderr: ${stderr.join('')})`, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      const exposition = parseExposition(await response.text());
      return samplesOf(exposition, 'temporal_num_pollers', { task_queue: 'metrics-probe' }).length > 0 ? exposition : undefined;
    });
    // the worker started once, its pollers are counted per queue, its slots are there
    expect(samplesOf(scraped, 'temporal_worker_start_total', { task_queue: 'metrics-probe' }).map((s) => s.value)).toEqual([1]);
    expect(scraped.types.get('temporal_worker_start_total')).toBe('counter');
    expect(samplesOf(scraped, 'temporal_worker_task_slots_available', { task_queue: 'metrics-probe', worker_type: 'ActivityWorker' }).length).toBe(1);

    // everything on stdout is JSON, from the worker's logger, with the SDK's fields (the
    // runtime holds forwarded lines ~100 ms to order them: wait for the worker's own)
    const records = await until('the worker\'s log lines on stdout', async () => {
      const parsed = stdout.join('').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
      return parsed.some((r) => r.sdkComponent === 'worker' && r.taskQueue === 'metrics-probe') ? parsed : undefined;
    }, 10_000);
    for (const record of records) expect(record).toEqual(expect.objectContaining({ service: 'autonode-worker', level: expect.any(String), msg: expect.any(String), time: expect.any(String) }));
    expect(records).toContainEqual(expect.objectContaining({ level: 'info', msg: 'Worker state changed', state: 'RUNNING', sdkComponent: 'worker', taskQueue: 'metrics-probe' }));
  });
});
