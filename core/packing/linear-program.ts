// The port through which core/ uses a linear-programming solver. core/ stays pure: the
// caller loads a solver (activities/packing/highs.ts adapts HiGHS, compiled to
// WebAssembly, whose loading is asynchronous) and passes it in; everything here is
// synchronous.

/** One column: its objective coefficient, bounds and non-zero entries by row index. */
export interface LpColumn {
  readonly cost: number;
  readonly lower: number;
  readonly upper: number;
  readonly rows: readonly number[];
  readonly values: readonly number[];
}

export interface LpResult {
  /** True when the solver proved optimality; the other fields are meaningless otherwise. */
  readonly optimal: boolean;
  readonly objective: number;
  /** One dual value per row, in the solver's sign convention for a minimisation. */
  readonly rowDuals: Float64Array;
  readonly columnValues: Float64Array;
}

/** A minimisation model that grows by rows and columns and is solved again after each change (warm). */
export interface LpModel {
  addRow(lower: number, upper: number): void;
  addColumn(column: LpColumn): void;
  changeRowBounds(row: number, lower: number, upper: number): void;
  solve(): LpResult;
  /** Frees the solver's memory; the model is unusable afterwards. */
  dispose(): void;
}

export interface LinearSolver {
  readonly infinity: number;
  createModel(): LpModel;
}
