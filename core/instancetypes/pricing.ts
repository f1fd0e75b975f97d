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
