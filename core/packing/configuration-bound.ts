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
// dimensions that can bind, or a finished branch and bound) and from the knapsack's LP
// relaxation elsewhere, which only makes ρ larger (the bound weaker, never invalid).
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
// or an untolerated pool's taint keeps pods out (many-pools). Topology is ignored by both.
// Existing nodes and in-flight claims are not modelled: the function declines them.
import { boundModel } from './bound';
import { buildClass, type ClassBuildContext } from './classes';
import { Dims, subtract, type Vec } from './dims';
import type { LinearSolver } from './linear-program';
import type { PackingInput } from './input';
import { PatternGenerator, type PatternProblem } from './patterns';
import { buildPools, daemonModels, type Pool, type PoolType } from './pools';
import { effectiveSpec, type EffectiveSpec } from './preferences';

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
}

/** The configuration LP bound (see the file comment), or undefined when the input has existing nodes or in-flight claims. */
export function configurationBound(input: PackingInput, solver: LinearSolver, options: ConfigurationBoundOptions = {}): ConfigurationBound | undefined {
  if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0) return undefined;
  const problem = options.requirements === true ? requirementsModel(input) : shapeModel(input);
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
  readonly items: readonly { readonly requests: Vec; readonly count: number; readonly admitted: Uint8Array; readonly exact: boolean }[];
}

/** The requirements model's pieces (see the file comment). */
export function poolItemModel(input: PackingInput): PoolItemModel {
  const names = new Set<string>(['pods']);
  const addAll = (record: Readonly<Record<string, string>> | undefined): void => { for (const name of Object.keys(record ?? {})) names.add(name); };
  input.pods.forEach((p) => addAll(p.requests));
  input.daemonSets.forEach((d) => addAll(d.requests));
  input.nodePools.forEach((p) => { addAll(p.limits); p.instanceTypes.forEach((t) => { addAll(t.allocatable); addAll(t.capacity); }); });
  const dims = new Dims(names);
  const pools = buildPools(input.nodePools, dims, daemonModels(input.daemonSets, dims));
  const poolTypes = pools.flatMap((pool) => pool.types.filter((type) => type.offerings.length > 0).map((type) => ({ pool, type })));
  const context: ClassBuildContext = { dims, pools, compatCache: new Map(), shapes: new Map() };
  const items = new Map<string, { requests: Vec; count: number; admitted: Uint8Array; exact: boolean }>();
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
    const key = `${requests.join(',')}|${admitted.join('')}|${exact ? 1 : 0}`;
    const item = items.get(key);
    if (item === undefined) items.set(key, { requests, count: 1, admitted, exact });
    else item.count += 1;
  });
  const sorted = [...items.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
  return { dims, pools, poolTypes, items: sorted };
}

/** Pods by request vector and admitted pool types; types per pool (see the file comment). */
function requirementsModel(input: PackingInput): PatternProblem {
  const { poolTypes, items: exactOrNot } = poolItemModel(input);
  // (the same groups as before `exact` existed: by requests and admitted types only)
  const merged = new Map<string, { requests: Vec; count: number; admitted: Uint8Array }>();
  for (const item of exactOrNot) {
    const key = `${item.requests.join(',')}|${item.admitted.join('')}`;
    const known = merged.get(key);
    if (known === undefined) merged.set(key, { requests: item.requests, count: item.count, admitted: item.admitted });
    else known.count += item.count;
  }
  const sorted = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
  return {
    items: sorted.map((item) => ({ requests: item.requests, count: item.count })),
    types: poolTypes.map(({ type }) => ({ capacity: subtract(type.allocatable, type.daemonOverhead), price: type.offerings[0]?.price ?? Infinity })),
    allowed: (k, t) => sorted[k]?.admitted[t] === 1,
  };
}
