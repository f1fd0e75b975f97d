// `npm run bench:disruption` (issue 15): consolidation's decision time and what it achieves,
// each scenario in its own child process (peak RSS is that scenario's). Simulations go
// through the packing activity's own planning code (activities/provisioner/plan-view.ts:
// world → assemble → solve on a solver thread with the LP guide → moveDecision); the
// cluster is in memory (disruption-cluster.ts), so the API reads are not timed.
//
// decision-1k, decision-5k: one round as workflows/disruption.ts runs it on a cluster with
// many underused nodes (disruption-scenarios.ts underusedCluster; budget 10 %):
// disruptionRound on the snapshot, the multi-node binary search, and — only when that finds
// nothing, as in the workflow — up to consolidationTries (3) single-node simulations.
// "round s" is the median of --repeat rounds after one untimed warm-up round (a packing
// worker is warm); "3 singles s" times three single-node simulations on their own (what a
// round costs when multi-node finds nothing: multi s + 3 singles s).
//
// fragmented-500: 4,200 pods packed by autonode's solver onto 498 nodes, then half the pods
// deleted at random (seeded), every node kept. Consolidation runs to a fixed point (budget
// 100 %: a smaller budget only spreads the same commands over more rounds), each command
// carried out on the in-memory cluster at once, with
//   autonode    — the workflow's rules: multi-node, then single-node (3 per round, rejections
//                 remembered), many-to-many on (5 %);
//   autonode 1:1 — the same with many-to-many off (Karpenter's command shapes, autonode's planner);
//   Karpenter   — karpenter-consolidation.ts, a port of v1.15.0's consolidation simulating
//                 with the Karpenter scheduler port (karpenter-loop.ts).
// Each is compared with the lower bound for the pods that remain (bound.ts, and the
// configuration LP with pool requirements, as run.ts does).
//   npm run bench:disruption                         every scenario
//   npm run bench:disruption -- decision             those whose name contains it
//   --repeat N (default 3)   --max-rounds N (default 2000)
//   BENCH_SKIP_KARPENTER=1 skips the Karpenter port; BENCH_SKIP_CONFIGURATION=1 the configuration LP.
import { fork } from 'node:child_process';
import { disruptionRound, type ConsolidationSettings } from '../../core/disruption';
import { lowerBound } from '../../core/packing/bound';
import { configurationBound } from '../../core/packing/configuration-bound';
import type { LinearSolver, PackingInput, Plan } from '../../core/packing';
import { loadLinearSolver } from '../../activities/packing/highs';
import { createSolverThread, type SolverThread } from '../../activities/provisioner/solver-thread';
import { multiNodeSearch, simulateMove } from '../../activities/provisioner/plan-view';
import { BENCH_NOW, costOf, planningOf, roundInputOf, worldOf, type SimCluster } from './disruption-cluster';
import { autonodeFixedPoint, autonodeRound, emptyMemory, type FixedPoint } from './disruption-autonode';
import { fragmentedCluster, pendingInputOf, underusedCluster } from './disruption-scenarios';
import { karpenterFixedPoint, type KarpenterFixedPoint } from './karpenter-consolidation';

const MANY_TO_MANY: ConsolidationSettings = { spotToSpot: false, manyToMany: { minSavings: 0.05 } };
const ONE_TO_ONE: ConsolidationSettings = { spotToSpot: false };
const TRIES = 3;

interface DecisionRow {
  kind: 'decision';
  scenario: string;
  nodes: number;
  pods: number;
  candidates: number;
  multiCandidates: number;
  roundSeconds: number;
  runs: number[];
  coldSeconds: number;
  /** solver time inside the median round (the rest: assembling, judging, the round itself) */
  solveSeconds: number;
  multiSeconds: number;
  singlesSeconds: number;
  simulations: number;
  decision: string;
  peakMiB: number;
}

interface Consolidated {
  cost: number;
  nodes: number;
  rounds: number;
  commands: Record<string, number>;
  launched: number;
  /** pods evicted over the run */
  moved: number;
  simulations: number;
  seconds: number;
  converged: boolean;
  timeouts?: { multi: number; single: number };
}

interface FragmentedRow {
  kind: 'fragmented';
  scenario: string;
  packedNodes: number;
  packedCost: number;
  pods: number;
  beforeCost: number;
  bound: number;
  lb: number;
  clp: number | undefined;
  /** the configuration LP's Farley bound (valid whether or not it converged) */
  clpBound: number | undefined;
  clpConverged: boolean;
  boundSeconds: number;
  runs: Record<string, Consolidated>;
  peakMiB: number;
}

type Row = DecisionRow | FragmentedRow;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] ?? NaN : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;

/**
 * The activity's solver thread. The thread does not keep a process alive (a worker's
 * Temporal connection does), so the bench holds the event loop open while it is in use.
 */
function benchSolverThread(): SolverThread {
  const thread = createSolverThread();
  const keepAlive = setInterval(() => undefined, 60_000);
  return {
    solve: (input, options) => thread.solve(input, options),
    close: async () => {
      clearInterval(keepAlive);
      await thread.close();
    },
  };
}

/** The activity's solver (a thread, LP guide on), timed. */
function timedSolver(thread: SolverThread): { solve: (input: PackingInput) => Promise<Plan>; spent: () => number; reset: () => void } {
  let spent = 0;
  return {
    solve: async (input) => {
      const t = process.hrtime.bigint();
      try {
        return await thread.solve(input, { guided: true });
      } finally {
        spent += seconds(t);
      }
    },
    spent: () => spent,
    reset: () => void (spent = 0),
  };
}

async function decision(name: string, nodes: number, repeat: number): Promise<DecisionRow> {
  const cluster = underusedCluster(nodes);
  const thread = benchSolverThread();
  const solver = timedSolver(thread);
  const options = { settings: MANY_TO_MANY, tries: TRIES, solve: solver.solve };
  // the objects the activities would list from the API server: built once, not timed
  const world = worldOf(cluster);
  const round = async () => {
    solver.reset();
    const t = process.hrtime.bigint();
    const outcome = await autonodeRound(cluster, emptyMemory(), options, 'bench', world);
    return { outcome, seconds: seconds(t), solve: solver.spent() };
  };
  const cold = await round();
  const runs: Awaited<ReturnType<typeof round>>[] = [];
  for (let i = 0; i < repeat; i++) runs.push(await round());
  const mid = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;
  // the parts on their own: the multi-node search, and three single-node simulations
  const snapshot = disruptionRound(roundInputOf(cluster, planningOf(cluster, world, 'parts')));
  const multiTimes: number[] = [];
  const singleTimes: number[] = [];
  for (let i = 0; i < repeat; i++) {
    let t = process.hrtime.bigint();
    const state = planningOf(cluster, world, 'parts-multi');
    await multiNodeSearch(snapshot.multiNode ?? [], (prefix) => simulateMove(state, prefix, MANY_TO_MANY, { now: BENCH_NOW, solve: solver.solve }));
    multiTimes.push(seconds(t));
    t = process.hrtime.bigint();
    for (const c of (snapshot.consolidate ?? []).slice(0, TRIES)) await simulateMove(planningOf(cluster, world, `parts-${c.nodeClaim}`), [c], MANY_TO_MANY, { now: BENCH_NOW, solve: solver.solve });
    singleTimes.push(seconds(t));
  }
  await thread.close();
  const found = mid.outcome.found;
  return {
    kind: 'decision', scenario: name, nodes: cluster.nodes.size, pods: cluster.pods.size,
    candidates: mid.outcome.singleCandidates, multiCandidates: mid.outcome.multiCandidates,
    roundSeconds: mid.seconds, runs: runs.map((r) => r.seconds), coldSeconds: cold.seconds, solveSeconds: mid.solve,
    multiSeconds: median(multiTimes), singlesSeconds: median(singleTimes),
    simulations: mid.outcome.simulations,
    decision: found ? `${found.kind}: ${found.candidates.length} node(s), ${found.decision}` : `none (${mid.outcome.multiReject ?? 'every candidate rejected'})`,
    // the solver thread is part of this process
    peakMiB: process.resourceUsage().maxRSS / 1024,
  };
}

function summary(run: FixedPoint | KarpenterFixedPoint): Consolidated {
  const commands: Record<string, number> = {};
  for (const c of run.commands) commands[c.kind] = (commands[c.kind] ?? 0) + 1;
  return {
    cost: costOf(run.cluster), nodes: run.cluster.nodes.size, rounds: run.rounds, commands,
    launched: run.commands.reduce((s, c) => s + c.launched, 0), moved: run.commands.reduce((s, c) => s + c.moved, 0), simulations: run.simulations, seconds: run.seconds, converged: run.converged,
    ...('timeouts' in run ? { timeouts: run.timeouts } : {}),
  };
}

async function fragmented(name: string, maxRounds: number, linearSolver: LinearSolver): Promise<FragmentedRow> {
  const { packed, fragmented: start } = fragmentedCluster(linearSolver);
  const progress = (label: string) => (round: number, cluster: SimCluster, kind?: string) => {
    if (kind !== undefined || round % 20 === 0) process.stderr.write(`${name} ${label} round ${round}: ${kind ?? 'no command'}, ${cluster.nodes.size} nodes, $${costOf(cluster).toFixed(3)}/h\n`);
  };
  let t = process.hrtime.bigint();
  const input = pendingInputOf([...start.pods.values()], start.catalog);
  const configuration = process.env.BENCH_SKIP_CONFIGURATION === '1' ? undefined : configurationBound(input, linearSolver, { requirements: true });
  const lb = lowerBound(input);
  const boundSeconds = seconds(t);
  const thread = benchSolverThread();
  const runs: Record<string, Consolidated> = {};
  const variants: [string, ConsolidationSettings][] = [['autonode', MANY_TO_MANY], ['autonode 1:1', ONE_TO_ONE]];
  for (const [label, settings] of variants) {
    t = process.hrtime.bigint();
    const run = await autonodeFixedPoint(start, { settings, tries: TRIES, solve: (p) => thread.solve(p, { guided: true }), maxRounds, onRound: progress(label) });
    runs[label] = summary(run);
  }
  await thread.close();
  if (process.env.BENCH_SKIP_KARPENTER !== '1') {
    runs.Karpenter = summary(karpenterFixedPoint(start, { multiTimeoutMs: 60_000, singleTimeoutMs: 180_000, maxRounds, onRound: progress('Karpenter') }));
  }
  return {
    kind: 'fragmented', scenario: name, packedNodes: packed.nodes.size, packedCost: costOf(packed), pods: start.pods.size, beforeCost: costOf(start),
    bound: Math.max(lb, configuration?.bound ?? 0), lb, clp: configuration?.lp, clpBound: configuration?.bound, clpConverged: configuration?.converged ?? false, boundSeconds, runs,
    peakMiB: process.resourceUsage().maxRSS / 1024,
  };
}

const scenarios: Record<string, (repeat: number, maxRounds: number, lp: LinearSolver) => Promise<Row>> = {
  'decision-1k': (repeat) => decision('decision-1k', 1000, repeat),
  'decision-5k': (repeat) => decision('decision-5k', 5000, repeat),
  'fragmented-500': (_repeat, maxRounds, lp) => fragmented('fragmented-500', maxRounds, lp),
};

function table(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`).join('\n');
}

function decisionTable(rows: readonly DecisionRow[]): string {
  const header = ['scenario', 'nodes', 'pods', 'candidates (multi)', 'round s (median)', 'runs s', 'cold s', 'solve s', 'simulations', 'goal', 'multi s', '3 singles s', 'peak MiB', 'decision'];
  const goal = (r: DecisionRow) => (r.nodes <= 1000 ? 2 : 10);
  return table([
    header,
    ...rows.map((r) => [
      r.scenario, String(r.nodes), String(r.pods), `${r.candidates} (${r.multiCandidates})`, r.roundSeconds.toFixed(2), r.runs.map((s) => s.toFixed(2)).join(' '), r.coldSeconds.toFixed(2), r.solveSeconds.toFixed(2),
      String(r.simulations), `< ${goal(r)} s: ${r.roundSeconds < goal(r) ? 'met' : 'NOT met'}`, r.multiSeconds.toFixed(2), r.singlesSeconds.toFixed(2), r.peakMiB.toFixed(0), r.decision,
    ]),
  ]);
}

function fragmentedTable(rows: readonly FragmentedRow[]): string {
  const header = ['scenario', 'rules', '$/h before', '$/h after', 'x bound', 'goal ≤ 1.10', 'nodes', 'rounds', 'commands', 'launched', 'pods moved', 'simulations', 'wall s', 'converged', 'timeouts'];
  const out: string[][] = [header];
  for (const r of rows) {
    for (const [rules, c] of Object.entries(r.runs)) {
      const ratio = c.cost / r.bound;
      out.push([
        r.scenario, rules, r.beforeCost.toFixed(3), c.cost.toFixed(3), ratio.toFixed(3), rules === 'autonode' ? (ratio <= 1.1 ? 'met' : 'NOT met') : '-', String(c.nodes), String(c.rounds),
        Object.entries(c.commands).map(([k, n]) => `${k} ${n}`).join(', '), String(c.launched), String(c.moved), String(c.simulations), c.seconds.toFixed(1), c.converged ? 'yes' : 'NO', c.timeouts ? `multi ${c.timeouts.multi}, single ${c.timeouts.single}` : '-',
      ]);
    }
  }
  const notes = rows.map(
    (r) =>
      `${r.scenario}: packed ${r.packedNodes} nodes at $${r.packedCost.toFixed(3)}/h; after the scale-down ${r.pods} pods on the same nodes ($${r.beforeCost.toFixed(3)}/h). ` +
      `Lower bound for the remaining pods $${r.bound.toFixed(3)}/h (bound.ts ${r.lb.toFixed(3)}, configuration LP ${r.clp === undefined ? '-' : `${r.clp.toFixed(3)}${r.clpConverged ? ' converged' : '*'}, its Farley bound ${r.clpBound?.toFixed(3) ?? '-'}`}; ${r.boundSeconds.toFixed(1)} s); peak RSS ${r.peakMiB.toFixed(0)} MiB.`,
  );
  return `${table(out)}\n${notes.join('\n')}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args[at + 1];
  };
  const repeat = Math.max(1, Number(flag('--repeat') ?? '3'));
  const maxRounds = Math.max(1, Number(flag('--max-rounds') ?? '2000'));
  const child = flag('--child');
  if (child !== undefined) {
    const run = scenarios[child];
    if (!run) throw new Error(`unknown scenario ${child}`);
    process.send?.(await run(repeat, maxRounds, await loadLinearSolver()));
    return;
  }
  const filter = args.find((arg, i) => !arg.startsWith('--') && !(args[i - 1] ?? '').startsWith('--'));
  const names = Object.keys(scenarios).filter((n) => filter === undefined || n.includes(filter));
  if (names.length === 0) throw new Error(`no scenario matches ${filter ?? ''}; known: ${Object.keys(scenarios).join(', ')}`);
  const rows: Row[] = [];
  for (const name of names) {
    const row = await new Promise<Row>((resolve, reject) => {
      const worker = fork(__filename, ['--child', name, '--repeat', String(repeat), '--max-rounds', String(maxRounds)], { execArgv: ['-r', 'tsx/cjs'] });
      worker.on('message', (message) => resolve(message as Row));
      worker.on('error', reject);
      worker.on('exit', (code) => {
        if (code !== 0) reject(new Error(`${name} exited with ${code}`));
      });
    });
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  const decisions = rows.filter((r): r is DecisionRow => r.kind === 'decision');
  const fragments = rows.filter((r): r is FragmentedRow => r.kind === 'fragmented');
  if (decisions.length > 0) process.stdout.write(`\nDecision time, one round (budget 10 %):\n${decisionTable(decisions)}\n`);
  if (fragments.length > 0) process.stdout.write(`\nFragmented cluster, consolidation to a fixed point (budget 100 %):\n${fragmentedTable(fragments)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
