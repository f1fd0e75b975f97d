// Regenerates core/instancetypes/data/catalog.json, the bundled offline catalog:
//   npx tsx scripts/generate-catalog.ts [--moto-resources DIR] [--region R ...]
//
// Source: moto's EC2 resource files (the instance types and per-region offerings moto
// serves for DescribeInstanceTypes / DescribeInstanceTypeOfferings), read from the moto
// installed by scripts/setup.sh. Each type is passed through the same zod schema the
// live path uses, so only the fields autonode reads are kept; types Karpenter would not
// launch (non-hvm, i386 or mac architectures) are dropped. Output is sorted and one
// type per line, so a regeneration diffs cleanly.
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { instanceTypeInfoSchema, instanceTypeOfferingSchema, type InstanceTypeInfo } from '../core/instancetypes/ec2-schemas';
import { kubeArchitecture } from '../core/instancetypes/labels';

const defaultMotoPackage = join(homedir(), '.cache/autonode/python-temporal1.9.1-moto5.2.5/lib/python3.11/site-packages/moto');
const outputPath = resolve(__dirname, '../core/instancetypes/data/catalog.json');

function argument(name: string): string[] {
  const values: string[] = [];
  process.argv.forEach((arg, index) => {
    const next = process.argv[index + 1];
    if (arg === name && next !== undefined) values.push(next);
  });
  return values;
}

function readGzipJson(path: string): unknown {
  return JSON.parse(gunzipSync(readFileSync(path)).toString('utf8'));
}

function motoVersion(motoPackage: string): string {
  const init = readFileSync(join(motoPackage, '__init__.py'), 'utf8');
  return /__version__\s*=\s*"([^"]+)"/.exec(init)?.[1] ?? 'unknown';
}

/** JSON.stringify with undefined dropped and object keys in a stable order. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) out[key] = stable(child);
    }
    return out;
  }
  return value;
}

function main(): void {
  const motoPackage = argument('--moto-package')[0] ?? process.env.MOTO_PACKAGE ?? defaultMotoPackage;
  const resources = join(motoPackage, 'ec2/resources');
  if (!existsSync(resources)) throw new Error(`moto resources not found at ${resources}; run npm run setup or pass --moto-package`);
  const version = motoVersion(motoPackage);

  const rawTypes = z.record(z.string(), z.unknown()).parse(readGzipJson(join(resources, 'instance_types.json.gz')));
  const kept: InstanceTypeInfo[] = [];
  for (const raw of Object.values(rawTypes)) {
    const info = instanceTypeInfoSchema.parse(raw);
    const hvm = info.SupportedVirtualizationTypes?.includes('hvm') ?? true;
    if (hvm && kubeArchitecture(info) !== undefined) kept.push(info);
  }
  kept.sort((a, b) => (a.InstanceType < b.InstanceType ? -1 : 1));
  const keptNames = new Set(kept.map((info) => info.InstanceType));

  const offeringsDir = join(resources, 'instance_type_offerings/availability-zone');
  const requested = argument('--region');
  const regions = (requested.length > 0 ? requested : readdirSync(offeringsDir).map((file) => file.replace(/\.json\.gz$/, ''))).sort();
  // Zones are stored as their one-letter suffix ("us-east-1" + "a"): the offerings are
  // most of the file, and this keeps it small.
  const offerings: Record<string, Record<string, string>> = {};
  for (const region of regions) {
    const rows = z.array(instanceTypeOfferingSchema).parse(readGzipJson(join(offeringsDir, `${region}.json.gz`)));
    const byType: Record<string, string[]> = {};
    for (const row of rows) {
      if (!keptNames.has(row.InstanceType)) continue;
      (byType[row.InstanceType] ??= []).push(row.Location);
    }
    offerings[region] = Object.fromEntries(Object.keys(byType).sort().map((type) => {
      const suffixes = [...new Set(byType[type])].map((zone) => {
        const suffix = zone.slice(region.length);
        if (!zone.startsWith(region) || !/^[a-z]$/.test(suffix)) throw new Error(`zone ${zone} is not ${region} plus one letter`);
        return suffix;
      });
      return [type, suffixes.sort().join('')];
    }));
  }

  const header = {
    source: {
      generatedBy: 'scripts/generate-catalog.ts',
      instanceTypes: `moto ${version}, moto/ec2/resources/instance_types.json.gz (DescribeInstanceTypes shape)`,
      offerings: `moto ${version}, moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz; per region, instance type -> zone suffix letters`,
      prices: 'not included: core/instancetypes/data/ec2-on-demand-prices-us-east-1.json',
      filter: 'hvm, x86_64 or arm64 (as Karpenter filters DescribeInstanceTypes)',
    },
  };
  const lines = [
    '{',
    `"source": ${JSON.stringify(header.source)},`,
    '"offerings": {',
    Object.entries(offerings).map(([region, byType]) => `${JSON.stringify(region)}: ${JSON.stringify(byType)}`).join(',\n'),
    '},',
    '"instanceTypes": [',
    kept.map((info) => JSON.stringify(stable(info))).join(',\n'),
    ']',
    '}',
  ];
  writeFileSync(outputPath, `${lines.join('\n')}\n`);
  process.stdout.write(`wrote ${outputPath}: ${kept.length} instance types, ${regions.length} regions\n`);
}

main();
