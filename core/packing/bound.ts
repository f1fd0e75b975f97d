// Lower bounds on the cost of any plan (performance.md §4.2), for benchmarks and tests.
//
// LB0, the fluid LP, lets any resource of any type serve any pod. On the AWS catalog that
// is far from reachable: t4g.nano has 2 cpu and no memory left after kubelet overhead, so
// LB0 buys cpu from nanos no pod fits on. Two valid strengthenings:
//
// 1. The fluid LP over only the types that can hold at least one pod: an optimal plan
//    never launches a node that holds nothing, so it is feasible for the restricted LP.
// 2. Feasible duals of the assignment LP (LB2: pods of class k only on types that fit
//    them). LB2's dual is  max Σ_k n_k v_k  s.t.  A_t·w_t ≤ c_t for every type t and
//    v_k ≤ R_k·w_t for every type t that fits k, with w ≥ 0. Any choice of per-type
//    prices w_t with A_t·w_t ≤ c_t gives the bound Σ_k n_k min_{t fits k} R_k·w_t.
//    Two families are tried: w_t = u / efficiency_t (the fluid prices u scaled until type
//    t is tight), and w_t,r = c_t·λ_t,r / A_t,r for weights λ_t on the simplex (each
//    type's price split over its resources), from a grid of shared λ and then per type by
//    supergradient ascent, which approaches LB2 itself (aws-realistic 1k: LB0 19.20, this
//    bound 25.89; 3,000 iterations instead of 300 reach only 25.95).
// 3. LB3 (roundCapacities): every capacity above is first rounded down to what sums of
//    the requests that fit can reach (gcd rounding); an integer argument, valid for any
//    plan, that raises all of the above (aws-realistic 1k: 25.89 → 26.18).
// Existing nodes and sized in-flight claims offer free capacity at no cost: LB0 subtracts
// it from the demand, and the duals pay for it (see `corrected` below); in-flight claims
// of unknown size leave LB0 alone.
// Rejected alternative: solving LB2 with a simplex. It has classes × types variables
// (150 × 800 on the AWS catalog); a dense tableau that size is slower than the solve it
// measures, while the ascent's iterates are valid bounds at every step.
import { Dims, gcd, lessOrEqual as fits, subtract, type Vec } from './dims';
import { solveFluid } from './fluid';
import type { PackingInput } from './input';
import type { Plan } from './plan';
import { buildPools } from './pools';

export interface Shape {
  readonly requests: Vec;
  count: number;
}

export interface BoundType {
  readonly allocatable: Vec;
  readonly price: number;
}

/** Pods by distinct request vector (with pods = 1) and types by distinct allocatable, cheapest available offering. */
export function boundModel(input: PackingInput): { dims: Dims; shapes: Shape[]; types: BoundType[] } {
  const names = new Set<string>(['pods']);
  input.pods.forEach((p) => Object.keys(p.requests).forEach((n) => names.add(n)));
  input.nodePools.forEach((p) => p.instanceTypes.forEach((t) => Object.keys(t.allocatable).forEach((n) => names.add(n))));
  input.existingNodes.forEach((n) => { Object.keys(n.allocatable).forEach((k) => names.add(k)); n.pods.forEach((p) => Object.keys(p.requests).forEach((k) => names.add(k))); });
  input.inFlightClaims.forEach((c) => { Object.keys(c.allocatable ?? {}).forEach((k) => names.add(k)); c.pods.forEach((p) => Object.keys(p.requests).forEach((k) => names.add(k))); });
  const dims = new Dims(names);
  const byKey = new Map<string, Shape>();
  for (const pod of input.pods) {
    const requests = dims.vector({ ...pod.requests, pods: '1' }, 'up');
    const key = requests.join(',');
    const shape = byKey.get(key);
    if (shape === undefined) byKey.set(key, { requests, count: 1 });
    else shape.count += 1;
  }
  const shapes = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, shape]) => shape);
  // The same type in several pools is one column: keep the cheapest price per allocatable.
  const byShape = new Map<string, BoundType>();
  for (const pool of input.nodePools) {
    for (const type of pool.instanceTypes) {
      const available = type.offerings.filter((o) => o.available);
      if (available.length === 0) continue;
      const allocatable = dims.vector(type.allocatable, 'down');
      const price = Math.min(...available.map((o) => o.price));
      const key = allocatable.join(',');
      const known = byShape.get(key);
      if (known === undefined || price < known.price) byShape.set(key, { allocatable, price });
    }
  }
  const types = [...byShape.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, type]) => type);
  return { dims, shapes, types };
}

/** LB0 over the demand, minus the free capacity of existing nodes and in-flight claims. */
export function fluidBound(input: PackingInput): number {
  const { dims, shapes, types } = boundModel(input);
  const demand = dims.zero();
  for (const shape of shapes) for (let r = 0; r < demand.length; r++) demand[r] = (demand[r] ?? 0) + shape.count * (shape.requests[r] ?? 0);
  subtractFreeCapacity(input, dims, demand);
  return solveFluid(types.map((t) => t.allocatable), types.map((t) => t.price), demand).bound;
}

function subtractFreeCapacity(input: PackingInput, dims: Dims, demand: Vec): boolean {
  let any = false;
  const nodes = [...input.existingNodes, ...input.inFlightClaims.filter((c) => c.allocatable !== undefined)];
  for (const node of nodes) {
    const used = dims.zero();
    for (const pod of node.pods) {
      const v = dims.vector({ ...pod.requests, pods: '1' }, 'up');
      for (let r = 0; r < used.length; r++) used[r] = (used[r] ?? 0) + (v[r] ?? 0);
    }
    const free = subtract(dims.vector(node.allocatable, 'down'), used);
    for (let r = 0; r < demand.length; r++) demand[r] = Math.max(0, (demand[r] ?? 0) - Math.max(0, free[r] ?? 0));
    any = true;
  }
  // In-flight claims without a known allocatable could be any size: no bound beyond zero.
  if (input.inFlightClaims.some((c) => c.allocatable === undefined)) demand.fill(0);
  return any || input.inFlightClaims.length > 0;
}

/** The strongest of the bounds above (see the file comment); never above the optimum. */
export function lowerBound(input: PackingInput, options: { readonly integerRounding?: boolean } = {}): number {
  const lb0 = fluidBound(input);
  // In-flight claims of unknown size could hold anything: nothing to add to LB0 then.
  if (input.inFlightClaims.some((c) => c.allocatable === undefined)) return lb0;
  const { dims, shapes, types: rawTypes } = boundModel(input);
  if (shapes.length === 0) return 0;
  // Integer rounding (LB3, see roundCapacities): same fits, smaller capacities, still valid.
  // (integerRounding: false gives the bound without LB3, for tests that compare the two.)
  const rounding = options.integerRounding ?? true;
  const types = rounding ? roundCapacities(rawTypes, shapes) : rawTypes;
  const fixed = rounding ? roundFree(freeCapacities(input, dims), shapes) : freeCapacities(input, dims);
  const fitting = shapes.map((shape) => types.filter((t) => fits(shape.requests, t.allocatable)));
  // A pod that fits no type makes every plan leave it out: bound the others only.
  const hosting = types.filter((t) => shapes.some((shape) => fits(shape.requests, t.allocatable)));
  const demand = dims.zero();
  for (const shape of shapes) {
    if (!types.some((t) => fits(shape.requests, t.allocatable))) continue;
    for (let r = 0; r < demand.length; r++) demand[r] = (demand[r] ?? 0) + shape.count * (shape.requests[r] ?? 0);
  }
  const fluid = solveFluid(hosting.map((t) => t.allocatable), hosting.map((t) => t.price), demand);
  let best = lb0;
  if (fixed.length === 0) best = Math.max(best, fluid.bound);

  // Family 1: w_t = u / efficiency_t.
  const efficiency = (t: BoundType): number => {
    let value = 0;
    for (let r = 0; r < t.allocatable.length; r++) value += (fluid.prices[r] ?? 0) * (t.allocatable[r] ?? 0);
    return t.price > 0 ? value / t.price : Infinity;
  };
  let scaled = 0;
  shapes.forEach((shape, k) => {
    const candidates = fitting[k] ?? [];
    if (candidates.length === 0) return;
    const maxEfficiency = Math.max(...candidates.map(efficiency));
    let value = 0;
    for (let r = 0; r < shape.requests.length; r++) value += (fluid.prices[r] ?? 0) * (shape.requests[r] ?? 0);
    if (maxEfficiency > 0 && Number.isFinite(maxEfficiency)) scaled += shape.count * (value / maxEfficiency);
  });
  if (fixed.length === 0) best = Math.max(best, scaled);

  // Family 2: w_t,r = c_t·λ_t,r / A_t,r with λ_t on the simplex of the dimensions with
  // demand (every such w_t is tight for type t, so every λ is dual-feasible). First one λ
  // shared by all types, on a grid; then the best start is improved per type by projected
  // supergradient ascent on the concave Σ_k n_k min_t R_k·w_t. Any iterate is a valid
  // bound; more iterations only tighten it towards LB2.
  const active: number[] = [];
  for (let r = 0; r < demand.length; r++) if ((demand[r] ?? 0) > 0) active.push(r);
  const used = hosting;
  const index = new Map(used.map((t, i) => [t, i]));
  // shares[k] lists, per fitting type, c_t · R_k,r / A_t,r over the active dimensions.
  const shares = shapes.map((shape, k) => (fitting[k] ?? []).map((t) => ({
    type: index.get(t) ?? 0,
    share: active.map((r) => ((shape.requests[r] ?? 0) === 0 ? 0 : (t.price * (shape.requests[r] ?? 0)) / Math.max(1e-300, t.allocatable[r] ?? 0))),
  })));
  const evaluate = (lambda: readonly Float64Array[], gradient?: Float64Array[]): number => {
    let total = 0;
    shapes.forEach((shape, k) => {
      const options = shares[k] ?? [];
      let min = Infinity;
      let argmin: (typeof options)[number] | undefined;
      for (const option of options) {
        const weights = lambda[option.type];
        let value = 0;
        for (let j = 0; j < active.length; j++) value += (weights?.[j] ?? 0) * (option.share[j] ?? 0);
        if (value < min) {
          min = value;
          argmin = option;
        }
      }
      if (argmin === undefined) return;
      total += shape.count * min;
      const g = gradient?.[argmin.type];
      if (g !== undefined) for (let j = 0; j < active.length; j++) g[j] = (g[j] ?? 0) + shape.count * (argmin.share[j] ?? 0);
    });
    return total;
  };
  let start: Float64Array[] = used.map((t) => {
    const weights = new Float64Array(active.length);
    let sum = 0;
    active.forEach((r, j) => { weights[j] = (fluid.prices[r] ?? 0) * (t.allocatable[r] ?? 0); sum += weights[j] ?? 0; });
    if (sum > 0) for (let j = 0; j < weights.length; j++) weights[j] = (weights[j] ?? 0) / sum;
    else weights.fill(1 / Math.max(1, active.length));
    return weights;
  });
  // Free capacity on existing nodes (and sized in-flight claims) hosts pods at no cost. In
  // the dual each such node e gets prices w_e with R_k·w_e ≥ v_k for every pod k fitting
  // it, and the bound pays F_e·w_e. Any type t at least as large as F_e in every resource
  // qualifies (every pod fitting e fits t, so v_k ≤ R_k·w_t): the cheapest such F_e·w_t.
  const dominating = fixed.map((node) => ({
    ...node,
    hosts: shapes.some((shape) => fits(shape.requests, node.free)),
    types: used.flatMap((t, i) => (fits(node.free, t.allocatable) ? [i] : [])),
  }));
  if (dominating.some((node) => node.hosts && node.types.length === 0)) return best;
  const corrected = (lambda: readonly Float64Array[], value: number): number => {
    let total = value;
    for (const node of dominating) {
      if (!node.hosts) continue;
      let min = Infinity;
      for (const i of node.types) {
        const t = used[i];
        const weights = lambda[i];
        if (t === undefined || weights === undefined) continue;
        let paid = 0;
        active.forEach((r, j) => { paid += ((weights[j] ?? 0) * t.price * (node.free[r] ?? 0)) / Math.max(1e-300, t.allocatable[r] ?? 0); });
        min = Math.min(min, paid);
      }
      total -= node.count * min;
    }
    return total;
  };
  let startValue = evaluate(start);
  for (const lambda of simplexGrid(active.length, active.length <= 3 ? 20 : active.length <= 5 ? 6 : 1)) {
    const shared = used.map(() => Float64Array.from(lambda));
    const value = evaluate(shared);
    if (value > startValue) {
      startValue = value;
      start = shared;
    }
    best = Math.max(best, corrected(shared, value));
  }
  best = Math.max(best, corrected(start, startValue));
  const work = shapes.length * used.length * Math.max(1, active.length);
  const iterations = Math.min(300, Math.floor(5e7 / Math.max(1, work)));
  let lambda = start;
  for (let iteration = 0; iteration < iterations; iteration++) {
    const gradient = used.map(() => new Float64Array(active.length));
    const value = evaluate(lambda, gradient);
    best = Math.max(best, corrected(lambda, value));
    let scale = 0;
    for (const g of gradient) for (const v of g) scale = Math.max(scale, Math.abs(v));
    if (scale === 0) break;
    const step = 0.5 / Math.sqrt(iteration + 1) / scale;
    lambda = lambda.map((weights, t) => projectToSimplex(weights.map((w, j) => w + step * (gradient[t]?.[j] ?? 0))));
  }
  best = Math.max(best, corrected(lambda, evaluate(lambda)));
  return best;
}

/**
 * LB3, integer rounding of capacities. Requests and capacities are exact integers (bytes
 * and milli-units, dims.ts). Let g_t,r be the gcd of R_k,r over the classes k that fit
 * type t. Every pod a node of type t can hold is of such a class, so in any plan the load
 * of resource r on that node is a sum of multiples of g_t,r that is ≤ A_t,r, hence
 * ≤ Â_t,r = ⌊A_t,r / g_t,r⌋·g_t,r. Every integer plan (an optimal one in particular) thus
 * respects the capacities Â too, and every relaxation above built on Â (the fluid LP over
 * hosting types, the assignment LP and any feasible dual of it) stays ≤ the optimum.
 * "Fits" is unchanged: R_k,r is a multiple of g_t,r and ≤ A_t,r, so it is ≤ Â_t,r. The
 * same holds for the free capacity of an existing node with the gcd over every class (it
 * divides g_t,r, and the node only holds pods). It bites where requests are coarse and
 * capacities odd: a .large after kubelet overhead offers 1930m cpu, of which pods in
 * steps of 250m use at most 1750m (−9%), and a t4g.2xlarge's 28.57 GiB hold at most 28
 * GiB of whole-GiB pods. LB0 (fluidBound) is left as the textbook fluid bound.
 */
function roundCapacities(types: readonly BoundType[], shapes: readonly Shape[]): BoundType[] {
  return types.map((type) => {
    const step = new Float64Array(type.allocatable.length);
    for (const shape of shapes) {
      if (!fits(shape.requests, type.allocatable)) continue;
      for (let r = 0; r < step.length; r++) step[r] = gcd(step[r] ?? 0, shape.requests[r] ?? 0);
    }
    return { ...type, allocatable: roundDown(type.allocatable, step) };
  });
}

function roundFree(nodes: readonly { free: Vec; count: number }[], shapes: readonly Shape[]): { free: Vec; count: number }[] {
  const step = new Float64Array(nodes[0]?.free.length ?? 0);
  for (const shape of shapes) for (let r = 0; r < step.length; r++) step[r] = gcd(step[r] ?? 0, shape.requests[r] ?? 0);
  return nodes.map((node) => ({ ...node, free: roundDown(node.free, step) }));
}

/** ⌊A / g⌋·g per dimension; where no class requests anything (g = 0) A stays. */
function roundDown(capacity: Vec, step: Vec): Vec {
  return capacity.map((a, r) => {
    const g = step[r] ?? 0;
    return g > 0 && Number.isSafeInteger(a) && Number.isSafeInteger(g) ? Math.floor(a / g) * g : a;
  });
}

/** Free capacity of existing nodes and sized in-flight claims, grouped by equal vectors. */
function freeCapacities(input: PackingInput, dims: Dims): { free: Vec; count: number }[] {
  const groups = new Map<string, { free: Vec; count: number }>();
  const nodes = [...input.existingNodes, ...input.inFlightClaims.filter((c) => c.allocatable !== undefined)];
  for (const node of nodes) {
    const free = dims.vector(node.allocatable, 'down');
    for (const pod of node.pods) {
      const v = dims.vector({ ...pod.requests, pods: '1' }, 'up');
      for (let r = 0; r < free.length; r++) free[r] = Math.max(0, (free[r] ?? 0) - (v[r] ?? 0));
    }
    const key = free.join(',');
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { free, count: 1 });
    else group.count += 1;
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
}

/** Euclidean projection onto { x ≥ 0, Σ x = 1 } (sort-based, Held–Wolfe–Crowder). */
function projectToSimplex(point: Float64Array): Float64Array {
  const sorted = [...point].sort((a, b) => b - a);
  let sum = 0;
  let theta = 0;
  for (let i = 0; i < sorted.length; i++) {
    sum += sorted[i] ?? 0;
    const candidate = (sum - 1) / (i + 1);
    if ((sorted[i] ?? 0) - candidate > 0) theta = candidate;
  }
  return point.map((v) => Math.max(0, v - theta));
}

/** Points of the simplex in `dimensions` coordinates with denominator `steps`, plus its vertices. */
function simplexGrid(dimensions: number, steps: number): number[][] {
  const points: number[][] = [];
  const visit = (prefix: number[], left: number): void => {
    if (prefix.length === dimensions - 1) {
      points.push([...prefix, left].map((v) => v / steps));
      return;
    }
    for (let v = 0; v <= left; v++) visit([...prefix, v], left - v);
  };
  if (dimensions > 0) visit([], steps);
  return points;
}

/**
 * The bound for what a plan's new nodes cost: the pods it put on new NodeClaims, on the
 * types the pools it opened them in may launch (each pool's requirements applied to its
 * types, zones and capacity types), with no existing capacity. No set of new nodes in those
 * pools holds those pods for less. Against `lowerBound` over the whole input it does not
 * let a pod use a pool it cannot (a spot-only pool, another team's taints) or another
 * node's free room, which made that bound uninformative for one command's pods.
 */
export function newNodesBound(input: PackingInput, plan: Plan): number {
  const placed = new Set(plan.nodeClaims.flatMap((c) => c.pods));
  if (placed.size === 0) return 0;
  const opened = input.nodePools.filter((p) => plan.nodeClaims.some((c) => c.nodePool === p.name));
  // the pool model only decides which types and offerings each pool admits; sizes are not used here
  const admitted = new Map(buildPools(opened, new Dims(['pods']), []).map((pool) => [pool.name, new Map(pool.types.map((t) => [t.name, t.offerings]))]));
  const nodePools = opened.map((pool) => {
    const types = admitted.get(pool.name) ?? new Map();
    return {
      ...pool,
      instanceTypes: pool.instanceTypes
        .filter((t) => types.has(t.name))
        .map((t) => ({ ...t, offerings: t.offerings.filter((o) => o.available && (types.get(t.name) ?? []).some((a: { zone: string; capacityType: string }) => a.zone === o.zone && a.capacityType === o.capacityType)) })),
    };
  });
  return lowerBound({ ...input, pods: input.pods.filter((p) => placed.has(`${p.namespace}/${p.name}`)), nodePools, existingNodes: [], inFlightClaims: [] });
}
