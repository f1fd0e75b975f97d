// The state of the new-claim phase of one solve round: the waiting pods by class, and
// caches that live as long as the round (type rankings, hostname caps, mask keys).
import type { Claim } from './claim';
import type { PodClass } from './classes';
import type { Vec } from './dims';
import type { PoolType } from './pools';

export interface ClassQueue {
  readonly podClass: PodClass;
  readonly pods: string[];
  head: number;
  /** At most this many of the class per node (hostname rules), Infinity if none. */
  readonly perNode: number;
  /** Dense id of the class's request vector (equal requests, equal id). */
  readonly shape: number;
  /** Position in the round's most-valuable-first order. */
  order: number;
  /**
   * fill.ts bookkeeping for the claim being filled (valid while `fillClaim` is its id): the
   * class's pods on it, Infinity once the class is blocked there.
   */
  fillClaim: number;
  fillCount: number;
}

/** A pool's types' usable capacity (by index) and the types by fluid-LP efficiency, best first. */
export interface TypeFacts {
  readonly usables: readonly Vec[];
  readonly byEfficiency: readonly PoolType[];
}

/** A pool's waiting classes with one request vector, most valuable first (fill.ts buckets). */
export interface RequestGroup {
  readonly requests: Vec;
  readonly queues: ClassQueue[];
  /** fill.ts: by target type index, the requests as shares of its allocatable (scaledRequests). */
  readonly scaled: Map<number, Float64Array>;
}

/** The pool's active queues with exhausted ones dropped (they only ever run out). */
export function liveActive(state: PackState, poolOrder: number): readonly ClassQueue[] {
  const list = state.activeByPool[poolOrder] ?? [];
  if (!list.some((q) => remainingOf(q) <= 0)) return list;
  const live = list.filter((q) => remainingOf(q) > 0);
  state.activeByPool[poolOrder] = live;
  return live;
}

export function remainingOf(queue: ClassQueue): number {
  return queue.pods.length - queue.head;
}

/**
 * While a claim of `pool` is filled, its classes in `classes` (the pool's own openers,
 * riders.ts) join only when no other waiting pod fits.
 */
export interface Deferral {
  readonly pool: number;
  readonly classes: ReadonlySet<number>;
}

export interface PackState {
  readonly queues: Map<number, ClassQueue>;
  /** Per pool: the queues of classes it can host, most valuable first (may hold exhausted ones: liveActive). */
  readonly activeByPool: ClassQueue[][];
  /** Per pool: the same queues grouped by request vector, groups in order of their first class. */
  readonly groupsByPool: RequestGroup[][];
  readonly claims: Claim[];
  /** Type rankings per (pool, type bitset), reused while the waiting set is similar. */
  readonly typeChoice: Map<string, { readonly types: readonly PoolType[]; readonly waiting: number }>;
  /** Per class id: hostname groups capping it per node, with the cap. */
  readonly hostCaps: Map<number, readonly { readonly group: number; readonly cap: number }[]>;
  /** Per pool and class: the dominant-share value of one pod (type-choice.ts). */
  /** (by pool order, then shape id: rank asks for every waiting class on every call, so no string keys) */
  readonly shareValues: Map<number, number>[];
  /** Per pool: type facts constant through a solve's packing (type-choice.ts). */
  readonly typeFacts: Map<number, TypeFacts>;
  /** Dense ids of distinct request vectors (fill.ts buckets). */
  readonly shapeIds: Map<string, number>;
  /** Type bitsets as strings, for ranking keys. */
  readonly maskKeys: WeakMap<Uint8Array, string>;
  waiting: number;
  /** Set by the rider seeding (riders.ts) around the claim it opens. */
  deferral: Deferral | undefined;
  /** Whether the LP guide planned any claims in this solve. */
  guided: boolean;
  /** Whether the first round's waiting pods suit the guide (guide.ts guidable). */
  guidable: boolean;
}
