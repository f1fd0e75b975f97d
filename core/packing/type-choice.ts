// Which instance type a new claim is sized for (performance.md §4.3: size the node, pack
// it with a balanced rule, shrink it to the cheapest type that holds what it got).
//
// A type is scored by simulating a DotProduct packing of the pods still waiting into one
// fresh node of it. Each pod is worth its dominant-share price (shareValue: the cheapest,
// over the types it fits, of price × its largest share of the type), so the score is the
// value packed per dollar: about 1 for a node whose shape matches what it holds, above 1
// when complementary pods share it, falling with every unit of capacity left stranded.
// Candidates: the types that hold the largest slice of the waiting demand per dollar, the
// most efficient at the fluid-LP prices, and the best of every price band (powers of two),
// so small and large nodes both compete.
//
// The ranking does not depend on the seed: it is computed per pool and reused while the
// waiting set is similar (≥ 90% of the pods it was computed for), and a seed takes the
// best-ranked type it fits. Seeds that fit none of the leaders (a selector, a big request)
// get a ranking of their own, keyed by their type bitset. Choosing thus costs about
// epochs × candidates × classes, not one set of simulations per claim (the first version
// ran 12 simulations over every waiting class per new claim shape: 228 s at 20k pods).
//
// Hostname rules cap how many pods of a group share a node (anti-affinity 1, spread
// maxSkew); the simulation honours the caps. When waiting pods force F distinct nodes
// anyway, packing the others into a few big nodes first would leave the forced ones
// nearly empty at the end, so candidates cost at most 1.5 × the waiting value per forced
// node.
// Rejected alternatives: valuing pods by their standalone cost (price ÷ whole copies per
// node) — a pod alone on a small node then scores exactly 1 and small nodes always win
// (aws-realistic 5k: 2,682 nodes, 1.26 × the bound); by fluid-LP prices u·R — on the AWS
// catalog the LP buys cpu from types no pod fits, so cpu looks free and cpu-bound nodes
// score near zero.
import { maskFor, type PodClass } from './classes';
import { canAddToClaim, canOpen, probeClaim } from './claim';
import { topologyOf, type SolveContext } from './context';
import { dot, subtract, type Vec } from './dims';
import { liveActive, remainingOf, type ClassQueue, type PackState, type TypeFacts } from './pack-state';
import { cmp, type Pool, type PoolType } from './pools';
import { LabelKey } from '../scheduling/labels';

const topByProxy = 4;
/**
 * A ranking is reused while at least this share of the pods it was computed for still
 * waits. Measured on aws-realistic 1k/5k and karpenter-mix 5k: 0.9 is 1–2% cheaper than
 * 0.75 on all of them; 0.95 and above trade cost on some for time on all.
 */
const freshFor = 0.9;
const topByEfficiency = 2;
const simulationSteps = 256;

/** Hostname groups (by id) that cap the class per node, with the cap. */
interface HostCap {
  readonly group: number;
  readonly cap: number;
}

function hostCaps(podClass: PodClass, context: SolveContext): readonly HostCap[] {
  const caps: HostCap[] = [];
  for (const { group, selfMatch } of topologyOf(context, podClass).own) {
    if (group.key !== LabelKey.hostname || !selfMatch) continue;
    if (group.kind === 'anti') caps.push({ group: group.id, cap: 1 });
    else if (group.kind === 'spread') caps.push({ group: group.id, cap: group.maxSkew });
  }
  return caps;
}

function usable(type: PoolType): Vec {
  return subtract(type.allocatable, type.daemonOverhead);
}

function cheapestPrice(type: PoolType): number {
  return type.offerings[0]?.price ?? Infinity;
}

/**
 * Waiting pods of one pool that the simulation cannot tell apart: the same shape (so the
 * same requests, feasibility and share value) and the same hostname caps. On Karpenter's
 * benchmark input thousands of classes (labels × selectors) merge into a few hundred.
 */
interface SimulationGroup {
  readonly requests: Vec;
  readonly mask: Uint8Array | undefined;
  readonly caps: readonly HostCap[];
  readonly value: number;
  left: number;
}

function simulationGroups(pool: Pool, active: readonly ClassQueue[], state: PackState, caps: Map<number, readonly HostCap[]>): SimulationGroup[] {
  const byKey = new Map<string, SimulationGroup>();
  const groups: SimulationGroup[] = [];
  for (const queue of active) {
    const { podClass } = queue;
    const left = remainingOf(queue);
    if (left <= 0) continue;
    const classCaps = caps.get(podClass.id) ?? [];
    const key = classCaps.length === 0 ? String(podClass.shapeId) : `${podClass.shapeId}|${classCaps.map((c) => `${c.group}:${c.cap}`).join(',')}`;
    const group = byKey.get(key);
    if (group !== undefined) {
      group.left += left;
      continue;
    }
    const merged = { requests: podClass.requests, mask: maskFor(podClass, pool), caps: classCaps, value: shareValue(podClass, pool, state), left };
    byKey.set(key, merged);
    groups.push(merged);
  }
  return groups;
}

/**
 * Share value packed per dollar when the waiting pods are packed into one fresh node of
 * `type`. Like the real fill, candidates only ever drop out, so they are compacted in place.
 */
function simulate(type: PoolType, groups: readonly SimulationGroup[]): number {
  const room = usable(type);
  const size = type.allocatable;
  const groupUse = new Map<number, number>();
  const candidates: { group: SimulationGroup; left: number }[] = [];
  for (const group of groups) if (group.mask?.[type.index] === 1) candidates.push({ group, left: group.left });
  let value = 0;
  for (let step = 0; step < simulationSteps && candidates.length > 0; step++) {
    let best: (typeof candidates)[number] | undefined;
    let bestScore = -1;
    let bestCopies = 0;
    let kept = 0;
    for (const candidate of candidates) {
      const { requests, caps } = candidate.group;
      let copies = candidate.left;
      for (let i = 0; i < room.length; i++) {
        const request = requests[i] ?? 0;
        if (request > 0) copies = Math.min(copies, Math.floor((room[i] ?? 0) / request));
      }
      for (const { group, cap } of caps) copies = Math.min(copies, cap - (groupUse.get(group) ?? 0));
      if (copies <= 0) continue;
      candidates[kept++] = candidate;
      let score = 0;
      for (let i = 0; i < size.length; i++) {
        const capacity = size[i] ?? 0;
        if (capacity > 0) score += ((requests[i] ?? 0) / capacity) * ((room[i] ?? 0) / capacity);
      }
      if (score > bestScore) {
        bestScore = score;
        best = candidate;
        bestCopies = copies;
      }
    }
    candidates.length = kept;
    if (best === undefined) break;
    // Half of what fits at once: close to one-by-one DotProduct, in logarithmically many steps.
    const count = Math.max(1, Math.floor(bestCopies / 2));
    const { requests, caps } = best.group;
    for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - count * (requests[i] ?? 0);
    best.left -= count;
    for (const { group } of caps) groupUse.set(group, (groupUse.get(group) ?? 0) + count);
    value += count * best.group.value;
  }
  return value / cheapestPrice(type);
}

/**
 * Nodes the waiting pods of this pool need anyway (the largest hostname group over its
 * per-node cap), and the fluid value of all of them.
 */
function forcedNodes(active: readonly ClassQueue[], state: PackState, pool: Pool, caps: Map<number, readonly HostCap[]>): { nodes: number } {
  const perGroup = new Map<number, { pods: number; cap: number }>();
  for (const queue of active) {
    const left = remainingOf(queue);
    for (const { group, cap } of caps.get(queue.podClass.id) ?? []) {
      const entry = perGroup.get(group) ?? { pods: 0, cap };
      entry.pods += left;
      perGroup.set(group, entry);
    }
  }
  let nodes = 0;
  for (const { pods, cap } of perGroup.values()) nodes = Math.max(nodes, Math.ceil(pods / Math.max(1, cap)));
  return { nodes };
}

/**
 * What one pod of the class is worth: the cheapest, over the pool's types it fits, of
 * price × its dominant share of the type (max over resources of request ÷ usable).
 * A perfectly shaped node's pods are worth about its price; stranded capacity is worth
 * nothing, so value per dollar measures how well a packing uses what it pays for.
 */
function shareValue(podClass: PodClass, pool: Pool, state: PackState): number {
  // (a function of the class's shape)
  let values = state.shareValues[pool.order];
  if (values === undefined) {
    values = new Map();
    state.shareValues[pool.order] = values;
  }
  const cached = values.get(podClass.shapeId);
  if (cached !== undefined) return cached;
  let best = Infinity;
  const feasibility = podClass.feasibility[pool.order];
  if (feasibility?.ok === true) {
    for (const index of feasibility.types) {
      const type = pool.types[index];
      if (type === undefined) continue;
      let share = 0;
      for (let r = 0; r < podClass.requests.length; r++) {
        const request = podClass.requests[r] ?? 0;
        if (request > 0) share = Math.max(share, request / Math.max(1, (type.allocatable[r] ?? 0) - (type.daemonOverhead[r] ?? 0)));
      }
      best = Math.min(best, cheapestPrice(type) * share);
    }
  }
  const value = Number.isFinite(best) ? best : 0;
  values.set(podClass.shapeId, value);
  return value;
}

/**
 * Per pool, constant through a round: each type's usable capacity, and the types by
 * efficiency at the fluid-LP prices (which are set before packing starts).
 */
function poolTypeFacts(pool: Pool, state: PackState, context: SolveContext): TypeFacts {
  let facts = state.typeFacts.get(pool.order);
  if (facts === undefined) {
    const usables = pool.types.map(usable);
    const efficiency = pool.types.map((type) => dot(context.prices, usables[type.index] ?? type.allocatable) / cheapestPrice(type));
    // (types are in name order, so the index breaks ties as the name would)
    const byEfficiency = pool.types.filter((t) => Number.isFinite(cheapestPrice(t)))
      .sort((a, b) => (efficiency[b.index] ?? 0) - (efficiency[a.index] ?? 0) || cheapestPrice(a) - cheapestPrice(b) || a.index - b.index);
    facts = { usables, byEfficiency };
    state.typeFacts.set(pool.order, facts);
  }
  return facts;
}

function rank(pool: Pool, allowed: Uint8Array | undefined, state: PackState, context: SolveContext): PoolType[] {
  const active = liveActive(state, pool.order);
  const caps = state.hostCaps;
  for (const queue of active) if (!caps.has(queue.podClass.id)) caps.set(queue.podClass.id, hostCaps(queue.podClass, context));
  const { usables, byEfficiency } = poolTypeFacts(pool, state, context);
  const open = pool.types.filter((t) => (allowed === undefined || allowed[t.index] === 1) && canOpen(pool, t) && Number.isFinite(cheapestPrice(t)));
  const demand = context.dims.zero();
  let waitingValue = 0;
  for (const queue of active) {
    const left = remainingOf(queue);
    waitingValue += left * shareValue(queue.podClass, pool, state);
    for (let i = 0; i < demand.length; i++) demand[i] = (demand[i] ?? 0) + left * (queue.podClass.requests[i] ?? 0);
  }
  const scored = open.map((type) => {
    const room = usables[type.index] ?? usable(type);
    // How much of the waiting demand, scaled down as a whole, one node of the type holds.
    let fraction = 1;
    for (let r = 0; r < demand.length; r++) if ((demand[r] ?? 0) > 0) fraction = Math.min(fraction, Math.max(0, room[r] ?? 0) / (demand[r] ?? 1));
    const price = cheapestPrice(type);
    return { type, price, proxy: (fraction * waitingValue) / price };
  });
  const forced = forcedNodes(active, state, pool, caps);
  const limit = forced.nodes > 0 ? (waitingValue / forced.nodes) * 1.5 : Infinity;
  const sized = scored.filter((s) => s.price <= limit);
  const eligible = sized.length > 0 ? sized : scored;
  // (types are in name order, so the index breaks ties as the name would)
  const byProxy = [...eligible].sort((a, b) => b.proxy - a.proxy || a.price - b.price || a.type.index - b.type.index);
  const candidates = new Set(byProxy.slice(0, topByProxy));
  const eligibleByIndex: (typeof scored[number] | undefined)[] = [];
  for (const s of eligible) eligibleByIndex[s.type.index] = s;
  let efficient = 0;
  for (const type of byEfficiency) {
    if (efficient >= topByEfficiency) break;
    const s = eligibleByIndex[type.index];
    if (s === undefined) continue;
    candidates.add(s);
    efficient += 1;
  }
  // The best type of every size (powers of two of price), so small and large both compete.
  const bySize = new Map<number, (typeof scored)[number]>();
  for (const s of byProxy) {
    const bucket = Math.floor(Math.log2(Math.max(s.price, 1e-9)));
    if (!bySize.has(bucket)) bySize.set(bucket, s);
  }
  for (const s of bySize.values()) candidates.add(s);
  const groups = simulationGroups(pool, active, state, caps);
  const simulated = [...candidates].map((s) => ({ ...s, score: simulate(s.type, groups) }));
  // Within 0.1% counts as a tie: the larger node wins (the seed and the real fill differ
  // from the simulation, and a roomier node absorbs that; the final shrink to the cheapest
  // type holding the pods takes back what is left over), then the name.
  simulated.sort((a, b) => (Math.abs(a.score - b.score) > 1e-3 * Math.max(a.score, b.score) ? b.score - a.score : 0)
    || b.price - a.price || cmp(a.type.name, b.type.name));
  const ranked = simulated.map((s) => s.type);
  // Everything else afterwards, so a seed always finds its type here.
  for (const s of byProxy) if (!candidates.has(s)) ranked.push(s.type);
  if (eligible !== scored) {
    // The rest of the open types, cheapest first (typesByPrice's order: price, then name).
    const listed = new Set(ranked);
    const isOpen = new Uint8Array(pool.types.length);
    for (const s of scored) isOpen[s.type.index] = 1;
    for (const type of pool.typesByPrice) if (isOpen[type.index] === 1 && !listed.has(type)) ranked.push(type);
  }
  return ranked;
}

function maskKey(mask: Uint8Array, maskKeys: PackState['maskKeys']): string {
  let key = maskKeys.get(mask);
  if (key === undefined) {
    key = '';
    for (let i = 0; i < mask.length; i++) if (mask[i] === 1) key += `${i},`;
    maskKeys.set(mask, key);
  }
  return key;
}

function rankingFor(key: string, pool: Pool, allowed: Uint8Array | undefined, state: PackState, context: SolveContext): readonly PoolType[] {
  const cached = state.typeChoice.get(key);
  if (cached !== undefined && state.waiting >= cached.waiting * freshFor) return cached.types;
  const types = rank(pool, allowed, state, context);
  state.typeChoice.set(key, { types, waiting: state.waiting });
  return types;
}

/** The target type for a claim seeded by this class in this pool, or undefined. */
export function chooseType(pool: Pool, seed: PodClass, state: PackState, context: SolveContext): PoolType | undefined {
  const mask = maskFor(seed, pool);
  if (mask === undefined) return undefined;
  const fits = (type: PoolType): boolean => mask[type.index] === 1 && canOpen(pool, type) && canAddToClaim(probeClaim(pool, type, context), seed, context).ok;
  // The pool-wide ranking's leaders first; if the seed fits none of them, its own ranking.
  const shared = rankingFor(`${pool.order}|all`, pool, undefined, state, context);
  for (const type of shared.slice(0, 3)) if (fits(type)) return type;
  const own = rankingFor(`${pool.order}|${maskKey(mask, state.maskKeys)}`, pool, mask, state, context);
  return own.find(fits);
}
