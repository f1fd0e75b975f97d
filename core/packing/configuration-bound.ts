// The configuration LP (Gilmore–Gomory) lower bound, by column generation
// (performance.md §4.2, LB3 there). For benchmarks and tests: it needs an LP solver
// (linear-program.ts) and takes seconds, not the milliseconds of bound.ts.
//
//   master:  min Σ_p c_p·x_p  s.t.  Σ_p a_k,p·x_p ≥ n_k for every pod shape k,  x ≥ 0
//
// A column p is a pattern: a type t and how many pods a_k of each shape one node of t
// holds (integers that fit its allocatable, a_k ≤ n_k). Every plan is an integer solution
// of the master, so its LP value is a lower bound; unlike bound.ts's assignment-LP duals
// it knows that pods are indivisible (a 60 GiB pod leaves the rest of a 64 GiB node to
// others only in whole pods), which is where the AWS catalog's bound was loose.
//
// Column generation is patterns.ts. Validity does not depend on convergence (Farley's
// bound): if ρ ≥ max over all types and patterns of π·a / c_t, then π/ρ is feasible for
// the full master's dual, so Σ_k n_k·π_k / ρ ≤ the LP value ≤ any plan's cost. ρ comes
// from exact knapsack values where they are computed (a 2-D dynamic program over the
// dimensions that can bind, or a finished branch and bound) and elsewhere from upper
// bounds on them (the knapsack's LP relaxation, tightened at the last round by a Lagrangian
// relaxation that keeps one dimension integer), which only make ρ larger (the bound
// weaker, never invalid).
// Measured (aws-realistic 1k): 26.30 $/h, converged, against 26.17 for bound.ts — the
// assignment LP was already within 0.5% of the configuration LP on this catalog.
//
// Two models. By default the same as bound.ts (boundModel): pods by request vector, types
// by allocatable at their cheapest available offering, requirements and taints ignored (a
// relaxation). With `requirements: true` (requirementsModel) each type is a type *of a
// pool*, priced at the cheapest offering the pool allows, its capacity less the
// DaemonSets that run on it there, and a pod may go only on the pool types its node
// requirements and tolerations admit, under its most relaxed spec (any one of its required
// node-affinity terms, no preference, PreferNoSchedule tolerated): every plan the solver
// can make puts each pod on such a type, so every plan is still a solution of the master
// and the bound stays valid, now knowing that an arm64-only pod cannot use an amd64 type
// or an untolerated pool's taint keeps pods out (many-pools). Topology is ignored by both,
// but for one rule with `antiAffinity: true`: the largest set of pods that all repel one
// another by required hostname anti-affinity — one term (namespaces, selector) owned by
// exactly the pods it matches, as Karpenter's benchmark's `app=nginx` pods — holds at most
// one of them per node, in every plan kube-scheduler accepts (it checks the term both ways:
// the incoming pod's and the pods already on the node). The model adds one dimension, a
// slot: every type has one, each of those pods takes it whole, no other pod any of it. A
// plan's node holds at most one of them, so it is still a pattern, every plan is still a
// solution and the bound stays valid. It now knows that those pods force node counts (on
// Karpenter's input, 200 of every 1,000 pods on nodes of their own, each node's type a
// whole number of cpus). The dynamic program prices the slot exactly (patterns.ts keeps it
// off the grid).
// Existing nodes and in-flight claims are not modelled: the function declines them.
import { boundModel } from './bound';
import { buildClass, type ClassBuildContext } from './classes';
import { Dims, subtract, type Vec } from './dims';
import type { LinearSolver } from './linear-program';
import type { LabelSelector, PackingInput } from './input';
import { PatternGenerator, type PatternProblem } from './patterns';
import { buildPools, daemonModels, type Pool, type PoolType } from './pools';
import { effectiveSpec, type EffectiveSpec } from './preferences';
import { selectorMatches } from './selectors';
import { LabelKey } from '../scheduling/labels';

export interface ConfigurationBound {
  /** Never above the cost of any plan for the input. */
  readonly bound: number;
  /** The restricted master's last LP value: the configuration LP's value when converged. */
  readonly lp: number;
  readonly converged: boolean;
  readonly iterations: number;
  readonly columns: number;
}

export interface ConfigurationBoundOptions {
  /** Pricing rounds before giving up on convergence (the bound stays valid). */
  readonly maxIterations?: number;
  /** Largest grid for the exact 2-D dynamic program. */
  readonly maxStates?: number;
  /** Nodes per branch and bound before it counts as unfinished. */
  readonly searchNodes?: number;
  /** Pods only on the pool types their requirements and tolerations admit (see the file comment). */
  readonly requirements?: boolean;
  /** With requirements: one node each for the largest set of pods that repel one another (see the file comment). */
  readonly antiAffinity?: boolean;
}

/** The configuration LP bound (see the file comment), or undefined when the input has existing nodes or in-flight claims. */
export function configurationBound(input: PackingInput, solver: LinearSolver, options: ConfigurationBoundOptions = {}): ConfigurationBound | undefined {
  if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0) return undefined;
  const problem = options.requirements === true ? requirementsModel(input, options.antiAffinity === true ? mutuallyRepelling(input) : new Set()) : shapeModel(input);
  if (problem.items.length === 0) return { bound: 0, lp: 0, converged: true, iterations: 0, columns: 0 };
  const generator = new PatternGenerator(
    problem,
    solver,
    { mode: 'exact', maxIterations: options.maxIterations ?? 1000, dpBudget: options.maxStates ?? 4_000_000, fastBudget: 3_000_000, searchNodes: options.searchNodes ?? 200_000 },
  );
  try {
    const result = generator.generate();
    // Floating-point slack: the duals and sums carry rounding errors of ~1e-12 relative.
    return { ...result, bound: result.bound * (1 - 1e-9) };
  } finally {
    generator.dispose();
  }
}

function shapeModel(input: PackingInput): PatternProblem {
  const { shapes, types } = boundModel(input);
  return { items: shapes.map((s) => ({ requests: s.requests, count: s.count })), types: types.map((t) => ({ capacity: t.allocatable, price: t.price })) };
}

/** The most relaxed specs a pod can be planned with: one per required node term (they are ORed), no preferences. */
function relaxedSpecs(spec: EffectiveSpec): EffectiveSpec[] {
  const loosest = { ...spec, preferredNode: [], preferredAffinity: [], preferredAntiAffinity: [], preferredSpread: [], toleratesPreferNoSchedule: true };
  return spec.nodeTerms.length <= 1 ? [loosest] : spec.nodeTerms.map((term) => ({ ...loosest, nodeTerms: [term] }));
}

/** Pool types (types with an allowed offering, per pool) and pods grouped by request vector and admitted pool types. */
export interface PoolItemModel {
  readonly dims: Dims;
  readonly pools: readonly Pool[];
  readonly poolTypes: readonly { readonly pool: Pool; readonly type: PoolType }[];
  /**
   * Sorted by key; `admitted[t]` is 1 when pool type t admits the pod under one of its most
   * relaxed specs. `exact` when that is the pod's only spec (nothing for a planner to relax:
   * at most one required node term, no preference, no PreferNoSchedule taint it does not
   * tolerate in any pool) and it has no pod (anti-)affinity, topology spread or host port,
   * so `admitted` is exactly where a new node can be opened for it.
   */
  readonly items: readonly PoolItem[];
}

export interface PoolItem {
  readonly requests: Vec;
  readonly count: number;
  readonly admitted: Uint8Array;
  readonly exact: boolean;
  /** Pods of `apart` (poolItemModel): one per node. */
  readonly apart: boolean;
}

/**
 * The pods (by index) of the largest group no two of which may share a node: one required
 * hostname anti-affinity term (its namespaces and selector) owned by exactly the pods it
 * matches. Terms with a non-empty namespaceSelector are skipped (namespace labels are not
 * known here), and so is a missing selector (it matches nothing).
 */
export function mutuallyRepelling(input: PackingInput): ReadonlySet<number> {
  const owners = new Map<string, { namespaces: ReadonlySet<string> | undefined; selector: LabelSelector; pods: Set<number> }>();
  input.pods.forEach((pod, i) => {
    for (const term of pod.podAntiAffinity.required) {
      if (term.topologyKey !== LabelKey.hostname || term.labelSelector === undefined) continue;
      const everywhere = term.namespaceSelector !== undefined;
      if (everywhere && (Object.keys(term.namespaceSelector?.matchLabels ?? {}).length > 0 || (term.namespaceSelector?.matchExpressions ?? []).length > 0)) continue;
      const namespaces = everywhere ? undefined : new Set(term.namespaces ?? [pod.namespace]);
      const key = JSON.stringify([namespaces === undefined ? null : [...namespaces].sort(), term.labelSelector]);
      const group = owners.get(key) ?? { namespaces, selector: term.labelSelector, pods: new Set<number>() };
      group.pods.add(i);
      owners.set(key, group);
    }
  });
  let best: ReadonlySet<number> = new Set();
  for (const key of [...owners.keys()].sort()) {
    const group = owners.get(key);
    if (group === undefined || group.pods.size <= best.size) continue;
    const matchesExactlyOwners = input.pods.every((pod, i) => {
      const matches = (group.namespaces === undefined || group.namespaces.has(pod.namespace)) && selectorMatches(group.selector, pod.labels);
      return matches === group.pods.has(i);
    });
    if (matchesExactlyOwners) best = group.pods;
  }
  return best;
}

/** The requirements model's pieces (see the file comment); pods of `apart` are items of their own. */
export function poolItemModel(input: PackingInput, apart: ReadonlySet<number> = new Set()): PoolItemModel {
  const names = new Set<string>(['pods']);
  const addAll = (record: Readonly<Record<string, string>> | undefined): void => { for (const name of Object.keys(record ?? {})) names.add(name); };
  input.pods.forEach((p) => addAll(p.requests));
  input.daemonSets.forEach((d) => addAll(d.requests));
  input.nodePools.forEach((p) => { addAll(p.limits); p.instanceTypes.forEach((t) => { addAll(t.allocatable); addAll(t.capacity); }); });
  const dims = new Dims(names);
  const pools = buildPools(input.nodePools, dims, daemonModels(input.daemonSets, dims));
  const poolTypes = pools.flatMap((pool) => pool.types.filter((type) => type.offerings.length > 0).map((type) => ({ pool, type })));
  const context: ClassBuildContext = { dims, pools, compatCache: new Map(), shapes: new Map() };
  const items = new Map<string, { requests: Vec; count: number; admitted: Uint8Array; exact: boolean; apart: boolean }>();
  const preferNoSchedule = input.nodePools.some((pool) => [...pool.taints, ...pool.startupTaints].some((taint) => taint.effect === 'PreferNoSchedule'));
  input.pods.forEach((pod, i) => {
    const admitted = new Uint8Array(poolTypes.length);
    let requests: Vec | undefined;
    const spec = effectiveSpec(pod);
    const exact = spec.nodeTerms.length <= 1 && spec.preferredNode.length === 0 && spec.preferredAffinity.length === 0 && spec.preferredAntiAffinity.length === 0
      && spec.preferredSpread.length === 0 && spec.affinity.length === 0 && spec.antiAffinity.length === 0 && spec.spread.length === 0
      && pod.hostPorts.length === 0 && (spec.toleratesPreferNoSchedule || !preferNoSchedule);
    for (const relaxed of relaxedSpecs(spec)) {
      const podClass = buildClass(i, pod, relaxed, context);
      requests = podClass.requests;
      poolTypes.forEach(({ pool, type }, t) => {
        const feasibility = podClass.feasibility[pool.order];
        if (feasibility?.ok === true && feasibility.mask[type.index] === 1) admitted[t] = 1;
      });
    }
    if (requests === undefined) return;
    const key = `${requests.join(',')}|${admitted.join('')}|${exact ? 1 : 0}|${apart.has(i) ? 1 : 0}`;
    const item = items.get(key);
    if (item === undefined) items.set(key, { requests, count: 1, admitted, exact, apart: apart.has(i) });
    else item.count += 1;
  });
  const sorted = [...items.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
  return { dims, pools, poolTypes, items: sorted };
}

/**
 * Pods by request vector and admitted pool types; types per pool; and with pods in
 * `apart`, the one-per-node slot (see the file comment).
 */
function requirementsModel(input: PackingInput, apart: ReadonlySet<number>): PatternProblem {
  const { poolTypes, items: exactOrNot } = poolItemModel(input, apart);
  // (the same groups as before `exact` existed: by requests, admitted types and apart)
  const merged = new Map<string, { requests: Vec; count: number; admitted: Uint8Array; apart: boolean }>();
  for (const item of exactOrNot) {
    const key = `${item.requests.join(',')}|${item.admitted.join('')}|${item.apart ? 1 : 0}`;
    const known = merged.get(key);
    if (known === undefined) merged.set(key, { requests: item.requests, count: item.count, admitted: item.admitted, apart: item.apart });
    else known.count += item.count;
  }
  const sorted = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
  const base = poolTypes.map(({ type }) => ({ capacity: subtract(type.allocatable, type.daemonOverhead), price: type.offerings[0]?.price ?? Infinity }));
  if (apart.size === 0) {
    return {
      items: sorted.map((item) => ({ requests: item.requests, count: item.count })),
      types: base,
      allowed: (k, t) => sorted[k]?.admitted[t] === 1,
    };
  }
  // One more dimension, the slot: every node has one and each apart pod takes it whole.
  const withSlot = (v: Vec, slot: number): Vec => Float64Array.from([...v, slot]);
  return {
    items: sorted.map((item) => ({ requests: withSlot(item.requests, item.apart ? 1 : 0), count: item.count })),
    types: base.map((t) => ({ capacity: withSlot(t.capacity, 1), price: t.price })),
    allowed: (k, t) => sorted[k]?.admitted[t] === 1,
  };
}
