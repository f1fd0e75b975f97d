// The LP guide for new claims (performance.md §4.3 "LP+DotProduct", issue: "an LP-guided
// mix"). The greedy fill packs each node tightly but chooses node *types* one claim at a
// time, and on the AWS catalog a tight fleet of one middling type costs ~9% more than the
// configuration LP's mix (aws-realistic 1k: 143 × t4g.2xlarge at 92–95% use, where the LP
// buys t4g.small/micro for the small pods and c6g.4xlarge + r6g.12xlarge for the rest).
//
// For the pods with no topology rules and no host ports, per pool (each class in the
// heaviest pool that can take it, as the greedy fill would), column generation
// (patterns.ts, fast pricing) finds the mix of node patterns, sequential rounding turns it
// into whole nodes, and each node is opened as a claim and filled with exactly its
// pattern's pods under every constraint (canAddToClaim). Whatever a pattern could not
// take — a zone clash, a pool limit — stays waiting for the greedy fill, which also
// handles every pod with topology rules. solve() keeps the guided plan only when it is
// cheaper than the unguided one, so the guide can only lower the cost.
import { maskFor } from './classes';
import { addToClaimMutating, canAddToClaim, canOpen, openClaimMutating } from './claim';
import { topologyOf, type SolveContext } from './context';
import { add, subtract } from './dims';
import type { LinearSolver } from './linear-program';
import { remainingOf, type ClassQueue, type PackState } from './pack-state';
import { PatternGenerator } from './patterns';
import type { Pool, PoolType } from './pools';

/** Pricing rounds for the solver (the bound runs to convergence; the guide needs a good mix, fast). */
const maxIterations = 40;
/** Grid × pieces for the exact pricing program per type; larger types are priced greedily. */
const dpBudget = 3_000_000;
const maxRounds = 2_000;
/**
 * The guide runs for a pool only while classes × types stays under this. Its pricing
 * work grows with both, and measured on aws-realistic: 63 × 176 (1k pods) takes 2.5 s,
 * 189 × 176 (5k) 5.8 s, while 387 × ~200 (20k) took 13 s and 40 pricing rounds did not
 * get its LP below the greedy plan — so at that size the greedy plan stands alone.
 */
const maxWork = 50_000;
/** Pricing rounds for each residual demand during rounding. */
const iterationsPerRound = 2;

function free(queue: ClassQueue, context: SolveContext): boolean {
  return queue.podClass.hostPorts.length === 0 && topologyOf(context, queue.podClass).own.length === 0 && remainingOf(queue) > 0;
}

/** Opens and fills the guided claims; marks their pods placed. */
export function guideNewClaimsMutating(state: PackState, context: SolveContext, solver: LinearSolver, placed: Set<string>): void {
  const taken = new Set<number>();
  for (const pool of context.pools) {
    const queues = (state.activeByPool[pool.order] ?? []).filter((queue) => {
      if (taken.has(queue.podClass.id) || !free(queue, context)) return false;
      // The heaviest pool that can host the class at all gets it (pools are in weight order).
      const first = context.pools.find((p) => queue.podClass.feasibility[p.order]?.ok === true);
      return first === pool;
    });
    queues.forEach((queue) => taken.add(queue.podClass.id));
    if (queues.length === 0) continue;
    guidePool(pool, queues, state, context, solver, placed);
  }
}

function guidePool(pool: Pool, queues: readonly ClassQueue[], state: PackState, context: SolveContext, solver: LinearSolver, placed: Set<string>): void {
  const types: PoolType[] = pool.types.filter((type) => type.offerings.length > 0 && canOpen(pool, type));
  if (types.length === 0 || queues.length * types.length > maxWork) return;
  const masks = queues.map((queue) => maskFor(queue.podClass, pool));
  const generator = new PatternGenerator(
    {
      items: queues.map((queue) => ({ requests: queue.podClass.requests, count: remainingOf(queue) })),
      types: types.map((type) => ({ capacity: subtract(type.allocatable, type.daemonOverhead), price: type.offerings[0]?.price ?? Infinity })),
      allowed: (k, t) => masks[k]?.[types[t]?.index ?? -1] === 1,
    },
    solver,
    { mode: 'fast', maxIterations, dpBudget, searchNodes: 0 },
  );
  try {
    generator.generate();
    const { nodes } = generator.round(maxRounds, iterationsPerRound);
    for (const node of nodes) {
      const type = types[node.type];
      if (type === undefined || !canOpen(pool, type)) continue;
      const claim = openClaimMutating(state.claims.length, pool, type, context);
      node.counts.forEach((count, k) => {
        const queue = queues[k];
        if (queue === undefined) return;
        for (let i = 0; i < count && queue.head < queue.pods.length; i++) {
          const proposal = canAddToClaim(claim, queue.podClass, context);
          const pod = queue.pods[queue.head];
          if (!proposal.ok || pod === undefined) break;
          queue.head += 1;
          state.waiting -= 1;
          addToClaimMutating(claim, queue.podClass, proposal, pod, context);
          placed.add(pod);
        }
      });
      if (claim.pods.length > 0) state.claims.push(claim);
      else {
        // Nothing joined: give the pool its headroom back.
        pool.headroom.set(add(pool.headroom, claim.reservation));
        pool.nodesHeadroom += 1;
      }
    }
  } finally {
    generator.dispose();
  }
}
