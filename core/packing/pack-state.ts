// The state of the new-claim phase of one solve round: the waiting pods by class, and
// caches that live as long as the round (type rankings, hostname caps, mask keys).
import type { Claim } from './claim';
import type { PodClass } from './classes';
import type { PoolType } from './pools';

export interface ClassQueue {
  readonly podClass: PodClass;
  readonly pods: string[];
  head: number;
  /** At most this many of the class per node (hostname rules), Infinity if none. */
  readonly perNode: number;
  /** Dense id of the class's request vector (equal requests, equal id). */
  readonly shape: number;
}

export function remainingOf(queue: ClassQueue): number {
  return queue.pods.length - queue.head;
}

export interface PackState {
  readonly queues: Map<number, ClassQueue>;
  /** Per pool: the queues of classes it can host, most valuable first. */
  readonly activeByPool: ClassQueue[][];
  readonly claims: Claim[];
  /** Type rankings per (pool, type bitset), reused while the waiting set is similar. */
  readonly typeChoice: Map<string, { readonly types: readonly PoolType[]; readonly waiting: number }>;
  /** Per class id: hostname groups capping it per node, with the cap. */
  readonly hostCaps: Map<number, readonly { readonly group: number; readonly cap: number }[]>;
  /** Per pool and class: the dominant-share value of one pod (type-choice.ts). */
  readonly shareValues: Map<string, number>;
  /** Dense ids of distinct request vectors (fill.ts buckets). */
  readonly shapeIds: Map<string, number>;
  /** Type bitsets as strings, for ranking keys. */
  readonly maskKeys: WeakMap<Uint8Array, string>;
  waiting: number;
  /** Whether the LP guide planned any claims in this solve. */
  guided: boolean;
  /** Whether the first round's waiting pods suit the guide (guide.ts guidable). */
  guidable: boolean;
}
