// Zone-spread pods in the LP guide (issue 14, finding 3: topology-heavy).
//
// A pod owning a DoNotSchedule zone spread (an *owner*) and the pods its selector matches
// that carry hostname rules only (*members*) form a *family*. The guide plans a family's
// pods with its shape's other hostname-rule pods (one LP row per shape, guide.ts), and this
// module turns the rounded nodes into a plan kube-scheduler can realise in any arrival
// order, by one invariant per family: every owner is the family's only pod in its zone, and
// no member shares a zone with an owner. An owner then always finds its zone's count at 0
// (within any maxSkew ≥ 1), and a member never joins a zone holding an owner (the spread
// guard, topology.ts, has nothing to check) — whatever the order the pods are bound in.
// Per node, a family holds one pod, or up to its hostname-spread cap of one member class
// (hostname rules, checked for real by canAddToClaim when the claims are filled).
//
// The zones are chosen for all the rounded nodes at once (assignZones): a balanced start,
// then a local search moving one node to another zone while that places more of the
// families' pods, each shape's slots dealt to its families by a greedy that picks, per
// family, the zones for its members (largest room first) and distinct other zones for its
// owners. Zone prices are taken as they are: a node may only go to the zones offering its
// type at the type's cheapest price, so the choice never costs anything.
// The pods the assignment leaves out (and the rounding's tail) then try the guided claims
// (guide.ts topUpMutating) before the greedy fill opens new nodes for them.
// Measured and rejected before (docs/NOTES.md, "Issue 14 finding 3, topology-heavy"):
// choosing each node's zone by itself as it was filled left 13–19 % of the planned pods
// to the greedy fill. Rejected here (topology-heavy, 2,000 pods): swapping two nodes'
// zones in the search as well (67.99 against 67.15 at the time, and 3× the search time);
// best-fit top-up, largest pods first (67.13 against 67.08), owners first (67.20).
import type { SolveContext } from './context';
import { topologyOf } from './context';
import { remainingOf, type ClassQueue } from './pack-state';
import type { Pattern } from './patterns';
import type { PoolType } from './pools';
import { LabelKey } from '../scheduling/labels';
import type { TopologyGroup } from './topology';

export interface ZoneFamily {
  /** The zone spread its owners carry. */
  readonly group: TopologyGroup;
  readonly owners: readonly ClassQueue[];
  /** Member classes, the ones allowing the most pods per node first. */
  readonly members: readonly ClassQueue[];
}

/**
 * The families the guide can plan: owners of exactly one DoNotSchedule zone spread whose
 * other rules are hostname ones, with members among `hostnameQueues` (the guide's
 * hostname-rule classes). A family qualifies only when every waiting pod its selector
 * matches is its owner or member, all of one shape, and none of them matches another
 * non-hostname group: then nothing outside the plan moves its zone counts.
 */
export function zoneFamilies(waiting: readonly ClassQueue[], hostnameQueues: ReadonlySet<ClassQueue>, context: SolveContext): ZoneFamily[] {
  const zoneGroupsOf = (queue: ClassQueue): TopologyGroup[] => topologyOf(context, queue.podClass).matching.filter((g) => g.key !== LabelKey.hostname);
  const ownerGroup = (queue: ClassQueue): TopologyGroup | undefined => {
    if (queue.podClass.hostPorts.length > 0) return undefined;
    const own = topologyOf(context, queue.podClass).own;
    const others = own.filter(({ group }) => group.key !== LabelKey.hostname);
    if (others.length !== 1 || own.some(({ group }) => group.kind === 'affinity')) return undefined;
    const only = others[0];
    if (only === undefined || only.group.kind !== 'spread' || only.group.key !== LabelKey.zone || !only.owns) return undefined;
    return only.group;
  };
  const byGroup = new Map<TopologyGroup, { owners: ClassQueue[]; members: ClassQueue[]; broken: boolean }>();
  const entry = (group: TopologyGroup): { owners: ClassQueue[]; members: ClassQueue[]; broken: boolean } => {
    let found = byGroup.get(group);
    if (found === undefined) {
      found = { owners: [], members: [], broken: false };
      byGroup.set(group, found);
    }
    return found;
  };
  for (const queue of waiting) {
    const group = ownerGroup(queue);
    if (group !== undefined) entry(group).owners.push(queue);
  }
  for (const queue of waiting) {
    const owned = ownerGroup(queue);
    const groups = zoneGroupsOf(queue);
    for (const group of groups) {
      const found = byGroup.get(group);
      if (found === undefined) continue;
      // Owners may match their own selector (they count in it); anything else matching it
      // must be a hostname-rule member matching this group alone.
      if (owned === group) {
        if (groups.length > 1) found.broken = true;
        continue;
      }
      if (owned !== undefined || !hostnameQueues.has(queue) || groups.length > 1) found.broken = true;
      else found.members.push(queue);
    }
  }
  const families: ZoneFamily[] = [];
  for (const [group, found] of byGroup) {
    const all = [...found.owners, ...found.members];
    const shape = all[0]?.podClass.shapeId;
    if (found.broken || found.owners.length === 0 || all.some((queue) => queue.podClass.shapeId !== shape || remainingOf(queue) <= 0)) continue;
    const members = [...found.members].sort((a, b) => b.perNode - a.perNode || a.order - b.order);
    families.push({ group, owners: [...found.owners].sort((a, b) => a.order - b.order), members });
  }
  return families.sort((a, b) => a.group.id - b.group.id);
}

/** What assignZones decided for one rounded node. */
export interface NodeZonePlan {
  /** The node's zone, when it holds a family's pods; undefined: left to the fill. */
  readonly zone: string | undefined;
  /** The family pods planned on it, class by class. */
  readonly pods: readonly { readonly queue: ClassQueue; readonly count: number }[];
  /** Per item, the slots the families' pods took (the rest are for the item's other classes). */
  readonly used: Int32Array;
}

/** One family as the assignment sees it. */
interface FamilyDemand {
  readonly family: ZoneFamily;
  readonly item: number;
  readonly owners: number;
  /** Members that may share a node with another pod of theirs (hostname spread), and the cap. */
  readonly pairable: number;
  readonly pairCap: number;
  readonly pairQueues: readonly ClassQueue[];
  /** Members alone on their node (anti-affinity, or a cap of 1). */
  readonly singles: number;
  readonly singleQueues: readonly ClassQueue[];
  /** Zones an owner may not use (the family has pods there already), zones a member may not (an owner is there). */
  readonly noOwner: ReadonlySet<string>;
  readonly noMember: ReadonlySet<string>;
}

/**
 * An owner counts this many pods when the assignment weighs its choices: a member left
 * over finds a place on the guided claims or a new node in its family's member zones, an
 * owner needs a zone its family has not used. topology-heavy (2,000 pods, with guide.ts's
 * settings as committed): 1.5 → 66.77 $/h, 2 → 67.02; with the rounding leaving 5 %: 1.5 →
 * 66.93, 2 → 67.08, 2.5 → 67.04, 3 → 67.33 (and before the one-per-node cap, guide.ts: 1 →
 * 67.79 with 85 owners left over, 2 → 67.15 with 23).
 */
const ownerWeight = 1.5;
/** Local-search passes over the nodes; each pass stops early once nothing moves. */
const maxPasses = 12;
/** Evaluation steps (slot visits) for the whole search: a deterministic stand-in for a time limit. */
const searchWork = 4e7;

/**
 * Zones for the rounded nodes and the families' pods for their slots. `itemOf` gives each
 * family's item (LP row); `types` each node's PoolType by pattern type index.
 */
export function assignZones(nodes: readonly Pattern[], families: readonly ZoneFamily[], itemOf: (family: ZoneFamily) => number, typeOf: (type: number) => PoolType | undefined): NodeZonePlan[] {
  const K = nodes[0]?.counts.length ?? 0;
  const demands = families.map((family) => demandOf(family, itemOf(family))).filter((d) => d.item >= 0 && d.item < K);
  const byItem = new Map<number, FamilyDemand[]>();
  for (const demand of demands) {
    const list = byItem.get(demand.item);
    if (list === undefined) byItem.set(demand.item, [demand]);
    else list.push(demand);
  }
  // Hardest families first: most pods, then the group's id (deterministic).
  for (const list of byItem.values()) list.sort((a, b) => (b.owners + b.pairable + b.singles) - (a.owners + a.pairable + a.singles) || a.family.group.id - b.family.group.id);
  const items = [...byItem.keys()].sort((a, b) => a - b);

  // Nodes holding a family item, their zone options (the type's cheapest offerings' zones).
  const options: string[][] = nodes.map((node) => {
    if (!items.some((k) => (node.counts[k] ?? 0) > 0)) return [];
    const type = typeOf(node.type);
    const cheapest = type?.offerings[0]?.price ?? Infinity;
    return [...new Set((type?.offerings ?? []).filter((o) => o.price <= cheapest * (1 + 1e-9)).map((o) => o.zone))].sort();
  });
  const zones = [...new Set(options.flat())].sort();
  const zoneIndex = new Map(zones.map((z, i) => [z, i]));
  const Z = zones.length;
  const nodesOfItem = new Map(items.map((k) => [k, nodes.map((_, n) => n).filter((n) => (nodes[n]?.counts[k] ?? 0) > 0 && (options[n]?.length ?? 0) > 0)]));

  let work = 0;
  const zoneOf = new Int32Array(nodes.length).fill(-1);
  const evaluate = (k: number, record?: (n: number, queue: ClassQueue, count: number) => void): number => {
    const list = byItem.get(k) ?? [];
    const members = nodesOfItem.get(k) ?? [];
    work += members.length * (list.length + 1);
    return dealItem(list, members, (n) => nodes[n]?.counts[k] ?? 0, (n) => zoneOf[n] ?? -1, zones, record);
  };
  // The start, item by item (fewest families first: one family's layout is the most
  // particular — its members together, one slot in each of its owners' zones): each node of
  // the item not yet given a zone takes the one where the item places the most pods, ties
  // to the zone holding the fewest family slots so far.
  const zoneLoad = new Float64Array(Z);
  const familySlots = (n: number): number => items.reduce((sum, k) => sum + (nodes[n]?.counts[k] ?? 0), 0);
  const startItems = [...items].sort((a, b) => (byItem.get(a)?.length ?? 0) - (byItem.get(b)?.length ?? 0) || a - b);
  for (const k of startItems) {
    const open = (nodesOfItem.get(k) ?? []).filter((n) => zoneOf[n] === -1).sort((a, b) => (nodes[b]?.counts[k] ?? 0) - (nodes[a]?.counts[k] ?? 0) || a - b);
    for (const n of open) {
      let best = -1;
      let bestScore = -1;
      for (const zone of options[n] ?? []) {
        const z = zoneIndex.get(zone) ?? -1;
        zoneOf[n] = z;
        const score = evaluate(k);
        if (score > bestScore || (score === bestScore && (zoneLoad[z] ?? 0) < (zoneLoad[best] ?? 0))) { bestScore = score; best = z; }
      }
      zoneOf[n] = best;
      zoneLoad[best] = (zoneLoad[best] ?? 0) + familySlots(n);
    }
  }
  const startOrder = nodes.map((_, n) => n).filter((n) => (zoneOf[n] ?? -1) >= 0);
  const placed = new Map(items.map((k) => [k, evaluate(k)]));
  const itemsOf = nodes.map((node) => items.filter((k) => (node.counts[k] ?? 0) > 0));

  for (let pass = 0; pass < maxPasses && work < searchWork; pass++) {
    let moved = false;
    for (const n of startOrder) {
      if (work >= searchWork) break;
      const here = zoneOf[n] ?? -1;
      const touched = itemsOf[n] ?? [];
      const before = touched.reduce((sum, k) => sum + (placed.get(k) ?? 0), 0);
      let bestZone = here;
      let bestGain = 0;
      let bestValues: number[] | undefined;
      for (const zone of options[n] ?? []) {
        const z = zoneIndex.get(zone) ?? -1;
        if (z === here) continue;
        zoneOf[n] = z;
        const values = touched.map((k) => evaluate(k));
        const gain = values.reduce((sum, v) => sum + v, 0) - before;
        if (gain > bestGain) { bestGain = gain; bestZone = z; bestValues = values; }
      }
      zoneOf[n] = bestZone;
      if (bestValues !== undefined) {
        touched.forEach((k, i) => placed.set(k, bestValues?.[i] ?? 0));
        moved = true;
      }
    }
    if (!moved) break;
  }

  const plans = nodes.map((node, n) => ({ zone: zones[zoneOf[n] ?? -1], pods: [] as { queue: ClassQueue; count: number }[], used: new Int32Array(node.counts.length) }));
  for (const k of items) {
    evaluate(k, (n, queue, count) => {
      const plan = plans[n];
      if (plan === undefined) return;
      const same = plan.pods.find((p) => p.queue === queue);
      if (same === undefined) plan.pods.push({ queue, count });
      else same.count += count;
      plan.used[k] = (plan.used[k] ?? 0) + count;
    });
  }
  return plans;
}

function demandOf(family: ZoneFamily, item: number): FamilyDemand {
  const pairQueues = family.members.filter((q) => q.perNode >= 2);
  const singleQueues = family.members.filter((q) => q.perNode < 2);
  const count = (queues: readonly ClassQueue[]): number => queues.reduce((sum, q) => sum + remainingOf(q), 0);
  const noOwner = new Set<string>();
  const noMember = new Set<string>();
  for (const [zone, c] of family.group.counts) if (c > 0) noOwner.add(zone);
  for (const [zone, c] of family.group.owners) if (c > 0) noMember.add(zone);
  return {
    family, item, owners: count(family.owners),
    pairable: count(pairQueues), pairCap: Math.min(...pairQueues.map((q) => q.perNode), Infinity), pairQueues,
    singles: count(singleQueues), singleQueues, noOwner, noMember,
  };
}

/**
 * Deals one item's slots to its families under the zone invariant (module header); returns
 * how many of their pods found a slot, and reports each placement to `record`.
 */
function dealItem(families: readonly FamilyDemand[], itemNodes: readonly number[], slotsOf: (n: number) => number, zoneOf: (n: number) => number, zones: readonly string[], record?: (n: number, queue: ClassQueue, count: number) => void): number {
  const free = new Map(itemNodes.map((n) => [n, slotsOf(n)]));
  const byZone: number[][] = zones.map(() => []);
  for (const n of itemNodes) byZone[zoneOf(n)]?.push(n);
  let total = 0;
  for (const family of families) {
    const pairCap = Number.isFinite(family.pairCap) ? family.pairCap : 1;
    // Member room per zone: a node takes one single, or up to pairCap pairable pods.
    const room = byZone.map((list, z) => {
      if (family.noMember.has(zones[z] ?? '')) return { nodes: 0, slots: 0 };
      let nodes = 0;
      let slots = 0;
      for (const n of list) {
        const f = free.get(n) ?? 0;
        if (f <= 0) continue;
        nodes += 1;
        slots += Math.min(f, pairCap);
      }
      return { nodes, slots };
    });
    const fit = (nodes: number, slots: number): number => {
      const singles = Math.min(family.singles, nodes);
      return singles + Math.min(family.pairable, Math.max(0, slots - singles));
    };
    // Owners in the zones with the least member room (each needs one free slot); every
    // other zone is open to the members. How many owner zones: whatever places the most,
    // ties to more owners (a member left over finds a place more easily than an owner).
    const ownerable = zones.map((_, z) => z).filter((z) => !family.noOwner.has(zones[z] ?? '') && (byZone[z] ?? []).some((n) => (free.get(n) ?? 0) > 0))
      .sort((a, b) => (room[a]?.slots ?? 0) - (room[b]?.slots ?? 0) || (room[a]?.nodes ?? 0) - (room[b]?.nodes ?? 0) || a - b);
    let allNodes = 0;
    let allSlots = 0;
    for (const r of room) { allNodes += r.nodes; allSlots += r.slots; }
    let best = { score: fit(allNodes, allSlots), owners: 0 };
    let nodes = allNodes;
    let slots = allSlots;
    for (let j = 0; j < Math.min(family.owners, ownerable.length); j++) {
      const z = ownerable[j] ?? 0;
      nodes -= room[z]?.nodes ?? 0;
      slots -= room[z]?.slots ?? 0;
      const score = ownerWeight * (j + 1) + fit(nodes, slots);
      if (score >= best.score) best = { score, owners: j + 1 };
    }
    const ownerZones = new Set(ownerable.slice(0, best.owners));
    // Owners: one per zone, on the zone's node with the fewest free slots (the least use to others).
    const ownerTake = takerOf(family.family.owners);
    for (const z of ownerZones) {
      let pick = -1;
      for (const n of byZone[z] ?? []) if ((free.get(n) ?? 0) > 0 && (pick < 0 || (free.get(n) ?? 0) < (free.get(pick) ?? 0))) pick = n;
      if (pick < 0) continue;
      free.set(pick, (free.get(pick) ?? 0) - 1);
      total += ownerWeight;
      ownerTake(pick, 1, record);
    }
    // Members: pairs on the nodes with the most room, then singles on the least, then what is left.
    const memberNodes = zones.map((_, z) => z).filter((z) => !ownerZones.has(z) && !family.noMember.has(zones[z] ?? '')).flatMap((z) => byZone[z] ?? [])
      .filter((n) => (free.get(n) ?? 0) > 0);
    const used = new Set<number>();
    let pairs = family.pairable;
    let singles = family.singles;
    const pairTake = takerOf(family.pairQueues);
    const singleTake = takerOf(family.singleQueues);
    const byRoom = [...memberNodes].sort((a, b) => (free.get(b) ?? 0) - (free.get(a) ?? 0) || a - b);
    // Pairs first only on nodes singles can spare: keep at least `singles` nodes for them.
    let spare = memberNodes.length - singles;
    for (const n of byRoom) {
      if (pairs < 2 || spare <= 0) break;
      const f = free.get(n) ?? 0;
      if (f < 2 || pairCap < 2) break;
      const take = Math.min(f, pairCap, pairs);
      pairs -= take;
      free.set(n, f - take);
      total += take;
      pairTake(n, take, record);
      used.add(n);
      spare -= 1;
    }
    for (const n of [...byRoom].reverse()) {
      if (singles <= 0) break;
      if (used.has(n)) continue;
      singles -= 1;
      free.set(n, (free.get(n) ?? 0) - 1);
      total += 1;
      singleTake(n, 1, record);
      used.add(n);
    }
    for (const n of byRoom) {
      if (pairs <= 0) break;
      if (used.has(n)) continue;
      const f = free.get(n) ?? 0;
      const take = Math.min(f, pairCap, pairs);
      if (take <= 0) continue;
      pairs -= take;
      free.set(n, f - take);
      total += take;
      pairTake(n, take, record);
      used.add(n);
    }
  }
  return total;
}

/** Hands out pods of the queues in order, reporting each batch with its class. */
function takerOf(queues: readonly ClassQueue[]): (n: number, count: number, record?: (n: number, queue: ClassQueue, count: number) => void) => void {
  let index = 0;
  let taken = 0;
  return (n, count, record) => {
    let left = count;
    while (left > 0 && index < queues.length) {
      const queue = queues[index] as ClassQueue;
      const room = remainingOf(queue) - taken;
      if (room <= 0) { index += 1; taken = 0; continue; }
      const c = Math.min(room, left);
      record?.(n, queue, c);
      taken += c;
      left -= c;
    }
  };
}
