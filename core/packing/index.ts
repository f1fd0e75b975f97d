// The packing core: pending pods × NodePools × instance types → the cheapest feasible plan.
export { solve, podKey, type SolveOptions } from './solve';
export type { LinearSolver, LpModel, LpColumn, LpResult } from './linear-program';
export * from './input';
export type * from './plan';
export { solveFluid, type FluidResult } from './fluid';
