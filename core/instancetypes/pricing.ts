// Offering prices, USD per instance-hour (reference/karpenter.md §2.5).
import { z } from 'zod';
import type { SpotPrice } from './ec2-schemas';

/** The shape of data/ec2-on-demand-prices-*.json (see data/README.md). */
export const onDemandPriceTableSchema = z.object({
  region: z.string(),
  observedAt: z.string(),
  currency: z.literal('USD'),
  unit: z.string(),
  source: z.string(),
  onDemand: z.record(z.string(), z.number().positive()),
});
export type OnDemandPriceTable = z.infer<typeof onDemandPriceTableSchema>;

/**
 * Spot price assumed when no plausible observation exists: 40% of on-demand. AWS
 * advertises spot savings "up to 90%" and most types trade at 60–70% off; we take the
 * conservative end so that an estimate never makes spot look cheaper than it is likely
 * to be, while keeping spot below on-demand as it always is.
 */
export const spotPriceEstimateFraction = 0.4;

/** An observation older than this (relative to `now`) is stale. */
export const spotPriceMaxAgeMs = 24 * 60 * 60 * 1000;
/** Observations outside [5%, 100%] of on-demand are not believable (moto answers 0.00001). */
export const spotPriceMinFraction = 0.05;
export const spotPriceMaxFraction = 1;

/** Karpenter asks for these product descriptions; rows for Windows or SUSE do not apply. */
const linuxProductDescriptions: ReadonlySet<string> = new Set(['Linux/UNIX', 'Linux/UNIX (Amazon VPC)']);

export type SpotPriceChoice =
  | { readonly source: 'observed'; readonly price: number; readonly observedAt: number }
  | { readonly source: 'estimated'; readonly price: number; readonly rejected?: string };

/**
 * The spot price for one instance type in one zone: the latest DescribeSpotPriceHistory
 * row when it is plausible (observed within a day before `now`, and between 5% and 100%
 * of the on-demand price), else the fixed-fraction estimate. `rejected` says why the
 * latest observation was not used.
 */
export function chooseSpotPrice(args: {
  readonly instanceType: string;
  readonly zone: string;
  readonly onDemandPrice: number;
  readonly history: readonly SpotPrice[];
  /** Epoch milliseconds. */
  readonly now: number;
}): SpotPriceChoice {
  const { instanceType, zone, onDemandPrice, history, now } = args;
  const estimate = roundPrice(onDemandPrice * spotPriceEstimateFraction);
  const rows = history
    .filter((row) => row.InstanceType === instanceType && row.AvailabilityZone === zone)
    .filter((row) => row.ProductDescription === undefined || linuxProductDescriptions.has(row.ProductDescription))
    // Latest first; equal timestamps resolved by the lower price, then the description.
    .sort((a, b) => b.Timestamp - a.Timestamp || a.SpotPrice - b.SpotPrice
      || compareStrings(a.ProductDescription ?? '', b.ProductDescription ?? ''));
  const [latest] = rows;
  if (latest === undefined) return { source: 'estimated', price: estimate };
  const age = now - latest.Timestamp;
  if (age > spotPriceMaxAgeMs || age < 0) {
    return { source: 'estimated', price: estimate, rejected: `observed ${new Date(latest.Timestamp).toISOString()}, not within the day before ${new Date(now).toISOString()}` };
  }
  // Compared in micro-dollars, the prices' own precision: 0.0048 / 0.096 is 0.04999… in
  // floating point, yet exactly 5%.
  const micro = (dollars: number): number => Math.round(dollars * 1e6);
  const fraction = latest.SpotPrice / onDemandPrice;
  if (micro(latest.SpotPrice) < micro(onDemandPrice * spotPriceMinFraction) || micro(latest.SpotPrice) > micro(onDemandPrice * spotPriceMaxFraction)) {
    return { source: 'estimated', price: estimate, rejected: `price ${latest.SpotPrice} is ${(fraction * 100).toFixed(3)}% of on-demand ${onDemandPrice}` };
  }
  return { source: 'observed', price: latest.SpotPrice, observedAt: latest.Timestamp };
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Prices carry at most 6 decimals, so estimates print as the price list does. */
function roundPrice(price: number): number {
  return Math.round(price * 1e6) / 1e6;
}

// --- On-demand prices from the AWS Price List (Pricing API GetProducts) ---------------

/**
 * The part of one GetProducts PriceList entry (a JSON document per product) that matters:
 * the instance type and its on-demand price per hour. Everything else is ignored.
 */
const priceListItemSchema = z.object({
  product: z.object({ attributes: z.object({ instanceType: z.string().optional() }).optional() }).optional(),
  terms: z.object({
    OnDemand: z.record(z.string(), z.object({
      priceDimensions: z.record(z.string(), z.object({ pricePerUnit: z.record(z.string(), z.string()).optional() })).optional(),
    })).optional(),
  }).optional(),
});

export interface PriceListPage {
  readonly prices: Record<string, number>;
  /** Entries that were not JSON or not a price-list product, counted for a warning. */
  readonly unreadable: number;
}

/**
 * On-demand prices of one GetProducts page, per instance type: each OnDemand term's
 * price dimension in `currency` (USD; CNY in China regions), ignoring zero and unparsable
 * prices as Karpenter's pricing provider does (pricing.go onDemandPage).
 */
export function onDemandPricesFromPriceList(priceList: readonly string[], currency: string): PriceListPage {
  const prices: Record<string, number> = {};
  let unreadable = 0;
  for (const entry of priceList) {
    let json: unknown;
    try {
      json = JSON.parse(entry);
    } catch {
      unreadable++;
      continue;
    }
    const item = priceListItemSchema.safeParse(json);
    if (!item.success) {
      unreadable++;
      continue;
    }
    const instanceType = item.data.product?.attributes?.instanceType;
    if (instanceType === undefined || instanceType === '') continue;
    for (const term of Object.values(item.data.terms?.OnDemand ?? {})) {
      for (const dimension of Object.values(term.priceDimensions ?? {})) {
        const price = Number(dimension.pricePerUnit?.[currency]);
        if (Number.isFinite(price) && price > 0) prices[instanceType] = price;
      }
    }
  }
  return { prices, unreadable };
}

/** The currency AWS prices a region in. */
export function priceCurrency(region: string): string {
  return region.startsWith('cn-') ? 'CNY' : 'USD';
}

/**
 * The Pricing API endpoint region for a cluster region: the API lives in a few regions
 * only; Karpenter asks the nearest (pricing.go NewAPI): ap-south-1 for ap-*, eu-central-1
 * for eu-*, cn-northwest-1 for cn-*, else us-east-1.
 */
export function pricingEndpointRegion(region: string): string {
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  if (region.startsWith('cn-')) return 'cn-northwest-1';
  return 'us-east-1';
}

/** Whether AWS serves the Pricing API for this region at all (not in GovCloud; pricing.go). */
export function pricingApiServes(region: string): boolean {
  return !region.startsWith('us-gov');
}
