// Which waiting class seeds the next new claim when pools differ in what they admit (issue
// 14, finding 3: "riders").
//
// Karpenter's weights decide only which pool opens a node: a pool opens one for a pod
// only when every heavier pool admitting it cannot (fill.ts openForSeedMutating tries
// pools by weight). Once a node is in flight any pod it admits may ride on it. So a
// lighter pool that must open nodes for pods of its own (many-pools: arm64-only pods on
// the arm pool, weight 10, once the limited on-demand pool is spent) can carry pods that
// would otherwise open nodes in a heavier pool (plain pods on amd64 spot, weight 40) —
// and on the AWS catalog arm64 capacity is the cheaper. Seeding in value order alone
// interleaves the two: most plain pods have opened spot nodes before the arm64 pods open
// theirs, and the arm nodes are then sized and filled for the arm64 pods alone.
//
// So while some pool can take riders, the most valuable class whose opening pool is such
// a pool seeds first: its node's type is chosen for the pool's whole waiting set
// (type-choice.ts ranks by simulated packing of every class the pool admits, riders
// included) and filled from it. Weights hold by construction: the seed still tries pools
// by weight, only the order of seeds changes.
//
// A class's opening pool is the first pool by weight that admits it and still has a type
// for it within its limits; it changes only when a limited pool opens (or gives back) a
// node, so it is cached per "limits epoch" (the limited pools' headroom summed).
//
// Measured on many-pools (3,000 pods, five pools; the LP guide plans the on-demand and
// batch pools' nodes, this the rest): 98.86 $/h before (arm 169 nodes, spot 296), 95.06
// with the seed order alone (397 arm nodes used up the 600 arm64 pods as riders of each
// other, 723 plain pods still opened spot nodes), 94.87 with the opener's class-mates
// deferred (329 arm nodes hold every plain pod, no spot node). One pool, or pools that
// share no pod (aws-realistic, topology-heavy, karpenter-exact): RiderSeeds.of is
// undefined and nothing changes. Rejected: h-cost4's "opener" pattern columns in the LP
// (a lighter pool's pattern must hold a pod no heavier pool admits) — they let a lighter
// pool open while the limited heavier one still had room, and lost in rounding.
import { canOpen } from './claim';
import type { SolveContext } from './context';
import { remainingOf, type ClassQueue, type Deferral } from './pack-state';
import type { Pool } from './pools';

export class RiderSeeds {
  private readonly limitedPools: readonly Pool[];
  private epoch = NaN;
  /**
   * The epoch in which `next()` last found no rider pool. Queues only shrink within a round,
   * so none stays none until a limited pool's headroom moves (a new epoch): the per-pod
   * rescan of pools × classes is skipped meanwhile.
   */
  private noneAt = NaN;
  /** By class id: its opening pool's order (-1: none) for the current epoch. */
  private readonly openers = new Map<number, number>();

  private constructor(private readonly queues: readonly ClassQueue[], private readonly context: SolveContext) {
    this.limitedPools = context.pools.filter(limitedPool);
  }

  /**
   * Undefined when no pool could ever carry a rider: no pool admits a class that a heavier
   * one admits too (one pool, or pools with disjoint pods), so seeding stays in value order.
   * `queues`: the round's class queues, most valuable first.
   */
  static of(queues: readonly ClassQueue[], context: SolveContext): RiderSeeds | undefined {
    const possible = context.pools.some((pool) => queues.some((queue) => admits(pool, queue)
      && context.pools.some((heavier) => heavier.order < pool.order && admits(heavier, queue))));
    return possible ? new RiderSeeds(queues, context) : undefined;
  }

  /**
   * The most valuable waiting class whose opening pool can carry riders, if any, with the
   * classes that open that pool: its node takes them only when no rider fits (fill.ts
   * Deferral), so they are kept to open the pool's next nodes.
   */
  next(): { readonly seed: ClassQueue; readonly deferral: Deferral } | undefined {
    this.refresh();
    if (this.noneAt === this.epoch) return undefined;
    const live = this.queues.filter((queue) => remainingOf(queue) > 0);
    const riderPools = new Set<number>();
    for (const pool of this.context.pools) {
      if (live.some((queue) => admits(pool, queue) && this.openerOf(queue) < pool.order && this.openerOf(queue) >= 0)) riderPools.add(pool.order);
    }
    const seed = live.find((queue) => riderPools.has(this.openerOf(queue)));
    if (seed === undefined) {
      this.noneAt = this.epoch;
      return undefined;
    }
    const pool = this.openerOf(seed);
    return { seed, deferral: { pool, classes: new Set(live.filter((queue) => this.openerOf(queue) === pool).map((queue) => queue.podClass.id)) } };
  }

  private refresh(): void {
    let epoch = 0;
    for (const pool of this.limitedPools) epoch += pool.nodesHeadroom + pool.headroom.reduce((sum, v) => sum + v, 0);
    if (epoch === this.epoch) return;
    this.epoch = epoch;
    this.openers.clear();
  }

  private openerOf(queue: ClassQueue): number {
    const id = queue.podClass.id;
    let order = this.openers.get(id);
    if (order === undefined) {
      order = openingPool(queue, this.context);
      this.openers.set(id, order);
    }
    return order;
  }
}

function limitedPool(pool: Pool): boolean {
  return pool.limited.length > 0 || Number.isFinite(pool.nodesHeadroom);
}

function admits(pool: Pool, queue: ClassQueue): boolean {
  return queue.podClass.feasibility[pool.order]?.ok === true;
}

/** The first pool by weight that admits the class and has a type for it within its limits (-1: none). */
export function openingPool(queue: ClassQueue, context: SolveContext): number {
  for (const pool of context.pools) {
    const feasibility = queue.podClass.feasibility[pool.order];
    if (feasibility === undefined || !feasibility.ok) continue;
    if (!limitedPool(pool)) return pool.order;
    for (const index of feasibility.types) {
      const type = pool.types[index];
      if (type !== undefined && canOpen(pool, type)) return pool.order;
    }
  }
  return -1;
}
