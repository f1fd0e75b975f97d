// `autonode plan -f FILE… [-o json|table]`: what would be launched for these manifests,
// offline. The JSON shape is a public contract (ARCHITECTURE.md "The `autonode plan`
// contract"): stdout carries only the document, diagnostics go to stderr.
import { readFileSync } from 'node:fs';
import { type Command } from 'commander';
import { z } from 'zod';
import { solve, type LinearSolver, type Plan } from '../../core/packing';
import { loadLinearSolver } from '../../activities/packing/highs';
import { assemblePlanInput, type ManifestFile } from '../../core/workloads/assemble';

const NO_FILE = 'give at least one manifest file with -f';
const planOptionsSchema = z.object({
  // commander leaves `file` undefined when -f is never given: the same message as for [].
  file: z.array(z.string().min(1), { error: NO_FILE }).min(1, { error: NO_FILE }),
  output: z.enum(['json', 'table']),
  region: z.string().min(1),
});
export type PlanCommandOptions = z.infer<typeof planOptionsSchema>;

export interface PlanIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readFile: (path: string) => string;
  /** Epoch milliseconds, read once here at the edge. */
  now: number;
  /** Enables the LP guide (core/packing/guide.ts); without it the plan is greedy only. */
  linearSolver?: LinearSolver;
}

/** The contract's document: exactly its fields, in its order. */
export function planDocument(plan: Plan): unknown {
  return {
    nodeClaims: plan.nodeClaims.map((c) => ({
      name: c.name, nodePool: c.nodePool, instanceType: c.instanceType, zone: c.zone, capacityType: c.capacityType,
      price: c.price, instanceTypeOptions: c.instanceTypeOptions, labels: c.labels, taints: c.taints, allocatable: c.allocatable, pods: c.pods,
    })),
    existingNodes: plan.existingNodes,
    inFlightNodeClaims: plan.inFlightNodeClaims,
    unschedulable: plan.unschedulable,
    totalPrice: plan.totalPrice,
  };
}

function columns(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n');
}

export function planTable(plan: Plan): string {
  const sections: string[] = [];
  sections.push(columns([
    ['NODECLAIM', 'NODEPOOL', 'INSTANCE-TYPE', 'ZONE', 'CAPACITY', 'PRICE/H', 'CPU', 'MEMORY', 'PODS', 'OPTIONS'],
    ...plan.nodeClaims.map((c) => [c.name, c.nodePool, c.instanceType, c.zone, c.capacityType, c.price.toFixed(4), c.allocatable.cpu ?? '0', c.allocatable.memory ?? '0', String(c.pods.length), String(c.instanceTypeOptions.length)]),
  ]));
  for (const [title, placements] of [['EXISTING NODE', plan.existingNodes], ['IN-FLIGHT NODECLAIM', plan.inFlightNodeClaims]] as const) {
    if (placements.length > 0) sections.push(columns([[title, 'PODS'], ...placements.map((p) => [p.name, p.pods.join(',')])]));
  }
  if (plan.unschedulable.length > 0) sections.push(columns([['UNSCHEDULABLE POD', 'REASON'], ...plan.unschedulable.map((u) => [u.pod, u.reason])]));
  const pods = plan.nodeClaims.reduce((n, c) => n + c.pods.length, 0);
  sections.push(`${plan.nodeClaims.length} new NodeClaim(s) for ${pods} pod(s), total ${plan.totalPrice.toFixed(4)} USD/h; ${plan.unschedulable.length} unschedulable`);
  return `${sections.join('\n\n')}\n`;
}

export function runPlan(raw: unknown, io: PlanIo): number {
  const parsed = planOptionsSchema.safeParse(raw);
  if (!parsed.success) {
    io.stderr(`autonode plan: ${parsed.error.issues.map((i) => i.message).join('; ')}\n`);
    return 2;
  }
  const options = parsed.data;
  const files: ManifestFile[] = [];
  for (const path of options.file) {
    try {
      files.push({ path, text: io.readFile(path) });
    } catch (err) {
      // Classified and reported: an unreadable file is a usage error, not a crash.
      io.stderr(`autonode plan: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}\n`);
      return 2;
    }
  }
  const { input, diagnostics } = assemblePlanInput(files, { region: options.region, now: io.now });
  for (const line of diagnostics) io.stderr(`warning: ${line}\n`);
  if (input.nodePools.length === 0) io.stderr('warning: no usable NodePool in the input: every pending pod is unschedulable\n');
  const plan = solve(input, io.linearSolver === undefined ? {} : { linearSolver: io.linearSolver });
  io.stdout(options.output === 'json' ? `${JSON.stringify(planDocument(plan), null, 2)}\n` : planTable(plan));
  return 0;
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description('Plan, offline, the NodeClaims Karpenter-style provisioning would create for the pods in these manifests, and their price')
    .option('-f, --file <path>', 'a multi-document YAML file of Kubernetes objects (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('-o, --output <format>', 'json or table', 'table')
    .option('--region <region>', 'AWS region of the bundled instance-type catalog', 'us-east-1')
    .action(async (raw: unknown) => {
      const linearSolver = await loadLinearSolver();
      const code = runPlan(raw, {
        linearSolver,
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        readFile: (path) => readFileSync(path, 'utf8'),
        now: Date.now(),
      });
      if (code !== 0) process.exitCode = code;
    });
}
