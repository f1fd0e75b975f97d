// A faithful port of Karpenter's provisioning loop (karpenter.md §1.6, performance.md
// §1.2), the baseline the solver is measured against. It shares the solver's model
// (pools, classes, topology, fixed nodes) so both see identical constraints; only the
// packing policy differs:
//  - pods sorted by cpu desc, then memory desc (then name: the input has no UID);
//  - each pod tries existing nodes (by name), then in-flight claims, then the claims
//    planned so far with the fewest pods first, then a new claim from the pools by weight;
//  - a claim keeps every instance type that still fits (and counts the largest against
//    the pool's limits, as Karpenter subtracts the max across options);
//  - at the end each claim launches its cheapest available offering.
// Preferences are relaxed one step per failed attempt, as in the solver.
import { LabelKey } from '../../scheduling/labels';
import { inValues, isUnsatisfiable } from '../../scheduling/requirement';
import { intersectRequirements, requirementKeys, type Requirements } from '../../scheduling/requirements';
import { buildClass, classKey, maskFor, type ClassBuildContext, type PodClass } from '../classes';
import { topologyOf, universeOf, type SolveContext } from '../context';
import { addInto, fitsWith, maxOf, subtract, Dims, type Vec } from '../dims';
import { addToFixedMutating, canAddToFixed, countBoundPods, existingNode, inFlightNode, type FixedNode } from '../fixed-nodes';
import type { PackingInput, PendingPod } from '../input';
import { buildPools, cmp, daemonModels, offeringAllowed, withinLimits, type Pool, type PoolType } from '../pools';
import { effectiveSpec, relax, type EffectiveSpec } from '../preferences';
import { Topology } from '../topology';

export interface BaselineClaim {
  readonly nodePool: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: string;
  readonly price: number;
  readonly pods: string[];
}

export interface BaselinePlan {
  readonly nodeClaims: BaselineClaim[];
  readonly onExisting: number;
  readonly unschedulable: string[];
  readonly totalPrice: number;
}

export interface LoopClaim {
  readonly id: number;
  readonly pool: Pool;
  /** Capacity subtracted from the pool's headroom when the claim opened (max over its options then). */
  reserved: Vec;
  readonly classes: Set<PodClass>;

  options: PoolType[];
  /** Element-wise max allocatable over options: a cheap "cannot fit" test. */
  largest: Vec;
  requirements: Requirements;
  zone: string | undefined;
  readonly used: Vec;
  readonly ports: Set<string>;
  readonly pods: string[];
}

function largestOf(options: readonly PoolType[], dims: Dims): Vec {
  let out = dims.zero();
  for (const t of options) out = maxOf(out, subtract(t.allocatable, t.daemonOverhead));
  return out;
}

/** Counts the loop's work (claims tried, instance types filtered) against an optional budget. */
interface WorkMeter {
  used: number;
}

function tryClaim(claim: LoopClaim, podClass: PodClass, context: SolveContext, meter: WorkMeter): { options: PoolType[]; requirements: Requirements; zone: string | undefined } | undefined {
  meter.used += 1;
  if (!fitsWith(claim.used, podClass.requests, claim.largest)) return undefined;
  meter.used += claim.options.length;
  if (podClass.hostPorts.some((p) => claim.ports.has(p))) return undefined;
  const mask = maskFor(podClass, claim.pool);
  if (mask === undefined) return undefined;
  let requirements = claim.requirements;
  if (requirementKeys(podClass.requirements).length > 0) {
    requirements = intersectRequirements(requirements, podClass.requirements);
    if (Object.values(requirements).some(isUnsatisfiable)) return undefined;
  }
  const zoneReq = requirements[LabelKey.zone];
  const ctReq = requirements[LabelKey.capacityType];
  const options = claim.options.filter((t) => mask[t.index] === 1 && fitsWith(claim.used, podClass.requests, subtract(t.allocatable, t.daemonOverhead))
    && t.offerings.some((o) => offeringAllowed(o, zoneReq, ctReq)));
  if (options.length === 0) return undefined;
  const topology = topologyOf(context, podClass);
  if (topology.keys.length === 0) return { options, requirements, zone: claim.zone };
  const zones = claim.zone !== undefined || !topology.keys.includes(LabelKey.zone) ? [claim.zone]
    : [...new Set(options.flatMap((t) => t.offerings.filter((o) => offeringAllowed(o, zoneReq, ctReq)).map((o) => o.zone)))].sort();
  for (const zone of zones) {
    const violation = context.topology.violation(topology, (key) => (key === LabelKey.hostname ? `${claim.pool.name}#${claim.id}` : key === LabelKey.zone ? zone : undefined),
      (key) => universeOf(context, podClass, key));
    if (violation === undefined) {
      const pinned = zone !== undefined && claim.zone === undefined ? intersectRequirements(requirements, { [LabelKey.zone]: inValues(LabelKey.zone, [zone]) }) : requirements;
      return { options: zone === undefined ? options : options.filter((t) => t.offerings.some((o) => o.zone === zone && offeringAllowed(o, zoneReq, ctReq))), requirements: pinned, zone };
    }
  }
  return undefined;
}

function commit(claim: LoopClaim, podClass: PodClass, proposal: NonNullable<ReturnType<typeof tryClaim>>, pod: string, context: SolveContext): void {
  claim.options = proposal.options;
  claim.largest = largestOf(proposal.options, context.dims);
  claim.requirements = proposal.requirements;
  claim.zone = proposal.zone;
  addInto(claim.used, podClass.requests);
  podClass.hostPorts.forEach((p) => claim.ports.add(p));
  claim.pods.push(pod);
  claim.classes.add(podClass);
  const topology = topologyOf(context, podClass);
  context.topology.recordMutating(topology, (key) => (key === LabelKey.hostname ? `${claim.pool.name}#${claim.id}` : key === LabelKey.zone ? claim.zone : undefined),
    (key) => universeOf(context, podClass, key));
}

/** The loop's final state, for callers that turn it into a full plan (alternative.ts). */
export interface LoopRun {
  readonly dims: Dims;
  readonly claims: readonly LoopClaim[];
  readonly existing: readonly FixedNode[];
  readonly inFlight: readonly FixedNode[];
  readonly unschedulable: readonly string[];
  readonly onExisting: number;
  /** Work units spent (see runKarpenterLoop). */
  readonly work: number;
}

/**
 * What the loop packs with: dimensions, pools (fresh limit headroom) and pod classes. The
 * solver passes its own (built from the same input) to avoid building them twice; the
 * classes are read-only here and the pools' headroom is the loop's own copy.
 */
export interface LoopModel {
  readonly dims: Dims;
  readonly pools: Pool[];
  readonly classOf: (pod: PendingPod, spec: EffectiveSpec) => PodClass;
}

export interface LoopOptions {
  readonly workBudget?: number;
  readonly model?: LoopModel;
  /**
   * Topology.guardSpread: keep owners' spread satisfiable in any arrival order. Off for the
   * baseline (Karpenter has no such rule); on when the loop's plan may be launched (alternative.ts).
   */
  readonly guardSpread?: boolean;
}

function buildModel(input: PackingInput): LoopModel {
  const names = new Set<string>();
  const addNames = (r: Readonly<Record<string, string>> | undefined): void => { Object.keys(r ?? {}).forEach((n) => names.add(n)); };
  input.pods.forEach((p) => addNames(p.requests));
  input.daemonSets.forEach((d) => addNames(d.requests));
  input.existingNodes.forEach((n) => { addNames(n.allocatable); n.pods.forEach((p) => addNames(p.requests)); });
  input.inFlightClaims.forEach((c) => { addNames(c.allocatable); c.pods.forEach((p) => addNames(p.requests)); });
  input.nodePools.forEach((p) => { addNames(p.limits); addNames(p.usage); p.instanceTypes.forEach((t) => { addNames(t.capacity); addNames(t.allocatable); }); });
  const dims = new Dims(names);
  const pools = buildPools(input.nodePools, dims, daemonModels(input.daemonSets, dims));
  const build: ClassBuildContext = { dims, pools, compatCache: new Map(), shapes: new Map() };
  const classes = new Map<string, PodClass>();
  const classOf = (pod: PendingPod, spec: EffectiveSpec): PodClass => {
    const key = classKey(pod, spec);
    let podClass = classes.get(key);
    if (podClass === undefined) {
      podClass = buildClass(classes.size, pod, spec, build);
      classes.set(key, podClass);
    }
    return podClass;
  };
  return { dims, pools, classOf };
}

/**
 * Runs the loop; with a `workBudget` (claims tried plus instance types filtered) it gives
 * up and returns undefined once the budget is spent. Counting work instead of time keeps
 * the outcome deterministic. The loop tries every planned claim for every pod, so its
 * work grows with pods × claims (162 s on karpenter-mix 10k).
 */
export function runKarpenterLoop(input: PackingInput, options: LoopOptions = {}): LoopRun | undefined {
  const workBudget = options.workBudget ?? Infinity;
  const meter: WorkMeter = { used: 0 };
  const { dims, pools, classOf } = options.model ?? buildModel(input);
  const topology = new Topology({ guardSpread: options.guardSpread ?? false });
  const pods = [...input.pods].sort((a, b) => cmp(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
  pods.forEach((p) => topology.register(p, effectiveSpec(p)));
  const existing = input.existingNodes.map((n) => existingNode(n, dims)).sort((a, b) => cmp(a.name, b.name));
  const inFlight = input.inFlightClaims.map((c) => inFlightNode(c, pools, dims)).sort((a, b) => cmp(a.name, b.name));
  // Karpenter counts the pods already bound for topology too (its Topology.Initialize).
  countBoundPods(topology, input, existing, inFlight);
  const context: SolveContext = { dims, pools, topology, prices: dims.zero(), existingZones: [], classTopology: new Map(), topologyByKey: new Map(), universes: new Map() };

  const claims: LoopClaim[] = [];
  const unschedulable: string[] = [];
  let queue = pods.map((pod) => ({ pod, key: `${pod.namespace}/${pod.name}`, spec: effectiveSpec(pod), podClass: classOf(pod, effectiveSpec(pod)) }));
  let onExisting = 0;
  while (queue.length > 0) {
    queue.sort((a, b) => (b.podClass.requests[0] ?? 0) - (a.podClass.requests[0] ?? 0) || (b.podClass.requests[1] ?? 0) - (a.podClass.requests[1] ?? 0) || cmp(a.key, b.key));
    const next: typeof queue = [];
    for (const item of queue) {
      meter.used += existing.length + inFlight.length;
      const fixed = [...existing, ...[...inFlight].sort((a, b) => a.podCount - b.podCount || cmp(a.name, b.name))].find((n: FixedNode) => canAddToFixed(n, item.podClass, context).ok);
      if (fixed !== undefined) {
        addToFixedMutating(fixed, item.podClass, item.key, context);
        onExisting += 1;
        continue;
      }
      // Fewest pods first; claims are created in order, so a stable sort keeps id order on ties.
      const ordered = [...claims].sort((a, b) => a.pods.length - b.pods.length || a.id - b.id);
      let placed = false;
      for (const claim of ordered) {
        const proposal = tryClaim(claim, item.podClass, context, meter);
        if (proposal !== undefined) {
          commit(claim, item.podClass, proposal, item.key, context);
          placed = true;
          break;
        }
      }
      if (!placed) {
        for (const pool of pools) {
          const mask = maskFor(item.podClass, pool);
          if (mask === undefined) continue;
          meter.used += pool.types.length;
          const options = pool.types.filter((t) => mask[t.index] === 1 && withinLimits(pool, t.capacity));
          if (options.length === 0) continue;
          const claim: LoopClaim = {
            id: claims.length, pool, reserved: dims.zero(), classes: new Set(), options, largest: largestOf(options, dims), requirements: pool.requirements, zone: undefined, used: dims.zero(), ports: new Set(), pods: [],
          };
          const proposal = tryClaim(claim, item.podClass, context, meter);
          if (proposal === undefined) continue;
          commit(claim, item.podClass, proposal, item.key, context);
          let reserved = dims.zero();
          for (const t of claim.options) reserved = maxOf(reserved, t.capacity);
          claim.reserved = reserved;
          pool.headroom.set(subtract(pool.headroom, reserved));
          pool.nodesHeadroom -= 1;
          claims.push(claim);
          placed = true;
          break;
        }
      }
      if (!placed) {
        const relaxed = relax(item.spec);
        if (relaxed === undefined) unschedulable.push(item.key);
        else next.push({ ...item, spec: relaxed.spec, podClass: classOf(item.pod, relaxed.spec) });
      }
      if (meter.used > workBudget) return undefined;
    }
    queue = next;
  }
  return { dims, claims, existing, inFlight, unschedulable, onExisting, work: meter.used };
}

export function karpenterLoop(input: PackingInput): BaselinePlan {
  const run = runKarpenterLoop(input);
  if (run === undefined) throw new Error('the Karpenter loop without a budget always finishes');
  const { claims, onExisting, unschedulable } = run;

  const nodeClaims = claims.map((claim): BaselineClaim => {
    const zoneReq = claim.requirements[LabelKey.zone];
    const ctReq = claim.requirements[LabelKey.capacityType];
    let best: { type: PoolType; zone: string; capacityType: string; price: number } | undefined;
    for (const type of claim.options) {
      const offering = type.offerings.find((o) => offeringAllowed(o, zoneReq, ctReq));
      if (offering !== undefined && (best === undefined || offering.price < best.price || (offering.price === best.price && type.name < best.type.name))) {
        best = { type, ...offering };
      }
    }
    if (best === undefined) throw new Error(`baseline claim ${claim.id} has no offering`);
    return { nodePool: claim.pool.name, instanceType: best.type.name, zone: best.zone, capacityType: best.capacityType, price: best.price, pods: claim.pods };
  });
  return { nodeClaims, onExisting, unschedulable: [...unschedulable], totalPrice: Math.round(nodeClaims.reduce((s, c) => s + c.price, 0) * 1e6) / 1e6 };
}
