// The LP guide's rider pass (issue 14, finding 3): once the first guided pass has closed
// a limited pool, plan a lighter pool's nodes for its own pods *and* the riders it admits.
//
// Karpenter's weights decide only which pool opens a node (riders.ts): a pool P opens one
// for a pod only when every heavier pool admitting it cannot, and once the node is in
// flight any pod it admits may ride on it. The first pass (guide.ts) lets a class use only
// its heaviest open pools, so on many-pools (od weight 80 limited to 200 cpu, amd64 spot
// 40, arm64 10) it plans od's nodes and leaves the rest — 600 arm64-only pods, whose
// pool is now arm, and ~1,640 plain ones, whose pool is now spot but which may ride on
// arm nodes — to the greedy fill. The weights-aware bound (pool-bound.ts) puts all of
// them on arm64 spot capacity, the cheaper per resource on the AWS catalog.
//
// This pass, per pool P with pods of its own (*natives*: P is the first pool by weight
// that admits them and can still open one of their types) and pods that may ride on it
// (*riders*: P admits them, a heavier pool opens for them): one column generation over
// P's types for natives and riders together, pods of equal requests and equal type masks
// in P as one item (they are interchangeable on P's nodes). The LP knows the openers
// (patterns.ts PatternProblem.openers): every pattern names an item whose native pod
// opens its node, and an item opens at most as many nodes as it has natives, so every
// rounded node has an opener. (Before, openers were assigned after rounding: ~125 of
// ~590 rounded nodes on many-pools, small ones holding small plain pods, had none and
// their pods went back to the greedy fill.) Each node takes its opener first, then is
// filled from its pattern, riders before natives; what rounding leaves (5%) tops up the
// room the nodes have left, and the rest waits for the greedy fill. Weights hold by
// construction: every node of P holds a native, and P is the native's first pool by
// weight with room.
//
// Measured on many-pools: see docs/NOTES.md ("Issue 14 finding 3, many-pools" and its
// round 2).
import { maskFor } from './classes';
import { canOpen, openClaimMutating, type Claim } from './claim';
import type { SolveContext } from './context';
import { add, subtract } from './dims';
import { guideBudgets, joinNextMutating } from './guide';
import type { LinearSolver } from './linear-program';
import { remainingOf, type ClassQueue, type PackState } from './pack-state';
import { PatternGenerator, type Pattern } from './patterns';
import type { PlannedNodeClaim } from './plan';
import type { Pool, PoolType } from './pools';
import { openingPool } from './riders';

/** The first pass's budgets (guide.ts): a deterministic stand-in for a time limit. */
const { maxIterations, fastBudget, workBudget, roundWork, maxRounds, iterationsPerRound, maxWork } = guideBudgets;
/**
 * The rider pass generates with this many times the first pass's budgets: its opener rows
 * slow the LP down (many-pools' arm pool: 69.17 $/h after the usual budget, unconverged,
 * 68.74 after twice it), and guide.ts no longer spends a full budget on a block its limits
 * stop early. many-pools: ×1 89.61 $/h, ×1.5 89.50, ×2 89.30, ×2.5 89.25, ×3 89.43.
 */
const riderBudgets = 2;
/**
 * Rounding stops with this share of the pods left to the greedy fill (its tail costs an LP
 * solve per node). many-pools, natives placed before riders: 0 → 92.11 $/h, 0.02 → 92.17,
 * 0.05 → 91.97, 0.1 → 92.84; riders first (as below): 0 → 92.11, 0.05 → 91.21.
 */
const leaveToGreedy = 0.05;

/** Interchangeable pods on the pool's nodes: natives and riders of one request vector and type mask. */
interface RiderItem {
  readonly natives: ClassQueue[];
  readonly riders: ClassQueue[];
}

export interface RiderPassOptions {
  readonly solver: LinearSolver;
  /** The greedy plan's nodes: those of the pool holding only this pass's pods seed the master. */
  readonly hints: readonly PlannedNodeClaim[];
  /** Classes the LP may plan (guide.ts: no topology rules, no host ports). */
  readonly plannable: (queue: ClassQueue) => boolean;
}

/** Runs the pass for each pool with natives and riders, heaviest first; true if it opened any claim. */
export function guideRidersMutating(state: PackState, context: SolveContext, options: RiderPassOptions, placed: Set<string>): boolean {
  let opened = false;
  for (const pool of context.pools) {
    const live = [...state.queues.values()].filter((queue) => remainingOf(queue) > 0 && options.plannable(queue));
    const openers = new Map(live.map((queue) => [queue.podClass.id, openingPool(queue, context)]));
    const natives = live.filter((queue) => openers.get(queue.podClass.id) === pool.order);
    const riders = live.filter((queue) => {
      const opener = openers.get(queue.podClass.id) ?? -1;
      return opener >= 0 && opener !== pool.order && maskFor(queue.podClass, pool) !== undefined;
    });
    if (natives.length === 0 || riders.length === 0) continue;
    if (planPoolMutating(pool, { natives, riders }, state, context, options, placed)) opened = true;
  }
  return opened;
}

function planPoolMutating(pool: Pool, classes: { natives: ClassQueue[]; riders: ClassQueue[] }, state: PackState, context: SolveContext, options: RiderPassOptions, placed: Set<string>): boolean {
  const items = riderItems(pool, classes);
  const types = pool.types.filter((type) => type.offerings.length > 0 && canOpen(pool, type));
  if (items.length === 0 || types.length === 0) return false;
  const masks = items.map((item) => maskFor((item.natives[0] ?? item.riders[0])?.podClass ?? classes.natives[0]!.podClass, pool));
  const generator = new PatternGenerator(
    {
      items: items.map((item) => ({ requests: (item.natives[0] ?? item.riders[0])?.podClass.requests ?? new Float64Array(0), count: countOf(item.natives) + countOf(item.riders) })),
      types: types.map((type) => ({ capacity: subtract(type.allocatable, type.daemonOverhead), price: type.offerings[0]?.price ?? Infinity })),
      allowed: (k, t) => masks[k]?.[types[t]?.index ?? -1] === 1,
      openers: items.map((item) => countOf(item.natives)),
    },
    options.solver,
    { mode: 'fast', maxIterations: riderBudgets * maxIterations, dpBudget: 0, fastBudget, searchNodes: 0, workBudget: riderBudgets * workBudget, leaveToGreedy },
  );
  try {
    if (items.length * generator.typeCount > maxWork) return false;
    seedWithHints(generator, pool, types, items, options.hints);
    generator.generate();
    const limited = pool.limited.length > 0 || Number.isFinite(pool.nodesHeadroom);
    const { nodes } = generator.round(maxRounds, iterationsPerRound, roundWork, limited ? poolLimit(pool, types) : undefined);
    const claims: { claim: Claim; node: Pattern }[] = [];
    nodes.forEach((node) => {
      const k = node.opener ?? -1;
      const type = types[node.type];
      const item = items[k];
      if (item === undefined || type === undefined || !canOpen(pool, type)) return;
      const claim = openClaimMutating(state.claims.length, pool, type, context);
      if (takeMutating(claim, item.natives, 1, state, context, placed) === 0) {
        giveBackMutating(pool, claim);
        return;
      }
      state.claims.push(claim);
      node.counts[k] = (node.counts[k] ?? 0) - 1;
      claims.push({ claim, node });
    });
    // Riders before natives on every node: a native left over opens a node of this pool in
    // the greedy fill, where riders left over ride on it (riders.ts); a rider left over
    // with no native to open a node for it goes to its own pool.
    for (const side of ['riders', 'natives'] as const) {
      for (const { claim, node } of claims) {
        node.counts.forEach((count, k) => {
          const item = items[k];
          if (item === undefined || count <= 0) return;
          node.counts[k] = count - takeMutating(claim, item[side], count, state, context, placed);
        });
      }
    }
    topUpMutating(claims.map(({ claim }) => claim), items, state, context, placed);
    return claims.length > 0;
  } finally {
    generator.dispose();
  }
}

/** Natives and riders by request vector and type mask in the pool, each list most valuable first. */
function riderItems(pool: Pool, classes: { natives: readonly ClassQueue[]; riders: readonly ClassQueue[] }): RiderItem[] {
  const byKey = new Map<string, RiderItem>();
  const keyOf = (queue: ClassQueue): string => `${queue.podClass.requests.join(',')}|${maskFor(queue.podClass, pool)?.join('') ?? ''}`;
  const itemOf = (queue: ClassQueue): RiderItem => {
    const key = keyOf(queue);
    let item = byKey.get(key);
    if (item === undefined) {
      item = { natives: [], riders: [] };
      byKey.set(key, item);
    }
    return item;
  };
  for (const queue of classes.natives) itemOf(queue).natives.push(queue);
  for (const queue of classes.riders) itemOf(queue).riders.push(queue);
  const byOrder = (a: ClassQueue, b: ClassQueue): number => a.order - b.order;
  // (items in the order of their most valuable class: deterministic, as the queues are)
  const items = [...byKey.values()];
  for (const item of items) { item.natives.sort(byOrder); item.riders.sort(byOrder); }
  const first = (item: RiderItem): number => Math.min(item.natives[0]?.order ?? Infinity, item.riders[0]?.order ?? Infinity);
  return items.sort((a, b) => first(a) - first(b));
}

function countOf(queues: readonly ClassQueue[]): number {
  return queues.reduce((sum, queue) => sum + remainingOf(queue), 0);
}

/** The greedy plan's nodes of this pool whose pods are all in the pass's items start the master (one column per item that could open each: addKnownPattern). */
function seedWithHints(generator: PatternGenerator, pool: Pool, types: readonly PoolType[], items: readonly RiderItem[], hints: readonly PlannedNodeClaim[]): void {
  const itemOf = new Map<string, number>();
  items.forEach((item, k) => {
    for (const queue of [...item.natives, ...item.riders]) for (let i = queue.head; i < queue.pods.length; i++) itemOf.set(queue.pods[i] ?? '', k);
  });
  const typeOf = new Map(types.map((type, t) => [type.name, t]));
  for (const claim of hints) {
    const t = typeOf.get(claim.instanceType);
    if (claim.nodePool !== pool.name || t === undefined || !claim.pods.every((pod) => itemOf.has(pod))) continue;
    const counts = new Int32Array(items.length);
    for (const pod of claim.pods) {
      const k = itemOf.get(pod) ?? 0;
      counts[k] = (counts[k] ?? 0) + 1;
    }
    generator.addKnownPattern(t, counts);
  }
}

/** Up to `count` pods from the queues (first class the claim admits first) onto the claim; how many joined. */
function takeMutating(claim: Claim, queues: readonly ClassQueue[], count: number, state: PackState, context: SolveContext, placed: Set<string>): number {
  let joined = 0;
  for (const queue of queues) {
    while (joined < count && joinNextMutating(claim, queue, state, context, placed)) joined++;
    if (joined >= count) break;
  }
  return joined;
}

/**
 * What rounding left (leaveToGreedy) into the room the pass's nodes have left — a pattern
 * trimmed to the demand left does not fill its node — largest pods first, riders before
 * natives (as the fill above). Any pod a node admits may ride on it: its opener is in
 * place. What does not fit waits for the greedy fill.
 */
function topUpMutating(claims: readonly Claim[], items: readonly RiderItem[], state: PackState, context: SolveContext, placed: Set<string>): void {
  const requests = (item: RiderItem): Float64Array => (item.natives[0] ?? item.riders[0])?.podClass.requests ?? new Float64Array(0);
  const largestFirst = items.map((item, k) => ({ item, k })).sort((x, y) => {
    const a = requests(x.item);
    const b = requests(y.item);
    return (b[0] ?? 0) - (a[0] ?? 0) || (b[1] ?? 0) - (a[1] ?? 0) || x.k - y.k;
  });
  for (const claim of claims) {
    for (const side of ['riders', 'natives'] as const) {
      for (const { item } of largestFirst) takeMutating(claim, item[side], Infinity, state, context, placed);
    }
  }
}

function giveBackMutating(pool: Pool, claim: Claim): void {
  pool.headroom.set(add(pool.headroom, claim.reservation));
  pool.nodesHeadroom += 1;
}

/** The pool's limits as rounding sees them: a copy of its headroom, charged per node taken. */
function poolLimit(pool: Pool, types: readonly PoolType[]): { fits: (t: number) => boolean; take: (t: number) => void } {
  const room = Float64Array.from(pool.headroom);
  let nodes = pool.nodesHeadroom;
  return {
    fits: (t) => nodes >= 1 && pool.limited.every((r) => (types[t]?.capacity[r] ?? 0) <= (room[r] ?? 0)),
    take: (t) => {
      nodes -= 1;
      for (const r of pool.limited) room[r] = (room[r] ?? 0) - (types[t]?.capacity[r] ?? 0);
    },
  };
}
