/**
 * Instance types and prices for one region, from DescribeInstanceTypes,
 * DescribeInstanceTypeOfferings and DescribeSpotPriceHistory plus on-demand prices from
 * the Pricing API over the static table (on-demand-prices.ts), mapped through
 * core/instancetypes (the same code path as the bundled catalog).
 *
 * The three reads are cached separately because they age differently: the list of types
 * and their shapes changes with AWS launches (1 h), offerings and spot prices move within
 * minutes (5 min). Each cache is single-flight and serves its last good copy when a
 * refresh fails (refreshing-value.ts); only a region with nothing cached fails, with
 * InstanceTypesUnavailableError.
 *
 * A provider is one cache. Offerings are per account (zone names map to different
 * physical zones in each account), so share a provider between clusters only when they
 * use the same account and region; the EC2 cloud provider makes one per cluster.
 */
import { z } from 'zod';
import {
  amiFamilySchema,
  buildInstanceTypes,
  instanceTypeInfoSchema,
  instanceTypeOfferingSchema,
  bundledOnDemandPrices,
  kubeletProfileSchema,
  kubeletSettingsSchema,
  offeringKey,
  type CapacityType,
  type InstanceType,
  type InstanceTypeInfo,
  type InstanceTypeOffering,
  type OnDemandPriceTable,
  type SpotPrice,
} from '../../core/instancetypes';
import { type CatalogStore, type PersistedRead } from './catalog-store';
import { CapacityTypeSchema } from './domain';
import { InstanceTypesUnavailableError, InvalidRequestError, type InstanceTypeSource } from './errors';
import { readInstanceTypeOfferings, readInstanceTypes, readSpotPriceHistory, type Ec2Reader } from './instance-type-reads';
import { createOnDemandPriceSource, type OnDemandPriceSource, type PricingApi } from './on-demand-prices';
import { type Clock, type CloudLogger, type Ec2Api, silentLogger, systemClock } from './ports';
import { createRefreshingValue, type RefreshingValue, type Snapshot } from './refreshing-value';
import { canonicalJson } from '../../core/provisioning/nodeclaims';
import { defaultRetryPolicy, type RetryDeps } from './retry';

export interface RefreshIntervals {
  instanceTypes: number;
  offerings: number;
  spotPrices: number;
}

export const defaultRefreshIntervals: RefreshIntervals = { instanceTypes: 60 * 60_000, offerings: 5 * 60_000, spotPrices: 5 * 60_000 };

/** After a failed refresh the last good copy is served this long before the next attempt. */
export const defaultRetryAfterFailureMs = 30_000;

/** What a node class changes about its instance types; plain JSON so it can be an activity input. */
export const InstanceTypeQuerySchema = z.object({
  amiFamily: amiFamilySchema,
  kubeletProfile: kubeletProfileSchema.optional(),
  kubelet: kubeletSettingsSchema.optional(),
  /** the node class's root volume; the family default when absent */
  rootVolumeSize: z.string().optional(),
  /** zones the node class's subnets cover; every offered zone when absent */
  zones: z.array(z.string().min(1)).optional(),
  /** offerings known to be out of capacity (the caller's ICE cache): listed, but unavailable */
  unavailable: z.array(z.object({ instanceType: z.string().min(1), zone: z.string().min(1), capacityType: CapacityTypeSchema })).optional(),
});
export type InstanceTypeQuery = z.input<typeof InstanceTypeQuerySchema>;

export interface InstanceTypeProvider {
  /** Launchable types of the region sorted by name; throws InstanceTypesUnavailableError only when nothing is cached. */
  list(query: InstanceTypeQuery): Promise<InstanceType[]>;
}

export interface InstanceTypeProviderDeps {
  ec2: Ec2Api;
  region: string;
  clock?: Clock;
  logger?: CloudLogger;
  /** defaults to defaultRetryPolicy over `clock` and `logger` */
  retry?: RetryDeps;
  refreshIntervalMs?: Partial<RefreshIntervals>;
  retryAfterFailureMs?: number;
  /** defaults to the bundled table (us-east-1, used for every region as Karpenter's static fallback does) */
  onDemandPrices?: OnDemandPriceTable;
  /** The Pricing API for this cluster; without it, on-demand prices are the table's alone. */
  pricing?: PricingApi;
  /** Built from the three above when absent (tests pass their own). */
  onDemandPriceSource?: OnDemandPriceSource;
  /** Each read's last good copy, kept across restarts under `scope` (the cluster's name: offerings are the account's). */
  catalogStore?: { store: CatalogStore; scope: string };
}

/** A spot price row as read (core/instancetypes parses SpotPrice and Timestamp to numbers), as stored. */
const StoredSpotPriceSchema = z.object({
  InstanceType: z.string().min(1),
  AvailabilityZone: z.string().min(1),
  ProductDescription: z.string().optional(),
  SpotPrice: z.number().nonnegative(),
  Timestamp: z.number().int(),
});

/** A stored read of rows, served grouped by instance type as the provider indexes it. */
function grouped<T extends { InstanceType: string }>(rows: PersistedRead<T[]> | undefined): PersistedRead<ReadonlyMap<string, readonly T[]>> | undefined {
  if (!rows) return undefined;
  return {
    read: async () => {
      const stored = await rows.read();
      return stored && { value: groupByInstanceType(stored.value), loadedAt: stored.loadedAt };
    },
    write: (snapshot) => rows.write({ value: [...snapshot.value.values()].flat(), loadedAt: snapshot.loadedAt }),
  };
}

/** The raw reads, indexed by instance type once per refresh rather than once per list. */
interface Sources {
  instanceTypes: RefreshingValue<readonly InstanceTypeInfo[]>;
  offerings: RefreshingValue<ReadonlyMap<string, readonly InstanceTypeOffering[]>>;
  spotPrices: RefreshingValue<ReadonlyMap<string, readonly SpotPrice[]>>;
}

export function createInstanceTypeProvider(deps: InstanceTypeProviderDeps): InstanceTypeProvider {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const retry = deps.retry ?? { policy: defaultRetryPolicy, clock, logger };
  const reader: Ec2Reader = { ec2: deps.ec2, logger, retry };
  const intervals = { ...defaultRefreshIntervals, ...deps.refreshIntervalMs };
  const prices = deps.onDemandPriceSource ?? createOnDemandPriceSource({
    region: deps.region,
    bundled: deps.onDemandPrices ?? bundledOnDemandPrices(),
    ...(deps.pricing ? { pricing: deps.pricing } : {}),
    retry,
    clock,
    logger,
  });
  const cached = <T>(name: InstanceTypeSource, intervalMs: number, load: () => Promise<T>, persisted?: PersistedRead<T>): RefreshingValue<T> =>
    createRefreshingValue({ name: `${name} in ${deps.region}`, load, intervalMs, retryAfterFailureMs: deps.retryAfterFailureMs ?? defaultRetryAfterFailureMs, clock, logger, ...(persisted ? { persisted } : {}) });
  const stored = <T>(source: InstanceTypeSource, rows: z.ZodType<T>): PersistedRead<T> | undefined =>
    deps.catalogStore?.store.read({ scope: deps.catalogStore.scope, region: deps.region, source }, rows);
  const sources: Sources = {
    instanceTypes: cached('DescribeInstanceTypes', intervals.instanceTypes, () => readInstanceTypes(reader), stored('DescribeInstanceTypes', z.array(instanceTypeInfoSchema))),
    offerings: cached(
      'DescribeInstanceTypeOfferings',
      intervals.offerings,
      async () => groupByInstanceType(await readInstanceTypeOfferings(reader)),
      grouped(stored('DescribeInstanceTypeOfferings', z.array(instanceTypeOfferingSchema))),
    ),
    spotPrices: cached(
      'DescribeSpotPriceHistory',
      intervals.spotPrices,
      async () => groupByInstanceType(latestSpotPrices(await readSpotPriceHistory(reader, clock.now()))),
      grouped(stored('DescribeSpotPriceHistory', z.array(StoredSpotPriceSchema))),
    ),
  };

  const builds = new Map<string, { infos: unknown; offerings: unknown; spotPrices: unknown; onDemand: unknown; builtAt: number; instanceTypes: readonly InstanceType[] }>();
  const snapshotOf = async <T>(source: InstanceTypeSource, value: RefreshingValue<T>): Promise<Snapshot<T>> => {
    try {
      return await value.get();
    } catch (error) {
      throw new InstanceTypesUnavailableError(
        deps.region,
        source,
        error,
        `no instance types for ${deps.region}: ${source} failed and nothing is cached yet: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  return {
    async list(query) {
      const parsed = InstanceTypeQuerySchema.safeParse(query);
      if (!parsed.success) {
        throw new InvalidRequestError('ListInstanceTypes', 'InvalidQuery', `instance-type query rejected: ${z.prettifyError(parsed.error)}`);
      }
      // Started together: a failure of one read still lets the others fill their caches.
      const [infos, offeringsByType, spotByType] = await Promise.all([
        snapshotOf('DescribeInstanceTypes', sources.instanceTypes),
        snapshotOf('DescribeInstanceTypeOfferings', sources.offerings),
        snapshotOf('DescribeSpotPriceHistory', sources.spotPrices),
      ]);
      const { unavailable, ...options } = parsed.data;
      const now = clock.now().getTime();
      const onDemand = prices.current().prices;
      const key = canonicalJson(options);
      const entry = builds.get(key);
      const fresh = entry !== undefined && entry.infos === infos && entry.offerings === offeringsByType && entry.spotPrices === spotByType && entry.onDemand === onDemand && now >= entry.builtAt && now - entry.builtAt < BUILD_REUSE_MS;
      if (fresh) return withUnavailable(entry.instanceTypes, unavailable ?? []);
      const instanceTypes: InstanceType[] = [];
      let skipped = 0;
      // One type at a time, with only that type's offerings and prices: core matches spot
      // rows by scanning the history it is given, which over a whole region is
      // types × zones × rows (~10^8 for real EC2) instead of a few rows per type.
      for (const info of infos.value) {
        const built = buildInstanceTypes([info], offeringsByType.value.get(info.InstanceType) ?? [], {
          ...options,
          region: deps.region,
          onDemandPrices: onDemand,
          spotPriceHistory: spotByType.value.get(info.InstanceType) ?? [],
          now,
        });
        instanceTypes.push(...built.instanceTypes);
        skipped += built.skipped.length;
      }
      logger.debug({ region: deps.region, instanceTypes: instanceTypes.length, skipped }, `instance types for ${deps.region}`);
      if (builds.size >= MAX_BUILDS) builds.clear();
      builds.set(key, { infos, offerings: offeringsByType, spotPrices: spotByType, onDemand, builtAt: now, instanceTypes });
      return withUnavailable(instanceTypes, unavailable ?? []);
    },
  };
}

/**
 * A built list is reused while its reads (their snapshots, by identity) and the on-demand
 * prices are those it was built from, for at most this long: a spot observation's age
 * decides whether it is used (core/instancetypes/pricing.ts), and a source whose refresh
 * keeps failing serves the same snapshot for hours. Building the region's ~800 types takes
 * 0.3–1 s of the worker's event loop; every plan, simulation and launch asks (measured in
 * `npm run scale -- --worker-cpu-prof`: 158 of the workers' ~1,080 busy CPU-seconds).
 */
const BUILD_REUSE_MS = 60_000;
/** Distinct queries (AMI family, kubelet, root volume, zones) kept built per provider. */
const MAX_BUILDS = 16;

/**
 * The list with the held offerings marked unavailable, as building with
 * `unavailableOfferings` marks them: a copy where one is held, the shared type otherwise.
 */
function withUnavailable(types: readonly InstanceType[], held: readonly { instanceType: string; zone: string; capacityType: CapacityType }[]): InstanceType[] {
  if (held.length === 0) return [...types];
  const keys = new Set(held.map((o) => offeringKey(o.capacityType, o.instanceType, o.zone)));
  const heldTypes = new Set(held.map((o) => o.instanceType));
  return types.map((type) =>
    !heldTypes.has(type.name)
      ? type
      : { ...type, offerings: type.offerings.map((o) => (o.available && keys.has(offeringKey(o.capacityType, type.name, o.zone)) ? { ...o, available: false } : o)) },
  );
}

function groupByInstanceType<T extends { InstanceType: string }>(rows: readonly T[]): ReadonlyMap<string, readonly T[]> {
  const byType = new Map<string, T[]>();
  for (const row of rows) {
    const group = byType.get(row.InstanceType);
    if (group) group.push(row);
    else byType.set(row.InstanceType, [row]);
  }
  return byType;
}

/**
 * Keeps, per instance type, zone and product description, only the rows with the latest
 * timestamp. core's chooseSpotPrice looks only at the latest row of a (type, zone) after
 * filtering by description, which is always among these, so the choice is unchanged while
 * a day of history shrinks to one row per pool.
 */
export function latestSpotPrices(rows: readonly SpotPrice[]): SpotPrice[] {
  const latest = new Map<string, SpotPrice[]>();
  for (const row of rows) {
    const key = JSON.stringify([row.InstanceType, row.AvailabilityZone, row.ProductDescription ?? null]);
    const kept = latest.get(key);
    const keptAt = kept?.[0]?.Timestamp;
    if (kept === undefined || keptAt === undefined || row.Timestamp > keptAt) latest.set(key, [row]);
    else if (row.Timestamp === keptAt) kept.push(row);
  }
  return [...latest.values()].flat();
}
