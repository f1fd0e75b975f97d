import { addResources, formatResourceList, maxResources, parseResourceList, type ResourceList } from '../scheduling/resources';

/** One NodeClaim as the pool's usage sees it. */
export interface ClaimUsage {
  nodePool: string;
  /** status.capacity once launched */
  capacity?: Record<string, string> | undefined;
  /** the instance types it may still launch as (its instance-type requirement) */
  instanceTypeOptions: readonly string[];
}

/**
 * What each NodePool's claims use, counted from a claim's creation as Karpenter counts
 * them against `spec.limits`: a launched claim by its capacity, one still launching by the
 * largest of its options (the worst case it can become). `nodes` counts the claims.
 * This is the pool's `status.resources`, and the usage limits are checked against.
 */
export function poolUsage(claims: readonly ClaimUsage[], capacityOf: (instanceType: string) => Record<string, string> | undefined): Map<string, Record<string, string>> {
  const totals = new Map<string, { resources: ResourceList; nodes: number }>();
  for (const claim of claims) {
    let capacity: ResourceList = {};
    const launched = claim.capacity === undefined ? undefined : parseResourceList(claim.capacity);
    if (launched?.ok) capacity = launched.resources;
    else {
      for (const option of claim.instanceTypeOptions) {
        const parsed = parseResourceList(capacityOf(option) ?? {});
        if (parsed.ok) capacity = maxResources(capacity, parsed.resources);
      }
    }
    const total = totals.get(claim.nodePool) ?? { resources: {}, nodes: 0 };
    totals.set(claim.nodePool, { resources: addResources(total.resources, capacity), nodes: total.nodes + 1 });
  }
  return new Map([...totals].map(([pool, t]) => [pool, { ...formatResourceList(t.resources), nodes: String(t.nodes) }]));
}
