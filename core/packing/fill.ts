// New NodeClaims, bin by bin (performance.md §4.3: size the node, then pack it with a
// balanced rule, then shrink it to the cheapest type that holds what it got).
//
//  1. The seed is the most valuable pod left (value = its standalone cost).
//  2. Its pool is the heaviest-weighted one that can take it within limits.
//  3. Its target type comes from type-choice.ts: a ranking by simulated packing of the
//     waiting pods, computed per pool and reused while the waiting set is similar.
//  4. The claim is filled for real with the DotProduct rule, under every constraint
//     (requirements, ports, topology).
//  5. finalizeClaim later keeps every type that holds the result, cheapest first.
// Rejected alternative: Karpenter's "keep every type that still fits" lets each claim
// grow to the largest type and leaves the node count and cost to chance (karpenter.md
// §1.6, performance.md §1.2: +11% to +59% over the bound).
import { maskFor, type PodClass } from './classes';
import { addToClaimMutating, canAddToClaim, canOpen, openClaimMutating, probeClaim, type Claim } from './claim';
import type { SolveContext } from './context';
import { subtract, type Vec } from './dims';
import { said, type Explanation } from './misses';
import type { ClassQueue, PackState, RequestGroup } from './pack-state';
import type { Pool } from './pools';
import { chooseType } from './type-choice';

const fitsIn = (requests: Vec, room: Vec): boolean => {
  for (let i = 0; i < room.length; i++) if ((requests[i] ?? 0) > (room[i] ?? 0)) return false;
  return true;
};

/**
 * Balanced-fit score: alignment of the pod with the room left, per unit of the node,
 * Σ (request ÷ capacity) × (room ÷ capacity) over the node's resources. Both factors are
 * computed ahead (scaledRequests per group and type, scaledRoom per step), the same
 * numbers in the same order, so one step costs a multiply-add per resource and bucket.
 */
function alignment(scaled: Float64Array, room: Float64Array): number {
  let score = 0;
  for (let i = 0; i < room.length; i++) score += (scaled[i] as number) * (room[i] as number);
  return score;
}

/** The group's requests as shares of the type's allocatable (0 where it has none: such terms are left out). */
function scaledRequests(group: RequestGroup, size: Vec, target: number): Float64Array {
  let scaled = group.scaled.get(target);
  if (scaled === undefined) {
    scaled = new Float64Array(size.length);
    for (let i = 0; i < size.length; i++) {
      const capacity = size[i] ?? 0;
      if (capacity > 0) scaled[i] = (group.requests[i] ?? 0) / capacity;
    }
    group.scaled.set(target, scaled);
  }
  return scaled;
}

/** The room left as shares of the type's allocatable (0 where it has none), into `out`. */
function scaledRoom(room: Vec, size: Vec, out: Float64Array): void {
  for (let i = 0; i < size.length; i++) {
    const capacity = size[i] ?? 0;
    out[i] = capacity > 0 ? (room[i] ?? 0) / capacity : 0;
  }
}

/** One request vector's classes for this claim: they score alike, so one score per step. */
interface Bucket {
  readonly group: RequestGroup;
  /** 1: the claim's deferred classes (PackState.deferral), taken only when no tier-0 bucket fits. */
  readonly tier: number;
  /** The group's requests as shares of the claim's target (scaledRequests). */
  readonly scaled: Float64Array;
  /** Classes before this index are used up for this claim. */
  next: number;
}

/** The class's pods on this claim (Infinity once blocked), set up on first touch per claim. */
function countOn(queue: ClassQueue, claim: Claim): number {
  if (queue.fillClaim !== claim.id) {
    queue.fillClaim = claim.id;
    queue.fillCount = claim.classes.has(queue.podClass) ? 1 : 0;
  }
  return queue.fillCount;
}

/**
 * Moves the bucket to its first class that can still take a pod on this claim and returns
 * it. Exhausted classes leave the group for good (the round's queues only run out).
 */
function firstUsable(bucket: Bucket, claim: Claim, pool: Pool): ClassQueue | undefined {
  const { queues } = bucket.group;
  while (bucket.next < queues.length) {
    const queue = queues[bucket.next] as ClassQueue;
    if (queue.head >= queue.pods.length) {
      queues.splice(bucket.next, 1);
      continue;
    }
    if (maskFor(queue.podClass, pool)?.[claim.target.index] === 1 && countOn(queue, claim) < queue.perNode) return queue;
    bucket.next += 1;
  }
  return undefined;
}

/**
 * Fills a freshly opened claim from the waiting pods, most aligned first (ties: the bucket
 * whose first usable class is the most valuable). Classes with equal requests share a
 * bucket and one score per step; a class that stops fitting never fits again (the room
 * only shrinks, counts only grow), so buckets and classes drop out for good. Per claim:
 * one pass over the pool's request groups, then per pod one pass over the buckets still
 * in play — never over every waiting class (Karpenter's benchmark input at 20k pods:
 * 4,200 claims × 3,400 classes was half the solve).
 */
export function fillClaimMutating(claim: Claim, state: PackState, context: SolveContext, placed: Set<string>): void {
  const { pool, target } = claim;
  const room = subtract(target.allocatable, claim.used);
  const starts: { bucket: Bucket; order: number }[] = [];
  const deferred = state.deferral?.pool === pool.order ? state.deferral.classes : undefined;
  for (const whole of state.groupsByPool[pool.order] ?? []) {
    if (!fitsIn(whole.requests, room)) continue;
    // (deferred classes split off into a bucket of their own: a copy of the group's list, the group's scaled cache shared)
    const parts = deferred === undefined ? [whole] : [
      { ...whole, queues: whole.queues.filter((q) => !deferred.has(q.podClass.id)) },
      { ...whole, queues: whole.queues.filter((q) => deferred.has(q.podClass.id)) },
    ];
    parts.forEach((group, tier) => {
      const bucket: Bucket = { group, tier, scaled: scaledRequests(group, target.allocatable, target.index), next: 0 };
      const first = firstUsable(bucket, claim, pool);
      if (first !== undefined) starts.push({ bucket, order: first.order });
    });
  }
  const buckets = starts.sort((a, b) => a.order - b.order).map((s) => s.bucket);
  const shares = new Float64Array(room.length);
  for (;;) {
    scaledRoom(room, target.allocatable, shares);
    let best: ClassQueue | undefined;
    let bestBucket: Bucket | undefined;
    let bestScore = -1;
    let bestTier = Infinity;
    let kept = 0;
    for (const bucket of buckets) {
      if (!fitsIn(bucket.group.requests, room)) continue;
      const first = firstUsable(bucket, claim, pool);
      if (first === undefined) continue;
      buckets[kept++] = bucket;
      if (bucket.tier > bestTier) continue;
      const score = alignment(bucket.scaled, shares);
      if (bucket.tier < bestTier || score > bestScore) {
        bestTier = bucket.tier;
        bestScore = score;
        best = first;
        bestBucket = bucket;
      }
    }
    buckets.length = kept;
    if (best === undefined || bestBucket === undefined) return;
    let queue: ClassQueue | undefined = best;
    let proposal = canAddToClaim(claim, queue.podClass, context);
    while (!proposal.ok) {
      // Blocked for this claim (topology, requirements, ports): out of the candidates. The
      // bucket's next class scores the same and no bucket before it scored as high, so it
      // is what a fresh pass would pick: try it without one.
      queue.fillCount = Infinity;
      queue = firstUsable(bestBucket, claim, pool);
      if (queue === undefined) break;
      proposal = canAddToClaim(claim, queue.podClass, context);
    }
    if (queue === undefined || !proposal.ok) continue;
    const pod = queue.pods[queue.head];
    if (pod === undefined) return;
    queue.head += 1;
    state.waiting -= 1;
    addToClaimMutating(claim, queue.podClass, proposal, pod, context);
    placed.add(pod);
    queue.fillCount += 1;
    for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - (queue.podClass.requests[i] ?? 0);
  }
}

/** A dense id per distinct request vector, so fill buckets are keyed without strings per claim. */
export function shapeOf(requests: Vec, state: PackState): number {
  const key = requests.join(',');
  let shape = state.shapeIds.get(key);
  if (shape === undefined) {
    shape = state.shapeIds.size;
    state.shapeIds.set(key, shape);
  }
  return shape;
}

/** A failed seed's reasons, one per pool in the order tried, worded only if the pod stays unschedulable. */
export type SeedResult = { readonly ok: true; readonly claim: Claim } | { readonly ok: false; readonly reasons: Explanation[] };

/** Opens and fills a claim around the seed pod, trying pools by weight. */
export function openForSeedMutating(seed: ClassQueue, state: PackState, context: SolveContext, placed: Set<string>): SeedResult {
  const reasons: Explanation[] = [];
  for (const pool of context.pools) {
    const feasibility = seed.podClass.feasibility[pool.order];
    if (feasibility === undefined || !feasibility.ok) {
      reasons.push(feasibility?.ok === false ? feasibility.why : said(`NodePool ${pool.name}: unavailable`));
      continue;
    }
    const type = chooseType(pool, seed.podClass, state, context);
    if (type === undefined) {
      // worded now: limits and topology move on as claims are planned
      reasons.push(said(explainNoType(pool, seed.podClass, context)));
      continue;
    }
    const claim = openClaimMutating(state.claims.length, pool, type, context);
    state.claims.push(claim);
    // chooseType checked the seed against this very claim shape, so this cannot fail.
    const proposal = canAddToClaim(claim, seed.podClass, context);
    const pod = seed.pods[seed.head];
    if (!proposal.ok || pod === undefined) throw new Error(`seed ${pod ?? '?'} rejected by its own claim: ${proposal.ok ? 'no pod' : proposal.reason}`);
    seed.head += 1;
    state.waiting -= 1;
    addToClaimMutating(claim, seed.podClass, proposal, pod, context);
    placed.add(pod);
    fillClaimMutating(claim, state, context, placed);
    return { ok: true, claim };
  }
  return { ok: false, reasons };
}

/** Why no type of a pool that could host the class statically can take it now. */
function explainNoType(pool: Pool, podClass: PodClass, context: SolveContext): string {
  const mask = maskFor(podClass, pool);
  const fitting = pool.types.filter((t) => mask?.[t.index] === 1);
  const withinLimits = fitting.filter((t) => canOpen(pool, t));
  if (withinLimits.length === 0) {
    const smallest = fitting[0];
    const limits = pool.limited.map((i) => `${context.dims.names[i] ?? '?'} ${context.dims.format(pool.headroom.map((v, j) => (j === i ? Math.max(0, v) : 0)))[context.dims.names[i] ?? ''] ?? '0'} left`);
    return `NodePool ${pool.name}: its limits would be exceeded (${pool.nodesHeadroom < 1 ? 'no nodes left' : limits.join(', ')}${smallest === undefined ? '' : `; ${fitting.length} fitting type(s), e.g. ${smallest.name}`})`;
  }
  const type = withinLimits[0];
  if (type === undefined) return `NodePool ${pool.name}: no type`;
  const proposal = canAddToClaim(probeClaim(pool, type, context), podClass, context);
  return `NodePool ${pool.name}: ${proposal.ok ? 'no type fits' : proposal.reason}`;
}
