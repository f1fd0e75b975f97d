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
// Same model as bound.ts (boundModel): pods by request vector, types by allocatable at
// their cheapest available offering, requirements and taints ignored (a relaxation).
// Existing nodes and in-flight claims are not modelled: the function declines them.
import { boundModel } from './bound';
import type { LinearSolver } from './linear-program';
import type { PackingInput } from './input';
import { PatternGenerator } from './patterns';

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
}

/** The configuration LP bound (see the file comment), or undefined when the input has existing nodes or in-flight claims. */
export function configurationBound(input: PackingInput, solver: LinearSolver, options: ConfigurationBoundOptions = {}): ConfigurationBound | undefined {
  if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0) return undefined;
  const { shapes, types } = boundModel(input);
  if (shapes.length === 0) return { bound: 0, lp: 0, converged: true, iterations: 0, columns: 0 };
  const generator = new PatternGenerator(
    { items: shapes.map((s) => ({ requests: s.requests, count: s.count })), types: types.map((t) => ({ capacity: t.allocatable, price: t.price })) },
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
