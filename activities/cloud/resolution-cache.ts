import { type CloudProvider } from './cloud-provider';

type Resolution = Awaited<ReturnType<CloudProvider['resolveNodeClass']>>;

/**
 * Ready node-class resolutions (subnets, security groups, AMIs), kept briefly: each batch
 * — and each of the NodeClaims a batch launches at once — would otherwise describe them
 * again (Karpenter caches the same lookups for a minute). Concurrent lookups of one class
 * share one call. A class that is not ready is looked up again every time, so a fix shows
 * at once.
 */
export class ResolutionCache {
  private readonly entries = new Map<string, { at: number; resolution: Resolution }>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  constructor(
    private readonly ttlMs = 15_000,
    private readonly clock: () => number = Date.now,
  ) {}
  async resolve(scope: string, cloud: Pick<CloudProvider, 'resolveNodeClass'>, input: Parameters<CloudProvider['resolveNodeClass']>[0]): Promise<Resolution> {
    const key = `${scope}\n${JSON.stringify(input)}`;
    const hit = this.entries.get(key);
    if (hit && this.clock() - hit.at < this.ttlMs) return hit.resolution;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const call = cloud.resolveNodeClass(input).then(
      (resolution) => {
        if (resolution.ready) this.entries.set(key, { at: this.clock(), resolution });
        else this.entries.delete(key);
        // forget what has expired (classes deleted or edited)
        for (const [k, v] of this.entries) if (this.clock() - v.at >= this.ttlMs) this.entries.delete(k);
        return resolution;
      },
    );
    this.inflight.set(key, call);
    try {
      return await call;
    } finally {
      this.inflight.delete(key);
    }
  }
}
