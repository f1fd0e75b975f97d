// The fluid LP (performance.md §4.2 LB0) and its dual prices.
//
//   primal: min Σ_t c_t·y_t  s.t.  Σ_t A_{t,r}·y_t ≥ D_r  (every resource r), y ≥ 0
//   dual:   max Σ_r D_r·u_r  s.t.  Σ_r A_{t,r}·u_r ≤ c_t  (every type t),     u ≥ 0
//
// The dual has one variable per resource (3–6) and u = 0 is feasible because prices are
// non-negative, so a plain tableau simplex from the slack basis solves it in a handful of
// pivots without a phase 1. u_r is the marginal price of resource r in an ideally packed
// fleet: the solver values a pod at u·R and a node type at how much of that value a
// concrete packing achieves per dollar. Rejected alternative: HiGHS (WebAssembly) — async
// loading and a native-ish dependency for a 3-variable LP that needs no more than this.

export interface FluidResult {
  /** Σ D_r u_r: a lower bound on the cost of any packing of the demand. */
  readonly bound: number;
  /** Dual price per unit of each resource (same units as the demand). */
  readonly prices: Float64Array;
}

const epsilon = 1e-12;

/**
 * @param capacities per type, the usable capacity vector A_t
 * @param costs per type, its price c_t (≥ 0)
 * @param demand the total demand D
 */
export function solveFluid(capacities: readonly Float64Array[], costs: readonly number[], demand: Float64Array): FluidResult {
  const dims = demand.length;
  const active: number[] = [];
  for (let r = 0; r < dims; r++) if ((demand[r] ?? 0) > 0) active.push(r);
  const prices = new Float64Array(dims);
  if (active.length === 0 || capacities.length === 0) return { bound: 0, prices };
  // Only the constraints that can bind: per capacity vector (active dimensions) the
  // cheapest, and none that a larger-or-equal, no dearer type implies (A_t ≤ A_u and
  // c_u ≤ c_t give A_t·u ≤ A_u·u ≤ c_u ≤ c_t for u ≥ 0). Several pools listing the same
  // catalog otherwise made a tableau of (5 × 800)² doubles: 128 MB (many-pools).
  const byVector = new Map<string, { capacity: Float64Array; cost: number }>();
  capacities.forEach((capacity, t) => {
    const key = active.map((r) => capacity[r] ?? 0).join(',');
    const cost = costs[t] ?? 0;
    const known = byVector.get(key);
    if (known === undefined || cost < known.cost) byVector.set(key, { capacity, cost });
  });
  const distinct = [...byVector.values()];
  const kept = distinct.filter((t, i) => !distinct.some((u, j) => j !== i && u.cost <= t.cost && active.every((r) => (u.capacity[r] ?? 0) >= (t.capacity[r] ?? 0))));
  return solveTableau(kept.map((t) => t.capacity), kept.map((t) => t.cost), demand, active);
}

function solveTableau(capacities: readonly Float64Array[], costs: readonly number[], demand: Float64Array, active: readonly number[]): FluidResult {
  const dims = demand.length;
  const prices = new Float64Array(dims);
  const types = capacities.length;
  if (types === 0) return { bound: 0, prices };

  // Scale every active resource by its demand so the objective is Σ u'_r (conditioning:
  // bytes and millicores differ by ten orders of magnitude).
  const n = active.length;
  const width = n + types + 1; // structural, slacks, rhs
  const tableau: Float64Array[] = [];
  for (let t = 0; t < types; t++) {
    const row = new Float64Array(width);
    const capacity = capacities[t];
    active.forEach((r, j) => {
      row[j] = ((capacity?.[r] ?? 0) / (demand[r] ?? 1));
    });
    row[n + t] = 1;
    row[width - 1] = costs[t] ?? 0;
    tableau.push(row);
  }
  // Objective row holds reduced costs of a maximisation: −1 for each structural column.
  const objective = new Float64Array(width);
  for (let j = 0; j < n; j++) objective[j] = -1;
  const basis = Array.from({ length: types }, (_, t) => n + t);

  for (let iteration = 0; iteration < 10_000; iteration++) {
    // Bland's rule (lowest index with a negative reduced cost) cannot cycle.
    let entering = -1;
    for (let j = 0; j < width - 1; j++) {
      if ((objective[j] ?? 0) < -epsilon) { entering = j; break; }
    }
    if (entering < 0) break;
    let leaving = -1;
    let bestRatio = Infinity;
    for (let t = 0; t < types; t++) {
      const row = tableau[t];
      const coefficient = row?.[entering] ?? 0;
      if (coefficient <= epsilon) continue;
      const ratio = (row?.[width - 1] ?? 0) / coefficient;
      if (ratio < bestRatio - epsilon || (Math.abs(ratio - bestRatio) <= epsilon && (basis[t] ?? 0) < (basis[leaving] ?? Infinity))) {
        bestRatio = ratio;
        leaving = t;
      }
    }
    // Unbounded would mean some resource costs nothing on every type: no bound from it.
    if (leaving < 0) return { bound: 0, prices };
    pivot(tableau, objective, leaving, entering);
    basis[leaving] = entering;
  }

  const scaled = new Float64Array(n);
  basis.forEach((variable, t) => {
    if (variable < n) scaled[variable] = tableau[t]?.[width - 1] ?? 0;
  });
  active.forEach((r, j) => {
    prices[r] = (scaled[j] ?? 0) / (demand[r] ?? 1);
  });
  return { bound: objective[width - 1] ?? 0, prices };
}

function pivot(tableau: Float64Array[], objective: Float64Array, row: number, column: number): void {
  const pivotRow = tableau[row];
  if (pivotRow === undefined) return;
  const divisor = pivotRow[column] ?? 1;
  for (let j = 0; j < pivotRow.length; j++) pivotRow[j] = (pivotRow[j] ?? 0) / divisor;
  const eliminate = (target: Float64Array): void => {
    const factor = target[column] ?? 0;
    if (factor === 0) return;
    for (let j = 0; j < target.length; j++) target[j] = (target[j] ?? 0) - factor * (pivotRow[j] ?? 0);
  };
  tableau.forEach((other, t) => {
    if (t !== row) eliminate(other);
  });
  eliminate(objective);
}
