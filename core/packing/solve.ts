// solve(input) → plan: the packing core (ARCHITECTURE.md "The packing core").
//
// Order of placement, as Karpenter's (karpenter.md §1.6): existing nodes first (first
// fit, by name), then in-flight NodeClaims (fewest pods first), then claims planned in
// this solve, then new claims (fill.ts). Pods that fail everywhere are relaxed one
// preference at a time (preferences.ts) and retried; when nothing is left to relax they
// are reported with the reason of their last attempt.
//
// Pure and deterministic: no clock, no randomness, no I/O; every sort ends in a unique
// tie-breaker (the pod's namespace/name, a pool's or type's name); claim names are
// derived from their contents.
import { karpenterLoopAlternative } from './alternative';
import { buildClass, classKeys, podValue, type ClassKeys, standaloneCost, type ClassBuildContext, type PodClass } from './classes';
import { addToClaimMutating, canAddToClaim, finalizeClaimsMutating, restoreTargetMutating, retargetMutating, type Claim } from './claim';
import { topologyOf, type SolveContext } from './context';
import { addToFixedMutating, canAddToFixed, countBoundPods, existingNode, inFlightNode, type FixedNode } from './fixed-nodes';
import { openForSeedMutating, shapeOf } from './fill';
import { liveActive, remainingOf, type ClassQueue, type PackState, type RequestGroup } from './pack-state';
import { RiderSeeds } from './riders';
import { solveFluid } from './fluid';
import { addInto, Dims, subtract } from './dims';
import type { PackingInput, PendingPod } from './input';
import { free, guidable, guideNewClaimsMutating, type Guide } from './guide';
import { guideRidersMutating } from './guide-riders';
import type { LinearSolver } from './linear-program';
import { buildPlan } from './output';
import { lazily, perPool, type Explanation } from './misses';
import type { Plan } from './plan';
import { buildPools, cmp, daemonModels, type Pool } from './pools';
import type { LoopModel } from './baseline/karpenter-loop';
import { effectiveSpec, relax, requiredAffinityTerms, unguard, requiredAntiAffinityTerms, spreadConstraints, type EffectiveSpec } from './preferences';
import { Topology } from './topology';

interface QueuedPod {
  readonly key: string;
  /** The pod's place in key order (podsOf): compares as the key does, without comparing strings. */
  readonly rank: number;
  readonly pod: PendingPod;
  readonly spec: EffectiveSpec;
  readonly podClass: PodClass;
}

function resourceNames(input: PackingInput): Set<string> {
  const names = new Set<string>();
  const addAll = (record: Readonly<Record<string, string>> | undefined): void => {
    for (const name of Object.keys(record ?? {})) names.add(name);
  };
  input.pods.forEach((p) => addAll(p.requests));
  input.daemonSets.forEach((d) => addAll(d.requests));
  input.existingNodes.forEach((n) => { addAll(n.allocatable); n.pods.forEach((p) => addAll(p.requests)); });
  input.inFlightClaims.forEach((c) => { addAll(c.allocatable); c.pods.forEach((p) => addAll(p.requests)); });
  input.nodePools.forEach((p) => {
    addAll(p.limits);
    addAll(p.usage);
    p.instanceTypes.forEach((t) => { addAll(t.capacity); addAll(t.allocatable); });
  });
  return names;
}

export function podKey(pod: { namespace: string; name: string }): string {
  return `${pod.namespace}/${pod.name}`;
}

export interface SolveOptions {
  /**
   * An LP solver (activities/packing/highs.ts) enables the LP guide for new claims (guide.ts);
   * the guided plan is kept only when it is cheaper. Without one the solve is greedy only.
   */
  readonly linearSolver?: LinearSolver;
}

export function solve(input: PackingInput, options: SolveOptions = {}): Plan {
  // Classes depend on the input only: the guided solve reuses the greedy solve's.
  const shared: SharedClasses = { classes: new Map(), compatCache: new Map(), shapes: new Map(), standalones: new Map() };
  // The greedy run's state is dropped before the guided run starts (peak memory: only
  // its plan survives, as the guide's hints and the plan to beat).
  const { best, hints, guidable, fluidBound } = greedyPlan(input, shared);
  // Where the greedy plan is already within a few percent of the fluid LP (a lower bound
  // when no existing capacity is free), the guide has next to nothing to find: on
  // karpenter-exact's linear prices (greedy 1.067× the fluid LP at 1k) the guided plan
  // cost exactly the greedy one's, 10× slower, once the guide took hostname-rule pods. On
  // the AWS catalog the greedy plan is 1.4–1.6× the fluid LP.
  const nearlyTight = input.existingNodes.length === 0 && input.inFlightClaims.length === 0 && best.totalPrice <= fluidTightness * fluidBound;
  if (options.linearSolver === undefined || !guidable || nearlyTight) return best;
  const guided = solveWith(input, { solver: options.linearSolver, hints }, shared);
  const wins = guided.guided && guided.plan.unschedulable.length <= best.unschedulable.length && guided.plan.totalPrice < best.totalPrice;
  return wins ? guided.plan : best;
}

/** The greedy plan is kept without a guided try when it costs at most this × the fluid LP (see solve). */
const fluidTightness = 1.1;

/** The greedy solve, or the Karpenter loop's plan where that is cheaper (cheaperOf). */
function greedyPlan(input: PackingInput, shared: SharedClasses): { best: Plan; hints: Plan['nodeClaims']; guidable: boolean; fluidBound: number } {
  const greedy = solveWith(input, undefined, shared);
  return { best: cheaperOf(greedy.plan, greedy.unschedulable, input, greedy.model), hints: greedy.plan.nodeClaims, guidable: greedy.guidable, fluidBound: greedy.fluidBound };
}

interface SharedClasses {
  readonly classes: Map<string, PodClass>;
  readonly compatCache: ClassBuildContext['compatCache'];
  readonly shapes: ClassBuildContext['shapes'];
  /** standaloneCost by hostname cap and shape: a function of the input's pools only, so of both solves. */
  readonly standalones: Map<string, number>;
  /** The input's pods as both solves take them (podsOf), and each one's class before any relaxation. */
  pods?: SolvePods;
  firstClasses?: readonly PodClass[];
}

/** The input's pods by name, duplicates dropped, with their keys, specs and (pods with rules of their own) class keys. */
interface SolvePods {
  readonly pods: readonly PendingPod[];
  readonly keys: readonly string[];
  readonly specs: readonly EffectiveSpec[];
  readonly ruledKeys: readonly (ClassKeys | undefined)[];
}

function podsOf(input: PackingInput): SolvePods {
  // Duplicate pod names would make the plan ambiguous: the first one wins.
  const seen = new Set<string>();
  // (keys built once per pod, not per comparison)
  const keyed = input.pods.map((pod) => ({ pod, key: podKey(pod) })).sort((a, b) => cmp(a.key, b.key)).filter(({ key }) => {
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const pods = keyed.map(({ pod }) => pod);
  const specs = pods.map((pod) => effectiveSpec(pod));
  // A pod with rules of its own is never an anonymous class: its class keys, computed here,
  // name its topology subject and are reused by classOf.
  const ruledKeys = pods.map((pod, i) => {
    const spec = specs[i];
    return spec === undefined || !hasRules(spec) ? undefined : classKeys(pod, spec);
  });
  return { pods, keys: keyed.map(({ key }) => key), specs, ruledKeys };
}

function solveWith(input: PackingInput, guide: Guide | undefined, shared: SharedClasses): { plan: Plan; unschedulable: Map<string, string>; model: LoopModel; guided: boolean; guidable: boolean; fluidBound: number } {
  const dims = new Dims(resourceNames(input));
  const pools = buildPools(input.nodePools, dims, daemonModels(input.daemonSets, dims));
  // Limit headroom before this solve spends any: the Karpenter-loop alternative starts from it.
  const startPools: Pool[] = pools.map((pool) => ({ ...pool, headroom: Float64Array.from(pool.headroom) }));
  const topology = new Topology({ guardSpread: true });

  shared.pods ??= podsOf(input);
  const { pods, keys: podKeys, specs, ruledKeys } = shared.pods;
  // Pods of one deployment register the same groups: once per distinct subject and rules.
  const registered = new Set<string>();
  pods.forEach((pod, i) => {
    const spec = specs[i];
    const subject = ruledKeys[i]?.topology;
    if (spec === undefined || subject === undefined || registered.has(subject)) return;
    registered.add(subject);
    topology.register(pod, spec);
  });

  const existing = input.existingNodes.map((n) => existingNode(n, dims)).sort((a, b) => cmp(a.name, b.name));
  const inFlight = input.inFlightClaims.map((c) => inFlightNode(c, pools, dims)).sort((a, b) => cmp(a.name, b.name));
  countBoundPods(topology, input, existing, inFlight);

  const context: SolveContext = {
    dims, pools, topology, prices: dims.zero(),
    existingZones: existing.flatMap((n) => (n.labels['topology.kubernetes.io/zone'] === undefined ? [] : [{ zone: n.labels['topology.kubernetes.io/zone'], labels: n.labels }])),
    classTopology: new Map(), topologyByKey: new Map(), universes: new Map(),
  };
  const build: ClassBuildContext = { dims, pools, compatCache: shared.compatCache, shapes: shared.shapes };
  const classes = shared.classes;
  // A function of the class's shape and hostname cap only: once per pair.
  const standalones = shared.standalones;
  const assignValue = (podClass: PodClass): void => {
    const perNode = topologyOf(context, podClass).perNode;
    const standaloneKey = `${perNode}|${podClass.shapeId}`;
    let standalone = standalones.get(standaloneKey);
    if (standalone === undefined) {
      standalone = standaloneCost(podClass, pools, perNode);
      standalones.set(standaloneKey, standalone);
    }
    // Unschedulable classes (no fitting type) and free capacity fall back to the fluid value, then cpu.
    podClass.value = Number.isFinite(standalone) && standalone > 0 ? standalone
      : podValue(podClass.requests, context.prices) || (podClass.requests[0] ?? 0) * 1e-3 + (podClass.requests[1] ?? 0) * 1e-12;
  };
  // Labels and namespace matter only to topology: a pod no group selects and with no rule
  // of its own packs exactly like any other pod of its shape (aws-realistic: 2,000
  // deployments, about 150 shapes), so its class key leaves them out.
  const classOf = (pod: PendingPod, spec: EffectiveSpec, known?: ClassKeys): PodClass => {
    const anonymous = known === undefined && !hasRules(spec) && topology.matchingGroups(pod).length === 0;
    const keys = known ?? classKeys(anonymous ? { ...pod, namespace: '', labels: {} } : pod, spec);
    let podClass = classes.get(keys.key);
    if (podClass === undefined) {
      podClass = buildClass(classes.size, pod, spec, build, anonymous ? undefined : keys);
      assignValue(podClass);
      classes.set(keys.key, podClass);
    }
    return podClass;
  };
  // The pods' first classes are the same in both solves (the same input, the same topology
  // groups, the classes shared): the guided solve reuses the greedy one's.
  const firstClasses = shared.firstClasses ?? pods.map((pod, i) => classOf(pod, specs[i] ?? effectiveSpec(pod), ruledKeys[i]));
  shared.firstClasses = firstClasses;
  const initialQueue: QueuedPod[] = pods.map((pod, i) => {
    const spec = specs[i] ?? effectiveSpec(pod);
    return { key: podKeys[i] ?? podKey(pod), rank: i, pod, spec, podClass: firstClasses[i] ?? classOf(pod, spec, ruledKeys[i]) };
  });

  // Fluid-LP prices over the demand of every pod some pool can host and the usable capacity
  // of every type that can host at least one of them (a type nothing fits would make its
  // resources look free). A pod no pool can host adds no demand: counted, it raised the
  // bound, the greedy plan looked nearly tight and the guide was skipped — 116 pending pods
  // of other workloads that no pool admitted turned seed 000's 14 nodes into 15.
  // The classes of this solve's pods (the shared map may hold more, from an earlier solve's relaxations).
  const initialClasses = new Set(initialQueue.map((item) => item.podClass));
  // One walk of class × pool: the classes some pool hosts, and per pool the types that hold one of them.
  const hosts = pools.map((pool) => new Uint8Array(pool.types.length));
  const hostable = new Set<typeof firstClasses[number]>();
  for (const podClass of initialClasses) {
    pools.forEach((pool, i) => {
      const feasibility = podClass.feasibility[pool.order];
      if (feasibility?.ok !== true) return;
      hostable.add(podClass);
      for (const index of feasibility.types) hosts[i]![index] = 1;
    });
  }
  const demand = dims.zero();
  for (const item of initialQueue) if (hostable.has(item.podClass)) addInto(demand, item.podClass.requests);
  const catalog = pools.flatMap((pool, i) => pool.types.filter((type) => hosts[i]![type.index] === 1));
  const fluid = solveFluid(catalog.map((t) => subtract(t.allocatable, t.daemonOverhead)), catalog.map((t) => t.offerings[0]?.price ?? 0), demand);
  context.prices.set(fluid.prices);
  for (const podClass of classes.values()) assignValue(podClass);
  // (Every class, also ones from an earlier solve: their value is a function of the same prices.)

  const state: PackState = { queues: new Map(), activeByPool: [], groupsByPool: [], claims: [], typeChoice: new Map(), hostCaps: new Map(), typeFacts: new Map(), shareValues: [], shapeIds: new Map(), maskKeys: new WeakMap(), waiting: 0, deferral: undefined, guided: false, guidable: false };
  const unschedulable = new Map<string, string>();
  let queue = initialQueue;

  for (let round = 0; queue.length > 0; round++) {
    queue.sort((a, b) => b.podClass.value - a.podClass.value
      || (b.podClass.requests[0] ?? 0) - (a.podClass.requests[0] ?? 0)
      || (b.podClass.requests[1] ?? 0) - (a.podClass.requests[1] ?? 0)
      || a.rank - b.rank);
    const waiting = queue.filter((item) => !placeOnFixedMutating(item, existing, inFlight, context)
      && !(round > 0 && placeOnPlannedMutating(item, state.claims, context)));
    const failures = packNewClaimsMutating(waiting, state, context, round === 0, guide);
    queue = [];
    for (const item of waiting) {
      const reason = failures.get(item.key);
      if (reason === undefined) continue;
      const relaxed = relax(item.spec) ?? unguard(item.spec);
      if (relaxed === undefined) unschedulable.set(item.key, reason());
      else queue.push({ ...item, spec: relaxed.spec, podClass: classOf(item.pod, relaxed.spec) });
    }
  }

  const finals = finalizeClaimsMutating(state.claims.filter((c) => c.pods.length > 0), input.maxInstanceTypes);
  const plan = buildPlan({ finals, existing, inFlight, unschedulable, dims });
  const model: LoopModel = { dims, pools: startPools, classOf };
  // (the fluid LP over every pod's demand and the types that hold one: a lower bound on new nodes' cost without free existing capacity)
  return { plan, unschedulable, model, guided: state.guided, guidable: state.guidable, fluidBound: fluid.bound };
}

/**
 * The solver's plan, or the Karpenter loop's when that one is strictly cheaper and leaves
 * no pod unscheduled that the solver placed (its pods keep the solver's explanations).
 */
function cheaperOf(plan: Plan, unschedulable: ReadonlyMap<string, string>, input: PackingInput, model: LoopModel): Plan {
  if (plan.nodeClaims.length === 0) return plan;
  const alternative = karpenterLoopAlternative(input, { model });
  if (alternative === undefined || !alternative.unschedulable.every((pod) => unschedulable.has(pod))) return plan;
  const reasons = new Map(alternative.unschedulable.map((pod) => [pod, unschedulable.get(pod) ?? '']));
  const other = buildPlan({ ...alternative, unschedulable: reasons });
  return other.totalPrice < plan.totalPrice ? other : plan;
}

/** Whether the spec carries topology rules of its own (spread, pod affinity or anti-affinity). */
function hasRules(spec: EffectiveSpec): boolean {
  return spreadConstraints(spec).length > 0 || requiredAffinityTerms(spec).length > 0 || requiredAntiAffinityTerms(spec).length > 0;
}

function placeOnFixedMutating(item: QueuedPod, existing: readonly FixedNode[], inFlight: FixedNode[], context: SolveContext): boolean {
  for (const node of existing) {
    if (canAddToFixed(node, item.podClass, context).ok) {
      addToFixedMutating(node, item.podClass, item.key, context);
      return true;
    }
  }
  // Karpenter tries in-flight claims with the fewest pods first (spreads new pods out).
  const ordered = inFlight.length > 1 ? [...inFlight].sort((a, b) => a.podCount - b.podCount || cmp(a.name, b.name)) : inFlight;
  for (const node of ordered) {
    if (canAddToFixed(node, item.podClass, context).ok) {
      addToFixedMutating(node, item.podClass, item.key, context);
      return true;
    }
  }
  return false;
}

/** Relaxed pods may join claims already planned (fewest pods first). */
function placeOnPlannedMutating(item: QueuedPod, claims: readonly Claim[], context: SolveContext): boolean {
  const ordered = [...claims].sort((a, b) => a.pods.length - b.pods.length || a.id - b.id);
  for (const claim of ordered) {
    let proposal = canAddToClaim(claim, item.podClass, context);
    if (!proposal.ok) {
      // A bigger type may hold it; keep the old target if the pod still does not fit.
      const previous = claim.target;
      const reservation = claim.reservation;
      if (!retargetMutating(claim, item.podClass, context)) continue;
      proposal = canAddToClaim(claim, item.podClass, context);
      if (!proposal.ok) {
        restoreTargetMutating(claim, previous, reservation);
        continue;
      }
    }
    addToClaimMutating(claim, item.podClass, proposal, item.key, context);
    return true;
  }
  return false;
}

/** Opens claims seeded in queue order; returns the reason for each pod left over. */
/** In the first round, the LP guide (if given and the pods suit it) plans claims before the greedy fill. */
function packNewClaimsMutating(waiting: readonly QueuedPod[], state: PackState, context: SolveContext, first: boolean, guide: Guide | undefined): Map<string, Explanation> {
  state.queues.clear();
  for (const item of waiting) {
    let classQueue = state.queues.get(item.podClass.id);
    if (classQueue === undefined) {
      classQueue = { podClass: item.podClass, pods: [], head: 0, perNode: topologyOf(context, item.podClass).perNode, shape: shapeOf(item.podClass.requests, state), order: 0, fillClaim: -1, fillCount: 0 };
      state.queues.set(item.podClass.id, classQueue);
    }
    classQueue.pods.push(item.key);
  }
  state.waiting = waiting.length;
  state.typeChoice.clear();
  state.activeByPool.length = 0;
  state.groupsByPool.length = 0;
  const byValue = [...state.queues.values()].sort((a, b) => b.podClass.value - a.podClass.value || a.podClass.id - b.podClass.id);
  byValue.forEach((queue, order) => { queue.order = order; });
  for (const pool of context.pools) {
    const active = byValue.filter((q) => q.podClass.feasibility[pool.order]?.ok === true);
    state.activeByPool.push(active);
    const groups: RequestGroup[] = [];
    for (const queue of active) {
      let group = groups[queue.shape];
      if (group === undefined) {
        group = { requests: queue.podClass.requests, queues: [], scaled: new Map() };
        groups[queue.shape] = group;
      }
      group.queues.push(queue);
    }
    // (dense by request id; in order of each group's most valuable class)
    state.groupsByPool.push(groups.filter((g) => g !== undefined).sort((a, b) => (a.queues[0]?.order ?? 0) - (b.queues[0]?.order ?? 0)));
  }

  const placed = new Set<string>();
  const failures = new Map<string, Explanation>();
  if (first) {
    state.guidable = guidable(state, context);
    if (guide !== undefined && state.guidable) {
      state.guided = guideNewClaimsMutating(state, context, guide, placed);
      compactActive(state);
      // Pods left for lighter pools' nodes, as openers and riders (guide-riders.ts).
      if (state.guided && guideRidersMutating(state, context, { solver: guide.solver, hints: guide.hints, plannable: (queue) => free(queue, context) }, placed)) compactActive(state);
    }
  }
  const seedMutating = (classQueue: ClassQueue): void => {
    const pod = classQueue.pods[classQueue.head];
    const result = openForSeedMutating(classQueue, state, context, placed);
    if (!result.ok && pod !== undefined) {
      // This pod fails here; its class-mates get their own attempt later.
      classQueue.head += 1;
      state.waiting -= 1;
      failures.set(pod, describeFailure(result.reasons, classQueue.podClass, context));
    }
  };
  // Pods that must open a lighter pool's nodes seed first, so those nodes carry riders (riders.ts).
  const riders = RiderSeeds.of(byValue, context);
  for (const item of waiting) {
    if (riders !== undefined) {
      for (let rider = riders.next(); rider !== undefined; rider = riders.next()) {
        state.deferral = rider.deferral;
        seedMutating(rider.seed);
        state.deferral = undefined;
      }
    }
    if (placed.has(item.key) || failures.has(item.key)) continue;
    const classQueue = state.queues.get(item.podClass.id);
    if (classQueue === undefined || remainingOf(classQueue) <= 0 || classQueue.pods[classQueue.head] !== item.key) continue;
    seedMutating(classQueue);
  }
  return failures;
}

function compactActive(state: PackState): void {
  for (let i = 0; i < state.activeByPool.length; i++) liveActive(state, i);
}

/**
 * Why no pool could launch a node for the pod: each pool's reason in the order tried, within
 * misses.ts's MAX_REASON_LENGTH (perPool). Worded only for a pod that stays
 * unschedulable once every relaxation is spent.
 */
function describeFailure(reasons: readonly Explanation[], podClass: PodClass, context: SolveContext): Explanation {
  return lazily(() => {
    const requested = context.dims.describe(podClass.requests);
    if (context.pools.length === 0) return `no NodePool exists to launch a node (requests ${requested})`;
    return perPool(`no NodePool can launch a node for it (requests ${requested}): `, reasons.map((why) => why()));
  });
}

