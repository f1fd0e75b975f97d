// The LP guide for new claims (performance.md §4.3 "LP+DotProduct", issue: "an LP-guided
// mix"). The greedy fill packs each node tightly but chooses node *types* one claim at a
// time, and on the AWS catalog a tight fleet of one middling type costs ~9% more than the
// configuration LP's mix (aws-realistic 1k: 143 × t4g.2xlarge at 92–95% use, where the LP
// buys t4g.small/micro for the small pods and c6g.4xlarge + r6g.12xlarge for the rest).
//
// For the pods with no topology rules or only hostname ones (anti-affinity, hostname
// spread: per-node caps, see GuideItem) and no host ports, one column generation over the
// types of every pool (patterns.ts, fast pricing; a pattern is a type of one pool and
// holds only classes that pool can host) finds the mix of node patterns, starting from
// the greedy plan's own nodes (so its LP never costs more than them); sequential rounding
// turns it into whole nodes — taking a pool's nodes only while its limits allow — and
// each node is opened as a claim and filled with exactly its pattern's pods under every
// constraint (canAddToClaim). Whatever a pattern could not take — a zone clash, a pool
// limit, the last 5% (with one pool; with several the LP covers it, see coverTail below)
// — stays waiting for the greedy fill, whose seeds try pools by weight, and which also
// handles every pod with other topology rules (pod affinity, zone spreads outside a zone
// family). Zone-spread owners with their deployment's hostname-rule pods (a zone family)
// are planned here too, their nodes' zones chosen together (zone-guide.ts). solve() keeps the guided
// plan only when it is cheaper than the greedy one, so the guide can only lower the cost.
//
// Rejected (issue 14, finding 3, measured on many-pools, 3,000 pods, five pools, on a
// loaded machine):
// - One generation per pool, each class in the heaviest pool that can host it (the
//   guide's first version): the 200-cpu on-demand pool (weight 80) got every class, its
//   limit stopped rounding after 100 nodes and the spot and arm64 pools were left to the
//   greedy fill: 98.31 $/h. Pools in weight order with the rest spilling on once a
//   pool's limits refuse a node: 97.64. One generation over all pools: 95.53 (92.54 with
//   coverTail), because a class without an arch selector then packs onto the cheaper
//   arm64 nodes, as the greedy fill's top-ups would.
// - The same generation for pods with hostname/zone topology rules, one row per class
//   (each deployment its own), with per-node rules on the patterns (patterns.ts
//   PatternRule): on topology-heavy the rounded patterns lost to the greedy plan (2,000
//   pods: greedy 74.28 $/h, guided 81.06, 327 of 2,000 pods refused by zone skew at fill
//   time across six zones; 300 pods: 8.97 against 9.51) and the second pass cost ~10 s.
//   Hostname-rule classes pooled by shape (GuideItem, h-bound): 69.36 at 2,000 pods; at
//   300–1,000 pods few deployments share a shape and the guided plan loses (9.51 against
//   8.97 at 300), so solve() keeps the greedy one there. Zone-spread pods pooled the same
//   way: 73.52 — every guided claim is pinned to the zone its first pod finds cheapest,
//   so a deployment's zone-spread pods find no claim in a zone where its count is the
//   minimum; they stay with the greedy fill.
// - many-pools (h-bound): a second pass once a limited pool closes (the classes move to
//   the next heaviest open pools) and top-ups (a lighter pool's pattern may hold any pod
//   it admits once it holds one for which that pool is the heaviest, as Karpenter fills
//   in-flight claims of any pool): 101.19 $/h for the second pass, 100.40 with top-ups,
//   against 98.86 for one pass and the greedy fill. The second pass's LP (414 classes × 175 types) stops on the work
//   budget after 11 iterations at 77.2 $/h for pods the greedy fill places for ~76; ten
//   times the budget: 97.50 in 15 s.
import { maskFor } from './classes';
import { addToClaimMutating, canAddToClaim, canOpen, openClaimMutating, type Claim } from './claim';
import { topologyOf, type SolveContext } from './context';
import { add, subtract } from './dims';
import type { LinearSolver } from './linear-program';
import type { PlannedNodeClaim } from './plan';
import { remainingOf, type ClassQueue, type PackState } from './pack-state';
import { PatternGenerator, type RoundLimit } from './patterns';
import { LabelKey } from '../scheduling/labels';
import type { Pool, PoolType } from './pools';
import { assignZones, zoneFamilies, type NodeZonePlan, type ZoneFamily } from './zone-guide';
import { inValues } from '../scheduling/requirement';
import { intersectRequirements } from '../scheduling/requirements';

/** Pricing rounds for the solver (the bound runs to convergence; the guide needs a good mix, fast). */
const maxIterations = 40;
/** Grid × pieces for the exact pricing program per type; larger types are priced greedily. */
const fastBudget = 3_000_000;
const maxRounds = 2_000;
/**
 * The guide runs only while classes × (undominated) types stays under this: the master's
 * rows and each pricing round grow with both (aws-realistic 20k: 387 × ~200; many-pools:
 * ~150 × 255 over its five pools).
 */
const maxWork = 200_000;
/**
 * Pricing work (dynamic-program cells and item steps, patterns.ts) for the column
 * generation and for the rounding, per solve: together about a
 * second on this machine, whatever the size — a deterministic stand-in for a time limit. Measured on aws-realistic with no
 * budget: 1k converges in 5e8 (26.65 $/h), 20k does not in 9e8; with these: 1k 26.84,
 * 5k 143.80, 20k 567.37 $/h, and 20k solves in under 5 s.
 */
const workBudget = 1.8e8;
const roundWork = 0.6e8;
/**
 * Sequential rounding stops with 5% of the pods left to the greedy fill: its tail takes
 * one LP solve per node (aws-realistic 20k: 4.8 s → 2 s for the guide, 565 → 567 $/h).
 */
const leaveToGreedy = 0.05;
/**
 * The same with zone families (zone-guide.ts): their leftovers are the hard pods (an owner
 * needs a zone its family has not used), so the rounding goes further. topology-heavy
 * (2,000 pods): 0.02 → 67.18 $/h, 0.03 → 66.77, 0.04 → 66.98, 0.05 → 66.93, 0.08 → 67.40,
 * 0 → 67.71 (the last nodes of rounding are poorly filled).
 */
const leaveToGreedyWithFamilies = 0.03;
/** Pricing rounds for each residual demand during rounding. */
const iterationsPerRound = 2;
/** The budgets above, for the rider pass (guide-riders.ts), which runs under the same ones. */
export const guideBudgets = { maxIterations, fastBudget, maxRounds, maxWork, workBudget, roundWork, iterationsPerRound } as const;
/**
 * A block whose pools' limits leave room for less than this share of its demand generates
 * with this share of the work budget: its LP prices every pod on those pools, but rounding
 * stops at the limit after a few nodes, and which it takes hardly depends on how far the
 * LP got (many-pools' on-demand block, 200 cpu for 4.5% of its demand: the same 100 nodes
 * after 1 iteration as after 15; the rider pass spends the time better). With more room
 * the LP's mix matters (many-pools' first 300–1,000 pods, 12–36%: a cut budget changed the
 * on-demand nodes and cost up to 4% more), so the budget stays whole.
 */
const tightLimit = 0.1;

/**
 * 'free': no topology rule of its own; 'hostname': only hostname anti-affinity and
 * hostname spread (per-node caps, see items below); undefined: not for the guide (zone or
 * other keys, pod affinity, host ports), left to the greedy fill.
 */
function guideKind(queue: ClassQueue, context: SolveContext): 'free' | 'hostname' | undefined {
  if (queue.podClass.hostPorts.length > 0 || remainingOf(queue) <= 0) return undefined;
  const own = topologyOf(context, queue.podClass).own;
  if (own.length === 0) return 'free';
  return own.every(({ group }) => group.key === LabelKey.hostname && group.kind !== 'affinity') ? 'hostname' : undefined;
}

/** Whether the guide may plan the class (no topology rules, or hostname ones only; no host ports). */
export function free(queue: ClassQueue, context: SolveContext): boolean {
  return guideKind(queue, context) !== undefined;
}

/**
 * One row of the guide's LP: classes of one shape planned together. A free class is its
 * own item. Classes with hostname rules (each deployment its own class: the rules select
 * its pods) are pooled by shape and cap: a pattern says "c pods of this shape", and the
 * fill takes them from whichever of the item's classes the node's rules still admit
 * (canAddToClaim), so a node holds one anti-affinity pod of each of many deployments. The
 * item's per-node cap is the sum of its classes' caps (PatternRule), binding only when few
 * deployments share a shape. Planning each class as its own row (h-cost's try) needed
 * one row per deployment and lost to the greedy plan (guide.ts header).
 */
interface GuideItem {
  readonly queues: ClassQueue[];
  readonly cap: number;
}

function guideItems(queues: readonly ClassQueue[], context: SolveContext, familyQueues: ReadonlySet<ClassQueue>): GuideItem[] {
  const items: GuideItem[] = [];
  const pooled = new Map<number, ClassQueue[]>();
  for (const queue of queues) {
    if (guideKind(queue, context) === 'free') {
      items.push({ queues: [queue], cap: Infinity });
      continue;
    }
    let entry = pooled.get(queue.podClass.shapeId);
    if (entry === undefined) {
      entry = [];
      pooled.set(queue.podClass.shapeId, entry);
      items.push({ queues: entry, cap: Infinity });
    }
    entry.push(queue);
  }
  // In a pooled item the classes with the larger per-node cap go first: a node's pattern
  // slots are then filled with two spread pods of one deployment before an anti-affinity
  // pod of it keeps the rest of that deployment away.
  return items.map((item) => (Number.isFinite(item.cap) || item.queues.length === 1 && guideKind(item.queues[0] as ClassQueue, context) === 'free' ? item
    : { queues: [...item.queues].sort((a, b) => b.perNode - a.perNode || a.order - b.order), cap: pooledCap(item.queues, context, familyQueues) }));
}

/**
 * Pods of these classes one node can hold under their hostname rules alone: classes that
 * share a hostname group (a deployment's anti-affinity and spread pods) count once, at the
 * largest of their caps (an anti-affinity pod keeps the others of its selector away, a
 * spread pod allows maxSkew), and separate deployments add up.
 */
function pooledCap(queues: readonly ClassQueue[], context: SolveContext, familyQueues: ReadonlySet<ClassQueue>): number {
  const parent = queues.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] ?? i;
    return i;
  };
  const byGroup = new Map<number, number>();
  queues.forEach((queue, i) => {
    const topology = topologyOf(context, queue.podClass);
    for (const group of [...topology.own.map((o) => o.group), ...topology.matching]) {
      if (group.key !== LabelKey.hostname) continue;
      const other = byGroup.get(group.id);
      if (other === undefined) byGroup.set(group.id, i);
      else parent[find(i)] = find(other);
    }
  });
  const caps = new Map<number, number>();
  queues.forEach((queue, i) => {
    const root = find(i);
    // A zone family (zone-guide.ts) counts one pod per node: its owners are alone of it on
    // their node, and two of its members share one only as a hostname-spread pair, which
    // the LP cannot tell from an owner and a member. topology-heavy (2,000 pods, with the
    // other settings as committed): one per node 66.77 $/h (LP 66.31), two for a family
    // with spread members 67.50 (LP 65.12: its nodes held slots no pod of the family could
    // use, e.g. five two-slot nodes for one deployment of ten).
    caps.set(root, Math.max(caps.get(root) ?? 0, Math.min(familyQueues.has(queue) ? 1 : queue.perNode, remainingOf(queue))));
  });
  let cap = 0;
  for (const value of caps.values()) cap += value;
  return cap;
}

/**
 * The guide plans only pods without topology rules or with hostname ones; when they are under half of those
 * waiting, the rest's claims (greedy) hold most of the fleet and the free pods are better
 * used topping those up (karpenter-mix: 20% free pods, guided plan no cheaper, 3× slower).
 */
const minFreeShare = 0.5;

export interface Guide {
  readonly solver: LinearSolver;
  /** A plan for the same input (the greedy one): its nodes seed the column generation. */
  readonly hints: readonly PlannedNodeClaim[];
}

/** Whether the waiting pods are for the guide (enough of them free of topology rules). */
export function guidable(state: PackState, context: SolveContext): boolean {
  let freePods = 0;
  for (const queue of state.queues.values()) if (free(queue, context)) freePods += remainingOf(queue);
  return freePods > 0 && freePods >= minFreeShare * state.waiting;
}

/**
 * Opens and fills the guided claims and marks their pods placed; false when it did not
 * run. The caller has checked `guidable`.
 */
export function guideNewClaimsMutating(state: PackState, context: SolveContext, guide: Guide, placed: Set<string>): boolean {
  // Classes in the order the pools list them (most valuable first), each once.
  const live = [...new Set(context.pools.flatMap((pool) => state.activeByPool[pool.order] ?? []))];
  const planned = live.filter((queue) => free(queue, context));
  // Zone-spread owners join the guide with their families (zone-guide.ts).
  const hostnameQueues = new Set(planned.filter((queue) => guideKind(queue, context) === 'hostname'));
  const families = zoneFamilies([...state.queues.values()].filter((queue) => remainingOf(queue) > 0), hostnameQueues, context);
  const owners = new Set(families.flatMap((family) => family.owners));
  const all = live.filter((queue) => owners.has(queue) || free(queue, context));
  let ran = false;
  for (const block of independentBlocks(all, context)) {
    const inBlock = new Set(block);
    const own = families.filter((family) => [...family.owners, ...family.members].every((queue) => inBlock.has(queue)));
    const ownOwners = new Set(own.flatMap((family) => family.owners));
    // (an owner whose family the pools split stays with the greedy fill)
    if (guideBlockMutating(state, context, guide, placed, block.filter((queue) => !owners.has(queue) || ownOwners.has(queue)), own)) ran = true;
  }
  return ran;
}

/**
 * The classes split where no pool may take classes of two parts (each class on its heaviest
 * open pools, as the masks below): their LPs are independent, and one generation each
 * converges further within the same per-generation budget.
 */
function independentBlocks(queues: readonly ClassQueue[], context: SolveContext): ClassQueue[][] {
  const openPools = new Set(context.pools.filter((pool) => pool.types.some((type) => type.offerings.length > 0 && canOpen(pool, type))).map((pool) => pool.order));
  const parent = context.pools.map((pool) => pool.order);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] ?? i;
    return i;
  };
  const ownPools = queues.map((queue) => {
    const admitting = context.pools.filter((pool) => openPools.has(pool.order) && maskFor(queue.podClass, pool) !== undefined);
    const heaviest = Math.max(...admitting.map((pool) => pool.weight));
    return admitting.filter((pool) => pool.weight === heaviest).map((pool) => pool.order);
  });
  for (const pools of ownPools) for (const order of pools.slice(1)) parent[find(order)] = find(pools[0] ?? order);
  // A class no open pool admits has no column in any block: it stays with the first block
  // (as it stayed in the one generation before), which keeps one pool's guide unchanged.
  const firstOwn = ownPools.find((pools) => pools.length > 0)?.[0];
  const blocks = new Map<number, ClassQueue[]>();
  queues.forEach((queue, i) => {
    const own = ownPools[i]?.[0] ?? firstOwn;
    const root = own === undefined ? -1 : find(own);
    const block = blocks.get(root);
    if (block === undefined) blocks.set(root, [queue]);
    else block.push(queue);
  });
  return [...blocks.values()];
}

function guideBlockMutating(state: PackState, context: SolveContext, guide: Guide, placed: Set<string>, queues: readonly ClassQueue[], families: readonly ZoneFamily[]): boolean {
  const opened: Claim[] = [];
  const familyQueues = new Set(families.flatMap((family) => [...family.owners, ...family.members]));
  const items = guideItems(queues, context, familyQueues);
  const types: { pool: Pool; type: PoolType }[] = [];
  for (const pool of context.pools) {
    for (const type of pool.types) if (type.offerings.length > 0 && canOpen(pool, type)) types.push({ pool, type });
  }
  if (queues.length === 0 || types.length === 0) return false;
  // Karpenter's weights: a class goes to the heaviest pools that can host it (and still open
  // a node); pools of equal weight compete on price. Mixing weights by price sent a heavier
  // pool's pods to a cheaper, lighter one — users weight pools to say which to use first.
  const openPools = new Set(types.map((t) => t.pool.order));
  const masks = items.map(({ queues: [first] }) => {
    const all = context.pools.map((pool) => (openPools.has(pool.order) && first !== undefined ? maskFor(first.podClass, pool) : undefined));
    const heaviest = Math.max(...context.pools.filter((pool) => all[pool.order] !== undefined).map((pool) => pool.weight));
    return context.pools.map((pool) => (pool.weight === heaviest ? all[pool.order] : undefined));
  });
  const blockPools = context.pools.filter((pool) => masks.some((mask) => mask[pool.order] !== undefined));
  const budgetShare = limitShare(blockPools, items) < tightLimit ? tightLimit : 1;
  const generator = new PatternGenerator(
    {
      items: items.map((item) => ({ requests: item.queues[0]?.podClass.requests ?? new Float64Array(0), count: item.queues.reduce((sum, queue) => sum + remainingOf(queue), 0) })),
      types: types.map(({ type }) => ({ capacity: subtract(type.allocatable, type.daemonOverhead), price: type.offerings[0]?.price ?? Infinity })),
      allowed: (k, t) => {
        const entry = types[t];
        return entry !== undefined && masks[k]?.[entry.pool.order]?.[entry.type.index] === 1;
      },
      rules: items.flatMap((item, k) => (Number.isFinite(item.cap) ? [{ owners: [k], matchers: [k], cap: item.cap }] : [])),
    },
    guide.solver,
    // With several pools the rounding's tail is covered by the LP's patterns rounded up
    // (patterns.ts coverTail), not left to the greedy fill, whose seeds try pools by weight
    // and so open the heaviest pool's nodes for it whatever they cost (many-pools: the tail
    // went to the on-demand pool; 95.53 → 92.54 $/h with the cover). With one pool the
    // greedy tail packs tighter (aws-realistic 1k 26.84 against 26.98, 5k 143.80 against 146.39).
    {
      mode: 'fast', maxIterations, dpBudget: 0, fastBudget, searchNodes: 0, workBudget: workBudget * budgetShare,
      leaveToGreedy: families.length > 0 ? leaveToGreedyWithFamilies : leaveToGreedy, coverTail: context.pools.length > 1,
    },
  );
  try {
    if (items.length * generator.typeCount > maxWork) return false;
    // The greedy plan's nodes of these pods start the master: its LP is never above them.
    const itemOf = new Map<string, number>();
    items.forEach((item, k) => { for (const queue of item.queues) for (let i = queue.head; i < queue.pods.length; i++) itemOf.set(queue.pods[i] ?? '', k); });
    const typeOf = new Map(types.map(({ pool, type }, t) => [`${pool.name}/${type.name}`, t]));
    for (const claim of guide.hints) {
      const t = typeOf.get(`${claim.nodePool}/${claim.instanceType}`);
      if (t === undefined || !claim.pods.every((pod) => itemOf.has(pod))) continue;
      const counts = new Int32Array(items.length);
      for (const pod of claim.pods) counts[itemOf.get(pod) ?? 0] = (counts[itemOf.get(pod) ?? 0] ?? 0) + 1;
      generator.addKnownPattern(t, counts);
    }
    generator.generate();
    const limited = context.pools.some((pool) => pool.limited.length > 0 || Number.isFinite(pool.nodesHeadroom));
    const { nodes } = generator.round(maxRounds, iterationsPerRound, roundWork, limited ? poolLimits(types, context.pools) : undefined);
    const itemOfFamily = (family: ZoneFamily): number => items.findIndex((item) => family.owners[0] !== undefined && item.queues.includes(family.owners[0]));
    const zonePlans: readonly (NodeZonePlan | undefined)[] = families.length === 0 ? [] : assignZones(nodes, families, itemOfFamily, (t) => types[t]?.type);
    nodes.forEach((node, n) => {
      const entry = types[node.type];
      if (entry === undefined || !canOpen(entry.pool, entry.type)) return;
      const { pool, type } = entry;
      const claim = openClaimMutating(state.claims.length, pool, type, context);
      const zonePlan = zonePlans[n];
      if (zonePlan?.zone !== undefined) {
        // The zone the assignment chose: every family pod on the node counts there.
        claim.zone = zonePlan.zone;
        claim.requirements = intersectRequirements(claim.requirements, { [LabelKey.zone]: inValues(LabelKey.zone, [zonePlan.zone]) });
      }
      for (const { queue, count } of zonePlan?.pods ?? []) {
        for (let i = 0; i < count; i++) if (!joinNextMutating(claim, queue, state, context, placed)) break;
      }
      node.counts.forEach((total, k) => {
        const item = items[k];
        if (item === undefined) return;
        const count = total - (zonePlan?.used[k] ?? 0);
        // Each pod from the first of the item's classes (most valuable first) the node still admits.
        let from = 0;
        for (let i = 0; i < count; i++) {
          let joined = false;
          for (; from < item.queues.length && !joined; from++) {
            const queue = item.queues[from];
            // (a family's pods go only where assignZones put them)
            if (queue === undefined || familyQueues.has(queue) || !joinNextMutating(claim, queue, state, context, placed)) continue;
            joined = true;
            // (the same class may take the next pod too, if its cap allows)
            from -= 1;
          }
          if (!joined) break;
        }
      });
      if (claim.pods.length > 0) {
        state.claims.push(claim);
        opened.push(claim);
      } else {
        // Nothing joined: give the pool its headroom back (the id, a hostname domain
        // nothing was counted in, is free for the next claim).
        pool.headroom.set(add(pool.headroom, claim.reservation));
        pool.nodesHeadroom += 1;
      }
    });
    // With families, the slots the assignment left empty and the rounding's tail: each pod
    // left of the items tries the guided claims first (the greedy fill only opens new ones).
    if (families.length > 0) topUpMutating(opened, items.flatMap((item) => item.queues), state, context, placed);
  } finally {
    generator.dispose();
  }
  return true;
}

/** The queue's next pod onto the claim if the claim admits it; whether it joined. */
export function joinNextMutating(claim: Claim, queue: ClassQueue, state: PackState, context: SolveContext, placed: Set<string>): boolean {
  const pod = queue.pods[queue.head];
  if (pod === undefined) return false;
  const proposal = canAddToClaim(claim, queue.podClass, context);
  if (!proposal.ok) return false;
  queue.head += 1;
  state.waiting -= 1;
  addToClaimMutating(claim, queue.podClass, proposal, pod, context);
  placed.add(pod);
  return true;
}

/** Each pod left in the queues onto the first claim that admits it (claims in order). */
function topUpMutating(claims: readonly Claim[], queues: readonly ClassQueue[], state: PackState, context: SolveContext, placed: Set<string>): void {
  for (const queue of queues) {
    for (const claim of claims) {
      while (joinNextMutating(claim, queue, state, context, placed));
      if (queue.head >= queue.pods.length) break;
    }
  }
}

/**
 * The share of the items' demand the pools' limits leave room for, on the resources every
 * one of them limits (at most 1; 1 when some pool is unlimited: no limit stops rounding).
 */
function limitShare(pools: readonly Pool[], items: readonly GuideItem[]): number {
  if (pools.length === 0) return 1;
  let share = 1;
  for (const r of pools[0]?.limited ?? []) {
    if (!pools.every((pool) => pool.limited.includes(r))) continue;
    let demand = 0;
    for (const item of items) for (const queue of item.queues) demand += remainingOf(queue) * (queue.podClass.requests[r] ?? 0);
    let room = 0;
    for (const pool of pools) room += Math.max(0, pool.headroom[r] ?? 0);
    if (demand > 0) share = Math.min(share, room / demand);
  }
  return share;
}

/** Pool limits as rounding sees them: per pool a copy of the headroom, charged per node taken. */
function poolLimits(types: readonly { pool: Pool; type: PoolType }[], pools: readonly Pool[]): RoundLimit {
  const left = new Map(pools.map((pool) => [pool.order, { room: Float64Array.from(pool.headroom), nodes: pool.nodesHeadroom }]));
  return {
    fits: (t) => {
      const entry = types[t];
      const room = entry === undefined ? undefined : left.get(entry.pool.order);
      return entry !== undefined && room !== undefined && room.nodes >= 1 && entry.pool.limited.every((r) => (entry.type.capacity[r] ?? 0) <= (room.room[r] ?? 0));
    },
    take: (t) => {
      const entry = types[t];
      const room = entry === undefined ? undefined : left.get(entry.pool.order);
      if (entry === undefined || room === undefined) return;
      room.nodes -= 1;
      for (const r of entry.pool.limited) room.room[r] = (room.room[r] ?? 0) - (entry.type.capacity[r] ?? 0);
    },
  };
}
