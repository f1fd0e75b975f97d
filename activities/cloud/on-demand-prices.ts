/**
 * On-demand prices per region from the AWS Pricing API (GetProducts), with the bundled
 * table as the fallback, as Karpenter's pricing provider does (providers/pricing/
 * pricing.go; reference/karpenter.md §2.5):
 *  - it starts from the static table (the region's own when bundled, else us-east-1's), so
 *    a worker that cannot reach the Pricing API still ranks types by a real price list;
 *  - every 12 h it asks GetProducts for Linux, shared-tenancy, on-demand compute instances
 *    and for bare-metal ones (Dedicated tenancy in the price list), and merges the answer
 *    over what it had: a type the API stops listing keeps its last known price;
 *  - a failed or empty refresh keeps the previous prices and is retried after
 *    `retryAfterFailureMs` (Karpenter's controller requeues with backoff), logged as a
 *    warning without credentials;
 *  - no client (isolated VPC, GovCloud, or a local stack whose moto has no Pricing API):
 *    the table only, said once.
 * A due refresh starts when prices are asked for and is not waited for: callers get the
 * prices in hand at once (as Karpenter's solver reads whatever its pricing controller last
 * stored), and the next call sees the refreshed ones. One refresh at a time.
 * Rejected: waiting for the refresh, as refreshing-value.ts does for EC2 reads. Those are
 * needed to plan at all; prices are not (the table ranks types well), and an unreachable
 * Pricing API (no egress to it) would stall a batch for the whole retry budget, ~1 min.
 */
import { GetProductsCommand, PricingClient, type Filter } from '@aws-sdk/client-pricing';
import { z } from 'zod';
import type { OnDemandPriceTable } from '../../core/instancetypes/pricing';
import { onDemandPricesFromPriceList, priceCurrency, pricingApiServes, pricingEndpointRegion } from '../../core/instancetypes/pricing';
import { type CloudClusterRef } from './domain';
import { assertAwsEndpointAllowed, type ClusterCredentialsProvider, type EndpointPolicy } from './ec2-client';
import { type Clock, type CloudLogger } from './ports';
import { callAws, type RetryDeps } from './retry';

/** Only `send`: a real PricingClient, or a fake in unit tests. */
export type PricingApi = Pick<PricingClient, 'send'>;

export const defaultPriceRefreshMs = 12 * 60 * 60 * 1000;
export const defaultPriceRetryAfterFailureMs = 5 * 60 * 1000;

/**
 * The SDK hands PriceList entries over as String objects (its LazyJsonString), not string
 * primitives; both are read as text.
 */
const priceListEntrySchema = z.union([z.string(), z.instanceof(String).transform((entry) => entry.toString())]);
const GetProductsOutputSchema = z.object({ PriceList: z.array(priceListEntrySchema).optional(), NextToken: z.string().optional() });

const termMatch = (field: string, value: string): Filter => ({ Type: 'TERM_MATCH', Field: field, Value: value });

/** The two product sets Karpenter prices: shared compute instances, and bare metal. */
const productSets: readonly (readonly Filter[])[] = [
  [termMatch('tenancy', 'Shared'), termMatch('productFamily', 'Compute Instance')],
  [termMatch('tenancy', 'Dedicated'), termMatch('productFamily', 'Compute Instance (bare metal)')],
];

/** Every page of GetProducts for one product set in `region`, as prices per instance type. */
async function fetchProductSet(pricing: PricingApi, region: string, filters: readonly Filter[], retry: RetryDeps): Promise<{ prices: Record<string, number>; unreadable: number }> {
  const currency = priceCurrency(region);
  const prices: Record<string, number> = {};
  let unreadable = 0;
  let nextToken: string | undefined;
  do {
    const token = nextToken;
    const raw = await callAws({ service: 'pricing', operation: 'GetProducts' }, () => pricing.send(new GetProductsCommand({
      ServiceCode: 'AmazonEC2',
      Filters: [
        termMatch('regionCode', region),
        termMatch('serviceCode', 'AmazonEC2'),
        termMatch('preInstalledSw', 'NA'),
        termMatch('operatingSystem', 'Linux'),
        termMatch('capacitystatus', 'Used'),
        termMatch('marketoption', 'OnDemand'),
        ...filters,
      ],
      MaxResults: 100,
      ...(token === undefined ? {} : { NextToken: token }),
    })), retry);
    const page = GetProductsOutputSchema.parse(raw);
    const parsed = onDemandPricesFromPriceList(page.PriceList ?? [], currency);
    Object.assign(prices, parsed.prices);
    unreadable += parsed.unreadable;
    nextToken = page.NextToken === '' ? undefined : page.NextToken;
  } while (nextToken !== undefined);
  return { prices, unreadable };
}

/**
 * On-demand prices of `region` from the Pricing API: both product sets, merged. Fails when
 * either set comes back empty (a filter AWS stopped honouring must not silently drop every
 * bare-metal or every virtualised price), as Karpenter does.
 */
export async function fetchOnDemandPrices(pricing: PricingApi, region: string, deps: { retry: RetryDeps; logger: CloudLogger }): Promise<Record<string, number>> {
  const sets = await Promise.all(productSets.map((filters) => fetchProductSet(pricing, region, filters, deps.retry)));
  if (sets.some((set) => Object.keys(set.prices).length === 0)) {
    throw new Error(`the Pricing API returned no on-demand prices for ${region} (${sets.map((set) => Object.keys(set.prices).length).join(' shared, ')} bare metal)`);
  }
  const unreadable = sets.reduce((sum, set) => sum + set.unreadable, 0);
  if (unreadable > 0) deps.logger.warn({ region, unreadable }, `${unreadable} Pricing API entries for ${region} were not readable price-list products; skipped`);
  const merged: Record<string, number> = {};
  for (const set of sets) Object.assign(merged, set.prices);
  return merged;
}

export interface OnDemandPrices {
  readonly prices: Readonly<Record<string, number>>;
  /** Where the newest prices came from; `bundled` until a refresh succeeds. */
  readonly source: 'pricing-api' | 'bundled';
  /** Epoch ms of the last successful Pricing API refresh. */
  readonly refreshedAt?: number;
}

export interface OnDemandPriceSource {
  /** The prices in hand; starts a refresh when one is due. */
  current(): OnDemandPrices;
  /** The refresh under way, if any, else the prices in hand (tests, one-shot commands). */
  settled(): Promise<OnDemandPrices>;
}

export interface OnDemandPriceSourceOptions {
  region: string;
  /** The static fallback (bundled table). Its own region's, else any (us-east-1). */
  bundled: OnDemandPriceTable;
  /** Absent: the bundled table only (isolated VPC, or a stack without a Pricing API). */
  pricing?: PricingApi;
  retry: RetryDeps;
  clock: Clock;
  logger: CloudLogger;
  refreshIntervalMs?: number;
  retryAfterFailureMs?: number;
}

export function createOnDemandPriceSource(options: OnDemandPriceSourceOptions): OnDemandPriceSource {
  const { region, bundled, pricing, clock, logger } = options;
  const interval = options.refreshIntervalMs ?? defaultPriceRefreshMs;
  const retryAfterFailure = options.retryAfterFailureMs ?? defaultPriceRetryAfterFailureMs;
  let state: OnDemandPrices = { prices: bundled.onDemand, source: 'bundled' };
  let nextAttemptAt = 0;
  let inflight: Promise<OnDemandPrices> | undefined;
  const live = pricing !== undefined && pricingApiServes(region);
  if (bundled.region !== region) {
    logger.warn(
      { region, pricesRegion: bundled.region, observedAt: bundled.observedAt },
      `no bundled on-demand prices for ${region}; ${live ? 'until the Pricing API answers, ' : ''}using ${bundled.region}'s (observed ${bundled.observedAt}) as Karpenter's static fallback does`,
    );
  }
  if (!live) {
    logger.info({ region }, `on-demand prices for ${region} come from the bundled table only: ${pricing === undefined ? 'no Pricing API client is configured' : `AWS serves no Pricing API for ${region}`}`);
  }

  async function refresh(api: PricingApi): Promise<OnDemandPrices> {
    const startedAt = clock.now().getTime();
    try {
      const fresh = await fetchOnDemandPrices(api, region, { retry: options.retry, logger });
      // Merged over what we had: a type missing from this answer keeps its last price.
      state = { prices: { ...state.prices, ...fresh }, source: 'pricing-api', refreshedAt: clock.now().getTime() };
      nextAttemptAt = startedAt + interval;
      logger.debug({ region, instanceTypes: Object.keys(fresh).length }, `on-demand prices for ${region} refreshed from the Pricing API`);
    } catch (error) {
      nextAttemptAt = startedAt + retryAfterFailure;
      logger.warn(
        { region, source: state.source, retryAt: new Date(nextAttemptAt).toISOString(), error: error instanceof Error ? error.message : String(error) },
        `refreshing on-demand prices for ${region} from the Pricing API failed; keeping the ${state.source === 'bundled' ? `bundled table (observed ${bundled.observedAt})` : `prices from ${new Date(state.refreshedAt ?? 0).toISOString()}`}`,
      );
    }
    return state;
  }

  return {
    current(): OnDemandPrices {
      if (live && inflight === undefined && clock.now().getTime() >= nextAttemptAt) {
        // refresh() never rejects: failures are logged and keep the prices in hand.
        inflight = refresh(pricing).finally(() => {
          inflight = undefined;
        });
      }
      return state;
    },
    settled: () => inflight ?? Promise.resolve(state),
  };
}

export interface PricingClientFactoryOptions {
  /** A local Pricing endpoint (tests); undefined means AWS's, in the region nearest the cluster's. */
  endpoint?: string;
  credentialsFor: ClusterCredentialsProvider;
  endpointPolicy: EndpointPolicy;
  requestTimeoutMs?: number;
}

/** One Pricing client per cluster (its credentials), in the endpoint region nearest the cluster's. */
export function createPricingClientFactory(options: PricingClientFactoryOptions): (cluster: CloudClusterRef) => PricingClient {
  assertAwsEndpointAllowed('Pricing', options.endpoint, options.endpointPolicy);
  return (cluster) =>
    new PricingClient({
      region: pricingEndpointRegion(cluster.region),
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      credentials: options.credentialsFor(cluster),
      // Retries live in retry.ts (callAws), observable like EC2's.
      maxAttempts: 1,
      requestHandler: { requestTimeout: options.requestTimeoutMs ?? 20_000, connectionTimeout: 5_000 },
    });
}
