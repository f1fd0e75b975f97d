// `npm run bench`: per scenario, the solver and the Karpenter-loop baseline on the same
// input — pods/s, peak RSS, nodes, $/h, and the ratio to the fluid-LP lower bound
// (performance.md §4.2 LB0). Each scenario runs in its own child process so peak memory
// is that scenario's. `npm run bench -- karpenter-mix-1k` runs a subset (names contain).
import { fork } from 'node:child_process';
import { solve, solveFluid, type PackingInput } from '../../core/packing';
import { karpenterLoop } from '../../core/packing/baseline/karpenter-loop';
import { Dims, subtract } from '../../core/packing/dims';
import { awsRealistic, existingNodes, karpenterMix, manyPools, topologyHeavy } from './generators';

const scenarios: Record<string, () => PackingInput> = {
  'karpenter-mix-1k': () => karpenterMix(1000),
  'karpenter-mix-5k': () => karpenterMix(5000),
  'karpenter-mix-10k': () => karpenterMix(10000),
  'karpenter-mix-20k': () => karpenterMix(20000),
  'aws-realistic-1k': () => awsRealistic(1000),
  'aws-realistic-5k': () => awsRealistic(5000),
  'aws-realistic-20k': () => awsRealistic(20000),
  'topology-heavy': topologyHeavy,
  'many-pools': manyPools,
  'existing-nodes': existingNodes,
};

/** LB0 over every type of every pool (cheapest available offering) and all pending demand. */
export function fluidBound(input: PackingInput): number {
  const names = new Set<string>();
  input.pods.forEach((p) => Object.keys(p.requests).forEach((n) => names.add(n)));
  input.nodePools.forEach((p) => p.instanceTypes.forEach((t) => Object.keys(t.allocatable).forEach((n) => names.add(n))));
  const dims = new Dims(names);
  const demand = dims.zero();
  for (const pod of input.pods) {
    const v = dims.vector({ ...pod.requests, pods: '1' }, 'up');
    for (let i = 0; i < demand.length; i++) demand[i] = (demand[i] ?? 0) + (v[i] ?? 0);
  }
  // Free capacity on existing nodes can absorb demand at no cost: subtract it (still a bound).
  for (const node of input.existingNodes) {
    const free = subtract(dims.vector(node.allocatable, 'down'), node.pods.reduce((sum, p) => {
      const v = dims.vector({ ...p.requests, pods: '1' }, 'up');
      return sum.map((x, i) => x + (v[i] ?? 0));
    }, dims.zero()));
    for (let i = 0; i < demand.length; i++) demand[i] = Math.max(0, (demand[i] ?? 0) - Math.max(0, free[i] ?? 0));
  }
  const types = input.nodePools.flatMap((p) => p.instanceTypes).filter((t) => t.offerings.some((o) => o.available));
  const prices = types.map((t) => Math.min(...t.offerings.filter((o) => o.available).map((o) => o.price)));
  return solveFluid(types.map((t) => dims.vector(t.allocatable, 'down')), prices, demand).bound;
}

interface Row {
  scenario: string;
  pods: number;
  solver: { seconds: number; nodes: number; price: number; unschedulable: number };
  baseline: { seconds: number; nodes: number; price: number; unschedulable: number } | undefined;
  bound: number;
  peakMiB: number;
}

function runOne(name: string): Row {
  const make = scenarios[name];
  if (make === undefined) throw new Error(`unknown scenario ${name}`);
  const input = make();
  const bound = fluidBound(input);
  let start = process.hrtime.bigint();
  const plan = solve(input);
  const solverSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  let baseline: Row['baseline'];
  if (process.env.BENCH_SKIP_BASELINE !== '1') {
    start = process.hrtime.bigint();
    const loop = karpenterLoop(input);
    baseline = { seconds: Number(process.hrtime.bigint() - start) / 1e9, nodes: loop.nodeClaims.length, price: loop.totalPrice, unschedulable: loop.unschedulable.length };
  }
  return {
    scenario: name, pods: input.pods.length, bound, peakMiB, baseline,
    solver: { seconds: solverSeconds, nodes: plan.nodeClaims.length, price: plan.totalPrice, unschedulable: plan.unschedulable.length },
  };
}

function format(row: Row): string[] {
  const ratio = (price: number): string => (row.bound > 0 ? (price / row.bound).toFixed(3) : '-');
  const b = row.baseline;
  return [
    row.scenario, String(row.pods),
    row.solver.seconds.toFixed(3), Math.round(row.pods / row.solver.seconds).toString(), row.peakMiB.toFixed(0),
    String(row.solver.nodes), row.solver.price.toFixed(2), ratio(row.solver.price), String(row.solver.unschedulable),
    b === undefined ? '-' : b.seconds.toFixed(2), b === undefined ? '-' : Math.round(row.pods / b.seconds).toString(),
    b === undefined ? '-' : String(b.nodes), b === undefined ? '-' : b.price.toFixed(2), b === undefined ? '-' : ratio(b.price), b === undefined ? '-' : String(b.unschedulable),
    row.bound.toFixed(2),
  ];
}

async function main(): Promise<void> {
  const [mode, only] = process.argv.slice(2);
  if (mode === '--child' && only !== undefined) {
    process.send?.(runOne(only));
    return;
  }
  const filter = mode;
  const names = Object.keys(scenarios).filter((n) => filter === undefined || n.includes(filter));
  const header = ['scenario', 'pods', 'solve s', 'pods/s', 'peak MiB', 'nodes', '$/h', 'x LB', 'unsched', 'karp s', 'karp pods/s', 'karp nodes', 'karp $/h', 'karp x LB', 'karp unsched', 'LB0 $/h'];
  const rows: string[][] = [header];
  for (const name of names) {
    const row = await new Promise<Row>((resolve, reject) => {
      const child = fork(__filename, ['--child', name], { execArgv: ['-r', 'tsx/cjs'] });
      child.on('message', (message) => resolve(message as Row));
      child.on('error', reject);
      child.on('exit', (code) => { if (code !== 0) reject(new Error(`${name} exited with ${code}`)); });
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
