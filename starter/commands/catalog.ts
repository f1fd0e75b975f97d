import { type Command } from 'commander';
import { z } from 'zod';
import { amiFamilySchema, catalogInstanceTypes, kubeletProfileSchema, type InstanceType } from '../../core/instancetypes';
import { LabelKey } from '../../core/scheduling/labels';

const catalogOptionsSchema = z.object({
  region: z.string().min(1),
  amiFamily: amiFamilySchema,
  kubeletProfile: kubeletProfileSchema.optional(),
  output: z.enum(['json', 'table']),
});
export type CatalogCommandOptions = z.infer<typeof catalogOptionsSchema>;

export interface CatalogIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Epoch milliseconds, read once here at the edge. */
  now: number;
}

function cheapest(instanceType: InstanceType, capacityType: 'on-demand' | 'spot'): string {
  const prices = instanceType.offerings.filter((o) => o.available && o.capacityType === capacityType).map((o) => o.price);
  return prices.length === 0 ? '-' : Math.min(...prices).toFixed(4);
}

function table(instanceTypes: readonly InstanceType[]): string {
  const header = ['NAME', 'ARCH', 'CPU', 'MEMORY', 'PODS', 'ZONES', 'ON-DEMAND', 'SPOT'];
  const rows = instanceTypes.map((it) => [
    it.name,
    it.labels[LabelKey.arch] ?? '-',
    it.allocatable.cpu ?? '0',
    it.allocatable.memory ?? '0',
    it.allocatable.pods ?? '0',
    String(new Set(it.offerings.map((o) => o.zone)).size),
    cheapest(it, 'on-demand'),
    cheapest(it, 'spot'),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n');
}

/**
 * Prints the bundled catalog's instance types for a region and node model: labels,
 * capacity, allocatable (what pods can use) and priced offerings. Returns the exit code.
 * With -o json, stdout carries only the JSON array; warnings go to stderr.
 */
export function runCatalog(rawOptions: unknown, io: CatalogIo): number {
  const options = catalogOptionsSchema.safeParse(rawOptions);
  if (!options.success) {
    io.stderr(`error: ${options.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`).join('; ')}\n`);
    return 2;
  }
  const { region, amiFamily, kubeletProfile, output } = options.data;
  if (kubeletProfile !== undefined && amiFamily !== 'Custom') {
    io.stderr('error: --kubelet-profile applies only to --ami-family Custom (HyperShift nodes)\n');
    return 2;
  }
  const result = catalogInstanceTypes({ region, amiFamily, kubeletProfile, now: io.now });
  if (!result.ok) {
    io.stderr(`error: ${result.reason}\n`);
    return 1;
  }
  for (const warning of result.warnings) io.stderr(`warning: ${warning}\n`);
  if (output === 'json') io.stdout(`${JSON.stringify(result.instanceTypes, null, 2)}\n`);
  else io.stdout(`${table(result.instanceTypes)}\n`);
  return 0;
}

export function registerCatalogCommand(program: Command): void {
  program
    .command('catalog')
    .description('print the bundled EC2 instance-type catalog: labels, capacity, allocatable and priced offerings')
    .option('--region <region>', 'AWS region', 'us-east-1')
    .option('--ami-family <family>', 'AL2023 (Karpenter defaults), AL2, Bottlerocket, or Custom (HyperShift/OpenShift kubelet)', 'AL2023')
    .option('--kubelet-profile <profile>', 'for Custom: openshift-static (default) or openshift-autosize')
    .option('-o, --output <format>', 'json or table', 'table')
    .action((opts: Record<string, unknown>) => {
      process.exitCode = runCatalog(opts, {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        now: Date.now(),
      });
    });
}
