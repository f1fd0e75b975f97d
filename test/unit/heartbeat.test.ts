// Every activity beats while it runs (activities/heartbeat.ts), so a proxy's 20 s heartbeat
// timeout notices a killed worker in seconds, whatever the activity's start-to-close timeout
// (seen in `npm run scale`: a reconcileNodeClass with none waited its full 2 minutes after
// each kill). A step named inside it is carried by the beats, with how long it has run.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { beating, heartbeatingAll, heartbeatStage } from '../../activities/heartbeat';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Beat = { stage: string; for?: number };

function environment(activityType: string, attempt = 1) {
  const beats: Beat[] = [];
  const logs: LogEntry[] = [];
  const env = new MockActivityEnvironment({ activityType, attempt }, { logger: new DefaultLogger('INFO', (entry) => logs.push(entry)) });
  env.on('heartbeat', (details: unknown) => beats.push(details as Beat));
  return { env, beats, logs };
}

describe('heartbeatingAll', () => {
  it('beats for an activity that never beats itself, all the while it runs, and stops when it settles', async () => {
    const { env, beats } = environment('reconcileNodeClass');
    const activities = heartbeatingAll({ reconcileNodeClass: async () => { await delay(250); return 'ready'; } }, 25);
    await expect(env.run(() => activities.reconcileNodeClass())).resolves.toBe('ready');
    // one at the start, then about one per 25 ms (a loaded machine fires fewer timers)
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats.every((b) => b.stage === 'start')).toBe(true);
    const settled = beats.length;
    await delay(100);
    expect(beats).toHaveLength(settled);
  });

  it('carries the step the activity is in, and how long it has been in it', async () => {
    const { env, beats } = environment('planBatch');
    const activities = heartbeatingAll({
      planBatch: async () => {
        heartbeatStage('read');
        await delay(120);
        heartbeatStage('solve');
        await delay(120);
      },
    }, 20);
    await env.run(() => activities.planBatch());
    expect([...new Set(beats.map((b) => b.stage))]).toEqual(['start', 'read', 'solve']);
    const solving = beats.filter((b) => b.stage === 'solve');
    expect(solving[0]?.for).toBe(0);
    expect(Math.max(...solving.map((b) => b.for ?? 0))).toBeGreaterThan(0);
  });

  it('a `beating` step inside it adds its stage, not a second train of beats', async () => {
    const lone = environment('launchClaimInstance');
    await lone.env.run(() => beating('launch', () => delay(200), 20));
    const inside = environment('launchClaimInstance');
    const activities = heartbeatingAll({ launchClaimInstance: () => beating('launch', () => delay(200), 20) }, 20);
    await inside.env.run(() => activities.launchClaimInstance());
    expect(inside.beats.filter((b) => b.stage === 'launch').length).toBeGreaterThanOrEqual(3);
    // two trains would send about twice the lone step's beats
    expect(inside.beats.length).toBeLessThan(lone.beats.length * 1.5 + 2);
  });

  it('a slow attempt says when it ends, completed or failed, how long each of its steps took', async () => {
    const { env, logs } = environment('planBatch', 3);
    const activities = heartbeatingAll({
      planBatch: async () => {
        heartbeatStage('catalog');
        await delay(60);
        throw new Error('throttled');
      },
    }, 20, 50);
    await expect(env.run(() => activities.planBatch())).rejects.toThrow('throttled');
    const line = logs.find((l) => l.message.startsWith('planBatch attempt 3 failed after'));
    expect(line?.meta?.steps).toMatch(/^start \d+\.\d s, catalog \d+\.\d s$/);
  });

  it('a quick attempt says nothing, and outside an activity (a unit test calling it) nothing beats', async () => {
    const { env, logs, beats } = environment('observeClaim');
    const activities = heartbeatingAll({ observeClaim: async () => 'seen' }, 20, 50);
    await env.run(() => activities.observeClaim());
    expect(logs.filter((l) => l.message.includes('observeClaim attempt'))).toEqual([]);
    expect(beats).toHaveLength(1);
    await expect(activities.observeClaim()).resolves.toBe('seen');
    await expect(beating('x', async () => 'direct')).resolves.toBe('direct');
  });
});

describe('every activity call', () => {
  // a proxy without a heartbeat timeout waits out its start-to-close timeout (minutes) after a
  // worker is killed; the activities beat (workers.ts registers them through heartbeatingAll)
  it('has a heartbeat timeout, in every workflow', () => {
    const dir = join(__dirname, '..', '..', 'workflows');
    const files = [...readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)), ...readdirSync(join(dir, 'legacy')).map((f) => join(dir, 'legacy', f))];
    const proxies: { file: string; options: string }[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/proxyActivities<[^>]*>\(\{/g)) {
        // the options object literal: up to its matching brace
        let depth = 0;
        let end = (m.index ?? 0) + m[0].length - 1;
        for (; end < text.length; end++) {
          if (text[end] === '{') depth++;
          else if (text[end] === '}' && --depth === 0) break;
        }
        proxies.push({ file: file.slice(dir.length + 1), options: text.slice((m.index ?? 0) + m[0].length - 1, end + 1) });
      }
    }
    expect(proxies.length).toBeGreaterThanOrEqual(15);
    expect(proxies.filter((p) => !/heartbeatTimeout\b/.test(p.options)).map((p) => `${p.file}: ${p.options.replace(/\s+/g, ' ').slice(0, 120)}`)).toEqual([]);
  });
});
