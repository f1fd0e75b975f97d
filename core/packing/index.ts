// The packing core: pending pods × NodePools × instance types → the cheapest feasible plan.
export { solve, podKey } from './solve';
export * from './input';
export type * from './plan';
export { solveFluid, type FluidResult } from './fluid';
