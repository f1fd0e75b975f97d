/**
 * A value read from EC2 and kept for an interval: the cache behind the instance-type
 * provider. Contracts:
 *  - fresh (younger than `intervalMs`): returned without a call;
 *  - due: one load runs and every concurrent caller awaits that same load (single flight);
 *  - a failed load with a cached value: the cached value is served, the failure logged as a
 *    warning, and the next attempt waits `retryAfterFailureMs`, so a struggling EC2 API is
 *    not hammered by every caller (each load already spends callEc2's retry budget);
 *  - a failed load with nothing cached: the caller gets the error (nothing is remembered,
 *    the next call tries again).
 *  - with `persisted`, the first load of a process starts from the stored copy: served
 *    without a call while it is fresh, served as the last good copy if the load fails
 *    while it is not; every successful load is stored (catalog-store.ts).
 * Rejected: stale-while-revalidate (answer stale at once, refresh in the background). It
 * keeps latency flat, but a background promise outlives the activity that started it and
 * its failures have nobody to report to; refreshes are rare enough to wait for.
 */
import { type PersistedRead } from './catalog-store';
import { type Clock, type CloudLogger } from './ports';

export interface Snapshot<T> {
  readonly value: T;
  /** epoch ms of the successful load */
  readonly loadedAt: number;
}

export interface RefreshingValue<T> {
  get(): Promise<Snapshot<T>>;
  /** what is cached now, without loading */
  peek(): Snapshot<T> | undefined;
}

export interface RefreshingValueOptions<T> {
  /** names the value in warnings */
  name: string;
  load: () => Promise<T>;
  intervalMs: number;
  retryAfterFailureMs: number;
  clock: Clock;
  logger: CloudLogger;
  /** where the last good copy is kept across restarts */
  persisted?: PersistedRead<T>;
}

export function createRefreshingValue<T>(options: RefreshingValueOptions<T>): RefreshingValue<T> {
  let current: Snapshot<T> | undefined;
  /** after a failed refresh, no new attempt before this (epoch ms) */
  let holdUntil = 0;
  let inflight: Promise<Snapshot<T>> | undefined;
  /** the stored copy is looked at once, by the process's first load */
  let restored = options.persisted === undefined;
  const now = (): number => options.clock.now().getTime();

  async function refresh(): Promise<Snapshot<T>> {
    if (!restored) {
      restored = true;
      const stored = await options.persisted?.read();
      // a copy "loaded" in the future is a clock gone wrong: never fresh, only a fallback
      if (stored !== undefined && current === undefined) current = stored.loadedAt <= now() ? stored : { ...stored, loadedAt: 0 };
      if (current !== undefined && now() < current.loadedAt + options.intervalMs) return current;
    }
    const startedAt = now();
    try {
      const value = await options.load();
      current = { value, loadedAt: now() };
      holdUntil = 0;
      await options.persisted?.write(current);
      return current;
    } catch (error) {
      if (current === undefined) throw error;
      holdUntil = startedAt + options.retryAfterFailureMs;
      options.logger.warn(
        { value: options.name, loadedAt: new Date(current.loadedAt).toISOString(), retryAt: new Date(holdUntil).toISOString(), error: String(error) },
        `refreshing ${options.name} failed; serving the copy from ${new Date(current.loadedAt).toISOString()}`,
      );
      return current;
    }
  }

  return {
    get(): Promise<Snapshot<T>> {
      const at = now();
      if (current !== undefined && (at < current.loadedAt + options.intervalMs || at < holdUntil)) return Promise.resolve(current);
      // `.finally` runs asynchronously, so `inflight` is always cleared after it was set.
      inflight ??= refresh().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
    peek: () => current,
  };
}
