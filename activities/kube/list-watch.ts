import { z } from 'zod';
import { type Watch } from '@kubernetes/client-node';

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: unknown };

export interface ListWatchOptions {
  /** the watch client (a port: tests pass a scripted one) */
  watch: Pick<Watch, 'watch'>;
  /** collection path for the watch, e.g. `/api/v1/nodes` */
  path: string;
  /** the same collection listed, as the API server sent it like the watch's events (the list's metadata.resourceVersion starts the watch) */
  list: () => Promise<unknown>;
  /** handles one event; list results arrive as ADDED */
  onEvent: (event: WatchEvent) => Promise<void>;
  /** called after every (re)list with the names present, so deletions missed while away are seen */
  onRelist?: (names: ReadonlySet<string>) => Promise<void>;
  /** the last resourceVersion seen, for heartbeats */
  onProgress?: (resourceVersion: string) => void;
  signal: AbortSignal;
  /** restart a watch that has been silent this long (bookmarks arrive about once a minute) */
  stallMs?: number;
  log?: (line: string) => void;
}

const ListSchema = z.object({
  metadata: z.object({ resourceVersion: z.string() }),
  // passthrough at both levels: a handler reads more of an item's metadata than its name (namespace, uid, deletionTimestamp)
  items: z.array(z.object({ metadata: z.object({ name: z.string() }).passthrough() }).passthrough()),
});
const ObjectMetaSchema = z.object({ metadata: z.object({ resourceVersion: z.string().optional() }).optional() }).passthrough();

class WatchExpired extends Error {}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * List, then watch from the list's resourceVersion; on a closed or failed stream resume
 * from the last resourceVersion seen (bookmarks included); on 410 Gone relist; on errors
 * back off first; a watch that goes silent for `stallMs` is restarted (long
 * watches are known to die without an error). Runs until `signal` aborts.
 */
export async function listWatch(o: ListWatchOptions): Promise<void> {
  const stallMs = o.stallMs ?? 180_000;
  let resourceVersion: string | undefined;
  let backoff = 500;
  while (!o.signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        const list = ListSchema.parse(await o.list());
        for (const item of list.items) await o.onEvent({ type: 'ADDED', object: item });
        await o.onRelist?.(new Set(list.items.map((i) => i.metadata.name)));
        resourceVersion = list.metadata.resourceVersion;
        o.onProgress?.(resourceVersion);
      }
      const from: string = resourceVersion;
      resourceVersion = await watchOnce(o, from, stallMs, (rv) => (resourceVersion = rv));
      backoff = 500;
    } catch (err) {
      if (o.signal.aborted) return;
      if (err instanceof WatchExpired) {
        resourceVersion = undefined;
        o.log?.(`watch ${o.path}: resourceVersion expired, relisting`);
        continue;
      }
      o.log?.(`watch ${o.path}: ${err instanceof Error ? err.message : String(err)}; retrying in ${backoff} ms`);
      await pause(backoff, o.signal);
      backoff = Math.min(backoff * 2, 30_000);
    }
  }
}

/** One watch stream; resolves with the last resourceVersion when the stream ends. */
function watchOnce(o: ListWatchOptions, from: string, stallMs: number, seen: (resourceVersion: string) => void): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let last = from;
    let settled = false;
    let controller: AbortController | undefined;
    let queue = Promise.resolve();
    let stall: NodeJS.Timeout | undefined;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(stall);
      controller?.abort();
      o.signal.removeEventListener('abort', onAbort);
      void queue.then(() => (err ? reject(err) : resolve(last)), reject);
    };
    const armStall = () => {
      clearTimeout(stall);
      stall = setTimeout(() => finish(), stallMs);
    };
    const onAbort = () => finish();
    o.signal.addEventListener('abort', onAbort, { once: true });
    armStall();
    o.watch
      .watch(
        o.path,
        { allowWatchBookmarks: true, resourceVersion: from },
        (type: string, object: unknown) => {
          armStall();
          const rv = ObjectMetaSchema.safeParse(object).data?.metadata?.resourceVersion;
          if (type === 'ERROR') {
            const code = z.object({ code: z.number() }).safeParse(object).data?.code;
            finish(code === 410 ? new WatchExpired() : new Error(`watch error event: ${JSON.stringify(object)}`));
            return;
          }
          if (rv) last = rv;
          if (type === 'BOOKMARK') {
            if (rv) seen(rv);
            o.onProgress?.(last);
            return;
          }
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
            // Only a handled event moves the resume point: if handling fails, the next
            // stream starts before it and delivers it again.
            queue = queue
              .then(() => o.onEvent({ type, object }))
              .then(() => {
                if (rv) seen(rv);
                o.onProgress?.(rv ?? last);
              });
            queue.catch((err: unknown) => finish(err));
          }
        },
        (err: unknown) => {
          const status = z.object({ statusCode: z.number() }).safeParse(err).data?.statusCode;
          if (status === 410) finish(new WatchExpired());
          else if (err && !(err instanceof Error && err.name === 'AbortError')) finish(err);
          else finish();
        },
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      }, finish);
  });
}
