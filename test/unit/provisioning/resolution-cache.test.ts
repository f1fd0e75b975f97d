import { ResolutionCache } from '../../../activities/provisioner/catalog';
import type { CloudProvider } from '../../../activities/cloud';

type Resolution = Awaited<ReturnType<CloudProvider['resolveNodeClass']>>;
const input = { name: 'default', spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [] } };

function cloud(answers: boolean[]) {
  const calls: unknown[] = [];
  return {
    calls,
    resolveNodeClass: async (i: unknown) => {
      calls.push(i);
      const ready = answers.shift() ?? true;
      return { ready, conditions: [], subnets: [], securityGroups: [], amis: [] } as unknown as Resolution;
    },
  };
}

describe('ResolutionCache', () => {
  it('answers a ready resolution from memory until it is ttl old, then asks again', async () => {
    let now = 0;
    const cache = new ResolutionCache(15_000, () => now);
    const c = cloud([true, true]);
    await cache.resolve('a', c, input);
    now = 14_999;
    await cache.resolve('a', c, input);
    expect(c.calls).toHaveLength(1);
    now = 15_000;
    await cache.resolve('a', c, input);
    expect(c.calls).toHaveLength(2);
  });

  it('past ttl and before maxStale, answers the kept resolution at once and looks up again behind it', async () => {
    let now = 0;
    const cache = new ResolutionCache(15_000, () => now, 60_000);
    let release: () => void = () => undefined;
    const calls: number[] = [];
    const slow = {
      resolveNodeClass: async () => {
        calls.push(now);
        if (calls.length > 1) await new Promise<void>((resolve) => (release = resolve));
        return { ready: true, conditions: [], subnets: [{ id: `subnet-${calls.length}` }] } as unknown as Resolution;
      },
    };
    const first = await cache.resolve('a', slow, input);
    now = 30_000;
    // the refresh is held: the caller still gets the kept resolution, without waiting
    await expect(cache.resolve('a', slow, input)).resolves.toBe(first);
    await expect(cache.resolve('a', slow, input)).resolves.toBe(first);
    expect(calls).toEqual([0, 30_000]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await cache.resolve('a', slow, input)).subnets).toEqual([{ id: 'subnet-2' }]);
    // too old to serve: the caller waits for the lookup
    now = 30_000 + 60_000;
    const waited = cache.resolve('a', slow, input);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect((await waited).subnets).toEqual([{ id: 'subnet-3' }]);
  });

  it('a refresh that fails behind a kept resolution leaves it in place', async () => {
    let now = 0;
    const cache = new ResolutionCache(15_000, () => now, 60_000);
    let fail = false;
    const flaky = {
      resolveNodeClass: async () => {
        if (fail) throw new Error('throttled');
        return { ready: true, conditions: [] } as unknown as Resolution;
      },
    };
    const kept = await cache.resolve('a', flaky, input);
    fail = true;
    now = 20_000;
    await expect(cache.resolve('a', flaky, input)).resolves.toBe(kept);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(cache.resolve('a', flaky, input)).resolves.toBe(kept);
  });

  it('never keeps a class that is not ready: a fix shows at the next lookup', async () => {
    const cache = new ResolutionCache(15_000, () => 0);
    const c = cloud([false, true, true]);
    expect((await cache.resolve('a', c, input)).ready).toBe(false);
    expect((await cache.resolve('a', c, input)).ready).toBe(true);
    await cache.resolve('a', c, input);
    expect(c.calls).toHaveLength(2);
  });

  it('keeps clusters and specs apart', async () => {
    const cache = new ResolutionCache(15_000, () => 0);
    const c = cloud([]);
    await cache.resolve('a', c, input);
    await cache.resolve('b', c, input);
    await cache.resolve('a', c, { ...input, spec: { ...input.spec, amiFamily: 'Custom' } });
    await cache.resolve('a', c, input);
    expect(c.calls).toHaveLength(3);
  });

  it('concurrent lookups of one class share one call (40 claims launching at once describe it once)', async () => {
    const cache = new ResolutionCache(15_000, () => 0);
    const c = cloud([]);
    const all = await Promise.all(Array.from({ length: 40 }, () => cache.resolve('a', c, input)));
    expect(c.calls).toHaveLength(1);
    expect(all.every((r) => r === all[0])).toBe(true);
  });

  it('a failed shared call fails every waiter, and the next lookup asks again', async () => {
    const cache = new ResolutionCache(15_000, () => 0);
    let calls = 0;
    const failing = { resolveNodeClass: async () => { calls++; if (calls === 1) throw new Error('throttled'); return { ready: true, conditions: [] } as unknown as Resolution; } };
    await expect(Promise.all([cache.resolve('a', failing, input), cache.resolve('a', failing, input)])).rejects.toThrow('throttled');
    expect(calls).toBe(1);
    expect((await cache.resolve('a', failing, input)).ready).toBe(true);
  });
});
