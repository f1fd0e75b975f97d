// The bundled offline catalog (data/catalog.json, made by scripts/generate-catalog.ts)
// and the bundled on-demand prices, turned into instance types. Importing JSON is module
// loading, not I/O: the data ships inside the build like code does, so this stays pure
// and works wherever core/ runs. Both files are parsed with zod on first use, never cast.
import { z } from 'zod';
import catalogJson from './data/catalog.json';
import pricesUsEast1Json from './data/ec2-on-demand-prices-us-east-1.json';
import { instanceTypeInfoSchema, type InstanceTypeInfo, type InstanceTypeOffering } from './ec2-schemas';
import { buildInstanceTypes, type InstanceTypeOptions, type InstanceTypesResult } from './instancetype';
import { onDemandPriceTableSchema, type OnDemandPriceTable } from './pricing';

const catalogSchema = z.object({
  source: z.record(z.string(), z.string()),
  /** region → instance type → zone suffix letters ("abc" = <region>a, <region>b, <region>c). */
  offerings: z.record(z.string(), z.record(z.string(), z.string().regex(/^[a-z]*$/))),
  instanceTypes: z.array(instanceTypeInfoSchema),
});

export interface CatalogData {
  readonly source: Readonly<Record<string, string>>;
  readonly regions: readonly string[];
  readonly instanceTypes: readonly InstanceTypeInfo[];
  offeringsIn(region: string): InstanceTypeOffering[];
}

/** Parses catalog data in the bundled file's format (exported for tests and tools). */
export function parseCatalogData(raw: unknown): CatalogData {
  const parsed = catalogSchema.parse(raw);
  return {
    source: parsed.source,
    regions: Object.keys(parsed.offerings).sort(),
    instanceTypes: parsed.instanceTypes,
    offeringsIn(region: string): InstanceTypeOffering[] {
      const byType = parsed.offerings[region] ?? {};
      return Object.keys(byType).sort().flatMap((instanceType) =>
        [...(byType[instanceType] ?? '')].map((suffix) => ({ InstanceType: instanceType, Location: `${region}${suffix}`, LocationType: 'availability-zone' as const })));
    },
  };
}

let bundledCatalog: CatalogData | undefined;
let bundledPrices: OnDemandPriceTable | undefined;

export function bundledCatalogData(): CatalogData {
  bundledCatalog ??= parseCatalogData(catalogJson);
  return bundledCatalog;
}

/** The bundled on-demand price table (us-east-1; see data/README.md for its origin). */
export function bundledOnDemandPrices(): OnDemandPriceTable {
  bundledPrices ??= onDemandPriceTableSchema.parse(pricesUsEast1Json);
  return bundledPrices;
}

export type CatalogOptions = Omit<InstanceTypeOptions, 'onDemandPrices'> & {
  /** Defaults to the bundled table. */
  readonly onDemandPrices?: Readonly<Record<string, number>> | undefined;
};

export type CatalogResult =
  | (InstanceTypesResult & { readonly ok: true; readonly warnings: readonly string[] })
  | { readonly ok: false; readonly reason: string };

/**
 * Instance types of the bundled catalog for a region. Prices: the bundled table is
 * us-east-1's; for other regions Karpenter's static fallback also uses us-east-1 prices
 * (reference §2.5), and so do we, with a warning.
 */
export function catalogInstanceTypes(options: CatalogOptions): CatalogResult {
  const catalog = bundledCatalogData();
  if (!catalog.regions.includes(options.region)) {
    return { ok: false, reason: `region ${options.region} is not in the bundled catalog (known: ${catalog.regions.join(', ')})` };
  }
  const warnings: string[] = [];
  let onDemandPrices = options.onDemandPrices;
  if (onDemandPrices === undefined) {
    const table = bundledOnDemandPrices();
    if (table.region !== options.region) {
      warnings.push(`no bundled prices for ${options.region}; using ${table.region} on-demand prices (observed ${table.observedAt}) as Karpenter's static fallback does`);
    }
    onDemandPrices = table.onDemand;
  }
  const result = buildInstanceTypes(catalog.instanceTypes, catalog.offeringsIn(options.region), { ...options, onDemandPrices });
  return { ok: true, warnings, ...result };
}
