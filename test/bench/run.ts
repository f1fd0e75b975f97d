// `npm run bench`: per scenario, the solver and the Karpenter-loop baseline on the same
// input — pods/s, peak RSS, nodes, $/h, and the ratio to a lower bound (core/packing/
// bound.ts: the strongest of LB0, the fluid LP over types that hold a pod, and two
// families of assignment-LP duals, all on capacities rounded to what the requests can
// fill — or the configuration LP's bound, core/packing/configuration-bound.ts, when that is
// higher; LB0 and the configuration LP's value are printed too, "*" when its column
// generation stopped before converging, and the seconds the bounds took). The solver runs
// with the LP guide (HiGHS). Each scenario runs in its own child process so peak memory is
// that scenario's. The configuration LP (with pool requirements) runs on aws-realistic,
// many-pools and topology-heavy only; BENCH_SKIP_CONFIGURATION=1 skips it there too
// (minutes at 20k).
//   npm run bench                                every scenario
//   npm run bench -- --scenario aws-realistic-1k   exactly one
//   npm run bench -- karpenter-mix               those whose name contains it
//   --repeat N (default 3): "solve s" is the fastest of N identical solves (the machine
//   is shared; the plan is the same every time), "cold s" the first; peak memory is
//   measured after the first. BENCH_SKIP_BASELINE=1 skips the Karpenter loop, whose
//   pods × claims work takes minutes on karpenter-mix 10k and 20k.
import { fork } from 'node:child_process';
import { solve, type PackingInput } from '../../core/packing';
import { karpenterLoop } from '../../core/packing/baseline/karpenter-loop';
import { fluidBound, lowerBound } from '../../core/packing/bound';
import { configurationBound } from '../../core/packing/configuration-bound';
import type { LinearSolver } from '../../core/packing/linear-program';
import { loadLinearSolver } from '../../activities/packing/highs';
import { awsRealistic, existingNodes, karpenterMix, manyPools, topologyHeavy } from './generators';
import { karpenterExact } from './karpenter-exact';

const scenarios: Record<string, () => PackingInput> = {
  'karpenter-mix-1k': () => karpenterMix(1000),
  'karpenter-mix-5k': () => karpenterMix(5000),
  'karpenter-mix-10k': () => karpenterMix(10000),
  'karpenter-mix-20k': () => karpenterMix(20000),
  'karpenter-exact-1k': () => karpenterExact(1000),
  'karpenter-exact-5k': () => karpenterExact(5000),
  'karpenter-exact-10k': () => karpenterExact(10000),
  'karpenter-exact-20k': () => karpenterExact(20000),
  'aws-realistic-1k': () => awsRealistic(1000),
  'aws-realistic-5k': () => awsRealistic(5000),
  'aws-realistic-20k': () => awsRealistic(20000),
  'topology-heavy': topologyHeavy,
  'many-pools': manyPools,
  'existing-nodes': existingNodes,
};

interface Row {
  scenario: string;
  pods: number;
  solver: { seconds: number; coldSeconds: number; nodes: number; price: number; unschedulable: number };
  baseline: { seconds: number; nodes: number; price: number; unschedulable: number } | undefined;
  bound: number;
  boundSeconds: number;
  /** The configuration LP (column generation): its value and whether it converged. */
  configurationLp: number | undefined;
  configurationConverged: boolean;
  fluid: number;
  peakMiB: number;
}

function runOne(name: string, repeat: number, linearSolver: LinearSolver): Row {
  const make = scenarios[name];
  if (make === undefined) throw new Error(`unknown scenario ${name}`);
  const input = make();
  let start = process.hrtime.bigint();
  const plan = solve(input, { linearSolver });
  const coldSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  // Peak after the first solve (input, solver and its garbage), before anything else runs.
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  // The machine is shared: the fastest of a few identical runs is the least disturbed one.
  let solverSeconds = coldSeconds;
  for (let run = 1; run < repeat; run++) {
    start = process.hrtime.bigint();
    solve(input, { linearSolver });
    solverSeconds = Math.min(solverSeconds, Number(process.hrtime.bigint() - start) / 1e9);
  }
  start = process.hrtime.bigint();
  // Only where it can bite: on karpenter-mix's linearly priced catalog it equals LB0
  // (measured at 1k: 213.34 vs 213.33, after 110 s of pricing 400 types exactly).
  // With pool requirements (many-pools: a pod only on the pools that admit it); topology
  // is ignored, so the bound stays valid for topology-heavy.
  const configurationScenarios = ['aws-realistic', 'many-pools', 'topology-heavy'];
  const configuration = process.env.BENCH_SKIP_CONFIGURATION === '1' || !configurationScenarios.some((prefix) => name.startsWith(prefix)) ? undefined : configurationBound(input, linearSolver, { requirements: true });
  const bound = Math.max(lowerBound(input), configuration?.bound ?? 0);
  const boundSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const fluid = fluidBound(input);
  let baseline: Row['baseline'];
  if (process.env.BENCH_SKIP_BASELINE !== '1') {
    start = process.hrtime.bigint();
    const loop = karpenterLoop(input);
    baseline = { seconds: Number(process.hrtime.bigint() - start) / 1e9, nodes: loop.nodeClaims.length, price: loop.totalPrice, unschedulable: loop.unschedulable.length };
  }
  return {
    scenario: name, pods: input.pods.length, bound, boundSeconds, fluid, peakMiB, baseline,
    configurationLp: configuration?.lp, configurationConverged: configuration?.converged ?? false,
    solver: { seconds: solverSeconds, coldSeconds, nodes: plan.nodeClaims.length, price: plan.totalPrice, unschedulable: plan.unschedulable.length },
  };
}

function format(row: Row): string[] {
  const ratio = (price: number): string => (row.bound > 0 ? (price / row.bound).toFixed(3) : '-');
  const b = row.baseline;
  return [
    row.scenario, String(row.pods),
    row.solver.seconds.toFixed(3), row.solver.coldSeconds.toFixed(3), Math.round(row.pods / row.solver.seconds).toString(), row.peakMiB.toFixed(0),
    String(row.solver.nodes), row.solver.price.toFixed(2), ratio(row.solver.price), String(row.solver.unschedulable),
    b === undefined ? '-' : b.price.toFixed(2), b === undefined ? '-' : ratio(b.price),
    b === undefined ? '-' : String(b.nodes), b === undefined ? '-' : b.seconds.toFixed(2), b === undefined ? '-' : String(b.unschedulable),
    row.bound.toFixed(2), row.fluid.toFixed(2), row.configurationLp === undefined ? '-' : `${row.configurationLp.toFixed(2)}${row.configurationConverged ? '' : '*'}`, row.boundSeconds.toFixed(3),
  ];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args[at + 1];
  };
  const repeat = Math.max(1, Number(flag('--repeat') ?? '3'));
  const child = flag('--child');
  if (child !== undefined) {
    process.send?.(runOne(child, repeat, await loadLinearSolver()));
    return;
  }
  const exact = flag('--scenario');
  const filter = args.find((arg, i) => !arg.startsWith('--') && !(args[i - 1] ?? '').startsWith('--'));
  const names = Object.keys(scenarios).filter((n) => (exact === undefined || n === exact) && (filter === undefined || n.includes(filter)));
  if (names.length === 0) throw new Error(`no scenario matches ${exact ?? filter ?? ''}; known: ${Object.keys(scenarios).join(', ')}`);
  const header = ['scenario', 'pods', 'solve s', 'cold s', 'pods/s', 'peak MiB', 'nodes', '$/h', 'x LB', 'unsched', 'baseline $/h', 'baseline x LB', 'baseline nodes', 'baseline s', 'baseline unsched', 'LB $/h', 'LB0 $/h', 'CLP $/h', 'LB s'];
  const rows: string[][] = [header];
  for (const name of names) {
    const row = await new Promise<Row>((resolve, reject) => {
      const worker = fork(__filename, ['--child', name, '--repeat', String(repeat)], { execArgv: ['-r', 'tsx/cjs'] });
      worker.on('message', (message) => resolve(message as Row));
      worker.on('error', reject);
      worker.on('exit', (code) => { if (code !== 0) reject(new Error(`${name} exited with ${code}`)); });
    });
    rows.push(format(row));
    process.stdout.write(`${format(row).join(' | ')}\n`);
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  process.stdout.write(`\n${rows.map((r) => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`).join('\n')}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
