// `autonode plan -f FILE… [-o json|table]`: what would be launched for these manifests,
// offline. The JSON shape is a public contract (ARCHITECTURE.md "The `autonode plan`
// contract"): stdout carries only the document, diagnostics go to stderr.
import { readFileSync } from 'node:fs';
import { type Command } from 'commander';
import { z } from 'zod';
import { EC2Client } from '@aws-sdk/client-ec2';
import { solve, type LinearSolver, type Plan } from '../../core/packing';
import { loadLinearSolver } from '../../activities/packing/highs';
import { createEc2CloudProvider } from '../../activities/cloud';
import { cloudCatalog } from '../../activities/provisioner/catalog';
import { normaliseDocument } from '../../core/api/normalise';
import { parseManifests } from '../../core/api/manifests';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import { assemblePlanInput, type CatalogPort, type ManifestFile } from '../../core/workloads/assemble';

const NO_FILE = 'give at least one manifest file with -f';
const planOptionsSchema = z.object({
  // commander leaves `file` undefined when -f is never given: the same message as for [].
  file: z.array(z.string().min(1), { error: NO_FILE }).min(1, { error: NO_FILE }),
  output: z.enum(['json', 'table']),
  region: z.string().min(1),
  /** instance types, offerings and spot prices from the EC2 API (and each node class's subnets' zones), as the provisioner sees them */
  ec2: z.boolean().default(false),
  ec2Endpoint: z.string().url({ error: '--ec2-endpoint must be a URL, e.g. http://127.0.0.1:5000' }).optional(),
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
  /** instance types per node class from elsewhere (`--ec2`); the bundled catalog when absent */
  catalog?: CatalogPort;
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
  const { input, diagnostics } = assemblePlanInput(files, { region: options.region, now: io.now, ...(io.catalog ? { catalog: io.catalog } : {}) });
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
    .option('--ec2', "read instance types, offerings and spot prices from the EC2 API, and each EC2NodeClass's subnets (AWS credentials from the SDK's default chain)", false)
    .option('--ec2-endpoint <url>', 'an EC2-compatible endpoint for --ec2 (e.g. moto); default AWS_ENDPOINT_URL_EC2, else AWS')
    .action(async (raw: unknown) => {
      const linearSolver = await loadLinearSolver();
      const parsed = planOptionsSchema.safeParse(raw);
      let catalog: CatalogPort | undefined;
      if (parsed.success && (parsed.data.ec2 || parsed.data.ec2Endpoint !== undefined)) {
        const endpoint = parsed.data.ec2Endpoint ?? process.env.AWS_ENDPOINT_URL_EC2;
        const ec2 = new EC2Client({ region: parsed.data.region, ...(endpoint ? { endpoint } : {}) });
        try {
          const texts = parsed.data.file.map((path) => ({ path, text: readFileSync(path, 'utf8') }));
          catalog = await ec2CatalogFor(texts, createEc2CloudProvider({ ec2, cluster: { name: 'autonode-plan', region: parsed.data.region } }));
        } catch (err) {
          process.stderr.write(`autonode plan: reading the EC2 catalog: ${err instanceof Error ? err.message : String(err)}\n`);
          process.exitCode = 1;
          return;
        } finally {
          ec2.destroy();
        }
      }
      const code = runPlan(raw, {
        linearSolver,
        ...(catalog ? { catalog } : {}),
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        readFile: (path) => readFileSync(path, 'utf8'),
        now: Date.now(),
      });
      if (code !== 0) process.exitCode = code;
    });
}

/** Every EC2NodeClass in the manifests, normalised (v1 and v1beta1 alike). */
export function nodeClassesIn(files: readonly ManifestFile[]): Map<string, EC2NodeClass> {
  const classes = new Map<string, EC2NodeClass>();
  for (const file of files) {
    for (const document of parseManifests(file.text)) {
      if (document.status === 'error' || document.kind !== 'EC2NodeClass') continue;
      const normalised = normaliseDocument(document.object);
      if (normalised.status === 'ok') for (const o of normalised.objects) if (o.kind === 'EC2NodeClass') classes.set(o.metadata.name ?? '', o);
    }
  }
  return classes;
}

/**
 * The catalog `autonode plan --ec2` plans with: each of the manifests' node classes read
 * through the cloud the way the provisioner reads it (activities/provisioner/catalog.ts).
 */
export async function ec2CatalogFor(files: readonly ManifestFile[], cloud: Parameters<typeof cloudCatalog>[0]): Promise<CatalogPort> {
  const byClass = await cloudCatalog(cloud, nodeClassesIn(files));
  return (query) => byClass.get(query.nodeClassName) ?? { ok: false, reason: `EC2NodeClass ${query.nodeClassName} is not in the manifests: --ec2 needs the class to read its subnets` };
}
