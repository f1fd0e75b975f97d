// New NodeClaims, bin by bin (performance.md §4.3: size the node, then pack it with a
// balanced rule, then shrink it to the cheapest type that holds what it got).
//
//  1. The seed is the most valuable pod left (value = fluid-LP price of its requests).
//  2. Its pool is the heaviest-weighted one that can take it within limits.
//  3. Its target type is chosen by simulation: for a short list of candidate types (the
//     most cost-efficient by fluid-LP value per dollar, plus the cheapest that fits),
//     pack the pods still waiting with the DotProduct rule and keep the type whose
//     packing is worth the most per dollar.
//  4. The claim is filled for real with the same rule, under every constraint
//     (requirements, ports, topology).
//  5. finalizeClaim later keeps every type that holds the result, cheapest first.
// Rejected alternative: Karpenter's "keep every type that still fits" lets each claim
// grow to the largest type and leaves the node count and cost to chance (karpenter.md
// §1.6, performance.md §1.2: +11% to +59% over the bound).
import { maskFor, type PodClass } from './classes';
import { addToClaimMutating, canAddToClaim, canOpen, openClaimMutating, probeClaim, type Claim } from './claim';
import { topologyOf, type SolveContext } from './context';
import { dot, subtract, type Vec } from './dims';
import { cmp, offeringAllowed, type Pool, type PoolType } from './pools';

export interface ClassQueue {
  readonly podClass: PodClass;
  readonly pods: string[];
  head: number;
}

export function remainingOf(queue: ClassQueue): number {
  return queue.pods.length - queue.head;
}

export interface PackState {
  readonly queues: Map<number, ClassQueue>;
  /** Per pool: the queues of classes it can host, most valuable first. */
  readonly activeByPool: ClassQueue[][];
  readonly claims: Claim[];
  /** Type choice per (pool, seed class), reused while the waiting set is similar. */
  readonly typeChoice: Map<string, { type: PoolType; waiting: number }>;
  waiting: number;
}

const candidateTypes = 12;

/** Balanced-fit score: alignment of the pod with the room left, per unit of the node. */
function alignment(requests: Vec, room: Vec, size: Vec): number {
  let score = 0;
  for (let i = 0; i < size.length; i++) {
    const capacity = size[i] ?? 0;
    if (capacity > 0) score += ((requests[i] ?? 0) / capacity) * ((room[i] ?? 0) / capacity);
  }
  return score;
}

function fitsIn(requests: Vec, room: Vec): boolean {
  for (let i = 0; i < room.length; i++) if ((requests[i] ?? 0) > (room[i] ?? 0)) return false;
  return true;
}

function priceFor(type: PoolType, podClass: PodClass): number {
  return type.offerings.find((o) => offeringAllowed(o, podClass.zone, podClass.capacityType))?.price ?? Infinity;
}

/** Value per dollar of a simulated DotProduct packing of a fresh `type` node around the seed. */
function simulatedValuePerDollar(pool: Pool, type: PoolType, seed: PodClass, state: PackState, context: SolveContext): number {
  const room = subtract(subtract(type.allocatable, type.daemonOverhead), seed.requests);
  const taken = new Map<number, number>([[seed.id, 1]]);
  let value = seed.value;
  const active = state.activeByPool[pool.order] ?? [];
  const size = type.allocatable;
  for (let step = 0; step < 256; step++) {
    let best: ClassQueue | undefined;
    let bestScore = -1;
    for (const queue of active) {
      const { podClass } = queue;
      const already = taken.get(podClass.id) ?? 0;
      if (remainingOf(queue) - already <= 0) continue;
      if (maskFor(podClass, pool)?.[type.index] !== 1) continue;
      if (already >= topologyOf(context, podClass).perNode) continue;
      if (!fitsIn(podClass.requests, room)) continue;
      const score = alignment(podClass.requests, room, size);
      if (score > bestScore) {
        bestScore = score;
        best = queue;
      }
    }
    if (best === undefined) break;
    for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - (best.podClass.requests[i] ?? 0);
    taken.set(best.podClass.id, (taken.get(best.podClass.id) ?? 0) + 1);
    value += best.podClass.value;
  }
  return value / priceFor(type, seed);
}

/** The target type for a claim seeded by this class in this pool, or undefined. */
export function chooseType(pool: Pool, seed: PodClass, state: PackState, context: SolveContext): PoolType | undefined {
  const mask = maskFor(seed, pool);
  if (mask === undefined) return undefined;
  // Keyed by shape, not class: classes that differ only in labels or topology would
  // simulate (almost) the same packing, and re-simulating per class dominated solve time.
  const cacheKey = `${pool.order}|${seed.requests.join(',')}|${topologyOf(context, seed).perNode}|${seed.zone === undefined ? '' : JSON.stringify(seed.zone)}`;
  const cached = state.typeChoice.get(cacheKey);
  if (cached !== undefined && state.waiting >= cached.waiting * 0.75 && canOpen(pool, cached.type)
    && canAddToClaim(probeClaim(pool, cached.type, context), seed, context).ok) return cached.type;

  const feasible = pool.types.filter((t) => mask[t.index] === 1 && canOpen(pool, t) && canAddToClaim(probeClaim(pool, t, context), seed, context).ok);
  if (feasible.length === 0) return undefined;
  const efficiency = (t: PoolType): number => dot(context.prices, subtract(t.allocatable, t.daemonOverhead)) / priceFor(t, seed);
  const byEfficiency = feasible
    .map((type) => ({ type, efficiency: efficiency(type), price: priceFor(type, seed) }))
    .sort((a, b) => b.efficiency - a.efficiency || a.price - b.price || cmp(a.type.name, b.type.name));
  const cheapest = [...byEfficiency].sort((a, b) => a.price - b.price || cmp(a.type.name, b.type.name))[0];
  const shortlist = byEfficiency.slice(0, candidateTypes);
  if (cheapest !== undefined && !shortlist.includes(cheapest)) shortlist.push(cheapest);

  let best: { type: PoolType; score: number; price: number } | undefined;
  for (const { type, price } of shortlist) {
    const score = simulatedValuePerDollar(pool, type, seed, state, context);
    // Within 0.01% counts as a tie: the cheaper node wins, then the name.
    if (best === undefined || score > best.score * 1.0001 || (score >= best.score * 0.9999 && (price < best.price || (price === best.price && type.name < best.type.name)))) {
      best = { type, score, price };
    }
  }
  if (best !== undefined) state.typeChoice.set(cacheKey, { type: best.type, waiting: state.waiting });
  return best?.type;
}

/** Fills a freshly opened claim from the waiting pods, most aligned first. */
export function fillClaimMutating(claim: Claim, state: PackState, context: SolveContext, placed: Set<string>): void {
  const { pool, target } = claim;
  const active = state.activeByPool[pool.order] ?? [];
  const blocked = new Set<number>();
  const perClass = new Map<number, number>([...claim.classes].map((c) => [c.id, claim.pods.length === 0 ? 0 : 1]));
  const room = subtract(target.allocatable, claim.used);
  for (;;) {
    let best: ClassQueue | undefined;
    let bestScore = -1;
    for (const queue of active) {
      const { podClass } = queue;
      if (remainingOf(queue) <= 0 || blocked.has(podClass.id)) continue;
      if (maskFor(podClass, pool)?.[target.index] !== 1) continue;
      if ((perClass.get(podClass.id) ?? 0) >= topologyOf(context, podClass).perNode) continue;
      if (!fitsIn(podClass.requests, room)) continue;
      const score = alignment(podClass.requests, room, target.allocatable);
      if (score > bestScore) {
        bestScore = score;
        best = queue;
      }
    }
    if (best === undefined) return;
    const proposal = canAddToClaim(claim, best.podClass, context);
    if (!proposal.ok) {
      blocked.add(best.podClass.id);
      continue;
    }
    const pod = best.pods[best.head];
    if (pod === undefined) return;
    best.head += 1;
    state.waiting -= 1;
    addToClaimMutating(claim, best.podClass, proposal, pod, context);
    placed.add(pod);
    perClass.set(best.podClass.id, (perClass.get(best.podClass.id) ?? 0) + 1);
    for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - (best.podClass.requests[i] ?? 0);
  }
}

export type SeedResult = { readonly ok: true; readonly claim: Claim } | { readonly ok: false; readonly reasons: string[] };

/** Opens and fills a claim around the seed pod, trying pools by weight. */
export function openForSeedMutating(seed: ClassQueue, state: PackState, context: SolveContext, placed: Set<string>): SeedResult {
  const reasons: string[] = [];
  for (const pool of context.pools) {
    const feasibility = seed.podClass.feasibility[pool.order];
    if (feasibility === undefined || !feasibility.ok) {
      reasons.push(feasibility?.ok === false ? feasibility.reason : `NodePool ${pool.name}: unavailable`);
      continue;
    }
    const type = chooseType(pool, seed.podClass, state, context);
    if (type === undefined) {
      reasons.push(explainNoType(pool, seed.podClass, context));
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
