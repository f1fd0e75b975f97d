import { type CloudProvider } from './cloud-provider';

type Resolution = Awaited<ReturnType<CloudProvider['resolveNodeClass']>>;

/**
 * Ready node-class resolutions (subnets, security groups, AMIs), kept briefly: each batch
 * — and each of the NodeClaims a batch launches at once — would otherwise describe them
 * again (Karpenter caches the same lookups for a minute). Concurrent lookups of one class
 * share one call. A class that is not ready is looked up again every time, so a fix shows
 * at once.
 *
 * Past `ttlMs` a resolution is looked up again, but until `maxStaleMs` the caller does not
 * wait for that: it gets the kept one, and the lookup runs behind it. Under EC2 throttling
 * three lookups take a minute; a packing or launch attempt that waited for them each time
 * could outlast its worker (`npm run scale` kills one every 20 s) and never finish. What a
 * caller can miss is a change on the cloud side (a subnet or AMI replaced) for up to
 * `maxStaleMs`; a change to the class itself is a new key and is looked up at once.
 */
export class ResolutionCache {
  private readonly entries = new Map<string, { at: number; resolution: Resolution }>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  constructor(
    private readonly ttlMs = 15_000,
    private readonly clock: () => number = Date.now,
    /** 0 past ttl by default: a caller that can act on a resolution minutes old says so */
    private readonly maxStaleMs = ttlMs,
  ) {}
  async resolve(scope: string, cloud: Pick<CloudProvider, 'resolveNodeClass'>, input: Parameters<CloudProvider['resolveNodeClass']>[0]): Promise<Resolution> {
    const key = `${scope}\n${JSON.stringify(input)}`;
    const hit = this.entries.get(key);
    const age = hit ? this.clock() - hit.at : Infinity;
    if (hit && age < this.ttlMs) return hit.resolution;
    if (hit && age < this.maxStaleMs) {
      // a failed refresh leaves the kept resolution until it is too old
      this.lookup(key, cloud, input).catch(() => undefined);
      return hit.resolution;
    }
    return this.lookup(key, cloud, input);
  }

  private async lookup(key: string, cloud: Pick<CloudProvider, 'resolveNodeClass'>, input: Parameters<CloudProvider['resolveNodeClass']>[0]): Promise<Resolution> {
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const call = cloud.resolveNodeClass(input).then((resolution) => {
      if (resolution.ready) this.entries.set(key, { at: this.clock(), resolution });
      else this.entries.delete(key);
      // forget what is too old to serve (classes deleted or edited)
      for (const [k, v] of this.entries) if (this.clock() - v.at >= this.maxStaleMs) this.entries.delete(k);
      return resolution;
    });
    this.inflight.set(key, call);
    try {
      return await call;
    } finally {
      this.inflight.delete(key);
    }
  }
}

/** How long the provisioner and launches serve a kept resolution while a fresh lookup runs behind it. */
export const RESOLUTION_MAX_STALE_MS = 5 * 60_000;
