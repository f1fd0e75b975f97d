import { type Watch } from '@kubernetes/client-node';
import { listWatch, type WatchEvent } from '../../../activities/kube/list-watch';

type Callback = (type: string, object: unknown) => void;
type Done = (err: unknown) => void;

/** A scripted watch server: records every watch call and lets the test drive its stream. */
class ScriptedWatch implements Pick<Watch, 'watch'> {
  readonly calls: { resourceVersion: string | undefined }[] = [];
  private streams: { callback: Callback; done: Done; aborted: boolean }[] = [];

  async watch(_path: string, query: Record<string, unknown>, callback: Callback, done: Done): Promise<AbortController> {
    const resourceVersion = typeof query.resourceVersion === 'string' ? query.resourceVersion : undefined;
    this.calls.push({ resourceVersion });
    const stream = { callback, done, aborted: false };
    this.streams.push(stream);
    const controller = new AbortController();
    controller.signal.addEventListener('abort', () => (stream.aborted = true));
    return controller;
  }

  /** whether the n-th watch stream has been aborted by the client */
  aborted(n: number): boolean {
    return this.streams[n]?.aborted ?? false;
  }

  get current() {
    const s = this.streams.at(-1);
    if (!s) throw new Error('no watch open');
    return s;
  }
}

const obj = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition not reached');
};

function run(watch: ScriptedWatch, lists: { items: unknown[]; rv: string }[], stallMs = 60_000) {
  const events: string[] = [];
  const relists: string[][] = [];
  const abort = new AbortController();
  let listed = 0;
  const done = listWatch({
    watch,
    path: '/api/v1/nodes',
    list: async () => {
      const l = lists[Math.min(listed++, lists.length - 1)]!;
      return { metadata: { resourceVersion: l.rv }, items: l.items };
    },
    onEvent: async (e: WatchEvent) => void events.push(`${e.type} ${JSON.stringify(e.object)}`),
    onRelist: async (names) => void relists.push([...names].sort()),
    signal: abort.signal,
    stallMs,
  });
  return { events, relists, abort, done, listCount: () => listed };
}

describe('listWatch', () => {
  it('lists, then watches from the list resourceVersion', async () => {
    const w = new ScriptedWatch();
    const r = run(w, [{ items: [obj('a', '5')], rv: '10' }]);
    await until(() => w.calls.length === 1);
    expect(w.calls[0]).toEqual({ resourceVersion: '10' });
    w.current.callback('ADDED', obj('b', '11'));
    await until(() => r.events.length === 2);
    expect(r.events.map((e) => e.split(' ')[0])).toEqual(['ADDED', 'ADDED']);
    expect(r.relists).toEqual([['a']]);
    r.abort.abort();
    await r.done;
  });

  it('hands listed items over whole: their metadata beyond the name (namespace, uid, deletionTimestamp) too', async () => {
    const w = new ScriptedWatch();
    const item = { metadata: { name: 'dev', namespace: 'clusters', uid: 'u-1', deletionTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '5' }, spec: { x: 1 } };
    const r = run(w, [{ items: [item], rv: '10' }]);
    try {
      await until(() => r.events.length === 1);
      expect(r.events[0]).toBe(`ADDED ${JSON.stringify(item)}`);
    } finally {
      r.abort.abort();
      await r.done;
    }
  });

  it('resumes from the last resourceVersion seen (bookmarks included) when a stream closes', async () => {
    const w = new ScriptedWatch();
    const r = run(w, [{ items: [], rv: '10' }]);
    await until(() => w.calls.length === 1);
    w.current.callback('MODIFIED', obj('a', '12'));
    w.current.callback('BOOKMARK', { metadata: { resourceVersion: '15' } });
    w.current.done(null);
    await until(() => w.calls.length === 2);
    expect(w.calls[1]).toEqual({ resourceVersion: '15' });
    expect(r.listCount()).toBe(1); // no relist needed
    r.abort.abort();
    await r.done;
  });

  it('relists when the resourceVersion is too old (410 Gone)', async () => {
    const w = new ScriptedWatch();
    const r = run(w, [{ items: [obj('a', '5'), obj('b', '6')], rv: '10' }, { items: [obj('b', '6')], rv: '30' }]);
    await until(() => w.calls.length === 1);
    w.current.callback('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    await until(() => w.calls.length === 2);
    expect(r.listCount()).toBe(2);
    expect(w.calls[1]).toEqual({ resourceVersion: '30' });
    expect(r.relists).toEqual([['a', 'b'], ['b']]); // the router learns that `a` went away
    r.abort.abort();
    await r.done;
  });

  it('restarts a watch that went silent', async () => {
    const w = new ScriptedWatch();
    const r = run(w, [{ items: [], rv: '10' }], 50);
    await until(() => w.calls.length >= 2);
    expect(w.aborted(0)).toBe(true);
    expect(w.calls[1]).toEqual({ resourceVersion: '10' });
    r.abort.abort();
    await r.done;
  });

  it('backs off and retries after a stream error, without relisting', async () => {
    const w = new ScriptedWatch();
    const r = run(w, [{ items: [], rv: '10' }]);
    await until(() => w.calls.length === 1);
    w.current.callback('ADDED', obj('a', '11'));
    w.current.done(new Error('connection reset'));
    await until(() => w.calls.length === 2);
    expect(w.calls[1]).toEqual({ resourceVersion: '11' });
    expect(r.listCount()).toBe(1);
    r.abort.abort();
    await r.done;
  });
});

describe('listWatch when handling an event fails', () => {
  it('resumes before the failed event, so it is delivered again', async () => {
    const w = new ScriptedWatch();
    const handled: string[] = [];
    let failOnce = true;
    const abort = new AbortController();
    const done = listWatch({
      watch: w,
      path: '/api/v1/nodes',
      list: async () => ({ metadata: { resourceVersion: '10' }, items: [] }),
      onEvent: async (e) => {
        const name = JSON.stringify(e.object);
        if (name.includes('"b"') && failOnce) {
          failOnce = false;
          throw new Error('temporal unavailable');
        }
        handled.push(name);
      },
      signal: abort.signal,
    });
    await until(() => w.calls.length === 1);
    w.current.callback('ADDED', obj('a', '11'));
    w.current.callback('ADDED', obj('b', '12'));
    await until(() => w.calls.length === 2);
    expect(w.calls[1]).toEqual({ resourceVersion: '11' });
    w.current.callback('ADDED', obj('b', '12'));
    await until(() => handled.length === 2);
    expect(handled.map((h) => JSON.parse(h).metadata.name)).toEqual(['a', 'b']);
    abort.abort();
    await done;
  });
});
