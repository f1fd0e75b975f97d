// Adapter: core/packing/linear-program.ts's LinearSolver on HiGHS (highs-js, WebAssembly).
// Loading compiles the WebAssembly module (asynchronous, once per process); every solve
// after that is synchronous, single-threaded and deterministic.
import loadHighs from 'highs';
import type { LinearSolver, LpColumn, LpModel, LpResult } from '../../core/packing/linear-program';

type Highs = Awaited<ReturnType<typeof loadHighs>>;

let loading: Promise<Highs> | undefined;

/** The process-wide HiGHS instance, wrapped as a LinearSolver. */
export async function loadLinearSolver(): Promise<LinearSolver> {
  loading ??= loadHighs();
  const highs = await loading;
  return {
    infinity: highs.infinity,
    createModel: (): LpModel => {
      const model = highs.createModel();
      model.options.set({ output_flag: false });
      let rows = 0;
      let columns = 0;
      return {
        addRow: (lower: number, upper: number): void => {
          model.addRow(lower, upper, { indices: [], values: [] });
          rows += 1;
        },
        addColumn: (column: LpColumn): void => {
          model.addCol(column.cost, column.lower, column.upper, { indices: [...column.rows], values: [...column.values] });
          columns += 1;
        },
        changeRowBounds: (row: number, lower: number, upper: number): void => {
          model.changeRowBounds(row, lower, upper);
        },
        solve: (): LpResult => {
          model.run();
          const optimal = model.getModelStatus() === highs.constants.modelStatus.optimal;
          if (!optimal) return { optimal, objective: NaN, rowDuals: new Float64Array(rows), columnValues: new Float64Array(columns) };
          const solution = model.getSolution();
          return { optimal, objective: model.getObjectiveValue(), rowDuals: Float64Array.from(solution.rowDual), columnValues: Float64Array.from(solution.colValue) };
        },
        dispose: (): void => model.dispose(),
      };
    },
  };
}
