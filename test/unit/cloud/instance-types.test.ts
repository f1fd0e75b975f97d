import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildInstanceTypes,
  bundledCatalogData,
  bundledOnDemandPrices,
  spotPriceEstimateFraction,
  spotPriceSchema,
  type InstanceType,
} from '../../../core/instancetypes';
import {
  createInstanceTypeProvider,
  isInstanceTypesUnavailableError,
  isInvalidRequestError,
  type CloudLogger,
  type InstanceTypeProviderDeps,
  type InstanceTypeQuery,
} from '../../../activities/cloud';
import { latestSpotPrices } from '../../../activities/cloud/instance-types';
import { createFileCatalogStore } from '../../../activities/cloud/catalog-store';
import { anAwsError, fakeInstanceTypeEc2, type FakeInstanceTypeEc2, type FakeOperation } from './fake-instance-type-ec2';

const HOUR = 60 * 60_000;
const MINUTE = 60_000;
const T0 = Date.parse('2025-06-01T12:00:00Z');
const TYPES = ['c6g.large', 'm5.large', 'm5.xlarge', 't3.micro'];
const ALL_OPERATIONS: FakeOperation[] = ['DescribeInstanceTypes', 'DescribeInstanceTypeOfferings', 'DescribeSpotPriceHistory'];

const catalogInfos = () => bundledCatalogData().instanceTypes.filter((info) => TYPES.includes(info.InstanceType));
const catalogOfferings = () => bundledCatalogData().offeringsIn('us-east-1').filter((o) => TYPES.includes(o.InstanceType));

/** EC2's answers for a few real types, taken from the bundled catalog so the mapping is known. */
function someRegionData(): FakeInstanceTypeEc2['data'] {
  return {
    instanceTypes: catalogInfos(),
    offerings: catalogOfferings(),
    spotPrices: [
      // plausible: an hour old, 36% of on-demand
      aSpotPrice('m5.large', 'us-east-1a', '0.0350', T0 - HOUR),
      // an older, superseded observation of the same pool
      aSpotPrice('m5.large', 'us-east-1a', '0.0410', T0 - 3 * HOUR),
      // moto's constant: 2006 and 0.01% of on-demand
      aSpotPrice('m5.large', 'us-east-1b', '0.00001', Date.parse('2006-01-02T15:04:05Z')),
    ],
  };
}

function aSpotPrice(instanceType: string, zone: string, price: string, at: number) {
  return { InstanceType: instanceType, AvailabilityZone: zone, ProductDescription: 'Linux/UNIX', SpotPrice: price, Timestamp: new Date(at) };
}

function aFakeClock(start = T0) {
  let now = start;
  return {
    clock: { now: () => new Date(now), sleep: async () => {} },
    advance: (ms: number) => void (now += ms),
  };
}

function aRecordingLogger() {
  const warnings: string[] = [];
  const logger: CloudLogger = { debug: () => {}, info: () => {}, warn: (_obj, msg) => void warnings.push(msg) };
  return { logger, warnings };
}

/** A provider at `at`; with `store`, its reads kept in that directory under `scope` (a worker process of its own). */
function aProvider(ec2: FakeInstanceTypeEc2, overrides: Partial<InstanceTypeProviderDeps> = {}, o: { at?: number; store?: { dir: string; scope: string } } = {}) {
  const time = aFakeClock(o.at);
  const { logger, warnings } = aRecordingLogger();
  const provider = createInstanceTypeProvider({
    ec2: ec2.api,
    region: 'us-east-1',
    clock: time.clock,
    logger,
    retry: { policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 }, clock: time.clock, logger },
    ...(o.store ? { catalogStore: { store: createFileCatalogStore(o.store.dir, logger), scope: o.store.scope } } : {}),
    ...overrides,
  });
  return { provider, advance: time.advance, warnings };
}

const names = (types: readonly InstanceType[]) => types.map((t) => t.name);
const offering = (types: readonly InstanceType[], name: string, zone: string, capacityType: 'spot' | 'on-demand') =>
  types.find((t) => t.name === name)?.offerings.find((o) => o.zone === zone && o.capacityType === capacityType);
const callCounts = (ec2: FakeInstanceTypeEc2) => Object.fromEntries(ALL_OPERATIONS.map((op) => [op, ec2.callsOf(op).length]));

describe('instance-type provider: reading EC2', () => {
  it('pages through all three reads with the parameters Karpenter uses', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    ec2.pageSize = { DescribeInstanceTypes: 3, DescribeInstanceTypeOfferings: 7, DescribeSpotPriceHistory: 1 };
    const { provider } = aProvider(ec2);

    const types = await provider.list({ amiFamily: 'AL2023' });

    expect(names(types)).toEqual(TYPES);
    expect(ec2.callsOf('DescribeInstanceTypes').map((c) => [c.input.MaxResults, c.input.NextToken])).toEqual([
      [100, undefined],
      [100, 'page-3'],
    ]);
    // 4 types × 5 zones = 20 offerings in pages of 7
    expect(ec2.callsOf('DescribeInstanceTypeOfferings').map((c) => c.input.NextToken)).toEqual([undefined, 'page-7', 'page-14']);
    expect(ec2.callsOf('DescribeInstanceTypeOfferings').every((c) => c.input.LocationType === 'availability-zone')).toBe(true);
    const spotCalls = ec2.callsOf('DescribeSpotPriceHistory');
    expect(spotCalls.map((c) => c.input.NextToken)).toEqual([undefined, 'page-1', 'page-2']);
    expect(spotCalls[0]?.input).toMatchObject({ ProductDescriptions: expect.arrayContaining(['Linux/UNIX']), StartTime: new Date(T0 - 24 * HOUR) });
  });

  it('maps the answers through core/instancetypes exactly as the offline catalog does', async () => {
    const data = someRegionData();
    const { provider } = aProvider(fakeInstanceTypeEc2(data));

    const types = await provider.list({ amiFamily: 'AL2023' });

    // one call over the whole region with the full history: the provider's per-type calls
    // over the latest rows must not change a thing
    const expected = buildInstanceTypes(catalogInfos(), catalogOfferings(), {
      region: 'us-east-1',
      amiFamily: 'AL2023',
      onDemandPrices: bundledOnDemandPrices().onDemand,
      spotPriceHistory: data.spotPrices.map((row) => spotPriceSchema.parse(row)),
      now: T0,
    });
    expect(types).toEqual(expected.instanceTypes);
    expect(types.find((t) => t.name === 'm5.large')?.allocatable).toEqual({ cpu: '1930m', 'ephemeral-storage': '17Gi', memory: '6903Mi', pods: '29' });
  });

  it('uses a plausible spot price and estimates where the observation is implausible (moto: 0.00001 from 2006)', async () => {
    const { provider } = aProvider(fakeInstanceTypeEc2(someRegionData()));

    const types = await provider.list({ amiFamily: 'AL2023' });

    expect(offering(types, 'm5.large', 'us-east-1a', 'spot')?.price).toBe(0.035);
    expect(offering(types, 'm5.large', 'us-east-1b', 'spot')?.price).toBeCloseTo(0.096 * spotPriceEstimateFraction, 6);
    expect(offering(types, 'm5.large', 'us-east-1c', 'spot')?.price).toBeCloseTo(0.0384, 6);
    expect(offering(types, 'm5.large', 'us-east-1a', 'on-demand')?.price).toBe(0.096);
  });

  it('applies the node class: AMI family, kubelet settings, zones and the offerings known to be exhausted', async () => {
    const { provider } = aProvider(fakeInstanceTypeEc2(someRegionData()));

    const types = await provider.list({
      amiFamily: 'Custom',
      kubeletProfile: 'openshift-static',
      kubelet: { maxPods: 50 },
      zones: ['us-east-1a', 'us-east-1b'],
      unavailable: [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' }],
    });

    const m5 = types.find((t) => t.name === 'm5.large');
    expect(m5?.capacity.pods).toBe('50');
    expect(m5?.capacity['ephemeral-storage']).toBe('120Gi');
    expect(m5?.offerings.map((o) => `${o.zone}/${o.capacityType}/${o.available}`)).toEqual([
      'us-east-1a/on-demand/true',
      'us-east-1a/spot/false',
      'us-east-1b/on-demand/true',
      'us-east-1b/spot/true',
    ]);
  });

  it('drops an entry it cannot parse with a warning and keeps the rest', async () => {
    const data = someRegionData();
    data.instanceTypes.push({ InstanceType: 'x9.broken', VCpuInfo: { DefaultVCpus: 'many' } });
    const { provider, warnings } = aProvider(fakeInstanceTypeEc2(data));

    expect(names(await provider.list({ amiFamily: 'AL2023' }))).toEqual(TYPES);
    expect(warnings).toEqual([expect.stringContaining('DescribeInstanceTypes: dropped 1 item(s)')]);
  });

  it('rejects a malformed query with a typed error naming the field', async () => {
    const { provider } = aProvider(fakeInstanceTypeEc2(someRegionData()));
    // as it would arrive in an activity input, unchecked
    const query: InstanceTypeQuery = JSON.parse('{"amiFamily":"Windows2022"}');
    const error = await provider.list(query).catch((e: unknown) => e);
    if (!isInvalidRequestError(error)) throw error;
    expect(error.message).toContain('amiFamily');
  });
});

describe('instance-type provider: caching', () => {
  it('answers from the cache inside the interval, re-reads offerings and spot prices after 5 min and types after 1 h', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance } = aProvider(ec2);

    await provider.list({ amiFamily: 'AL2023' });
    await provider.list({ amiFamily: 'AL2' });
    advance(4 * MINUTE);
    await provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 1, DescribeSpotPriceHistory: 1 });

    advance(2 * MINUTE);
    await provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });

    advance(HOUR);
    await provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 2, DescribeInstanceTypeOfferings: 3, DescribeSpotPriceHistory: 3 });
  });

  it('serves what EC2 says after a refresh: a zone withdrawn from the offerings disappears', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance } = aProvider(ec2);
    expect(offering(await provider.list({ amiFamily: 'AL2023' }), 'm5.large', 'us-east-1f', 'on-demand')).toBeDefined();

    ec2.data = { ...ec2.data, offerings: catalogOfferings().filter((o) => !(o.InstanceType === 'm5.large' && o.Location === 'us-east-1f')) };
    expect(offering(await provider.list({ amiFamily: 'AL2023' }), 'm5.large', 'us-east-1f', 'on-demand')).toBeDefined();
    advance(5 * MINUTE);
    expect(offering(await provider.list({ amiFamily: 'AL2023' }), 'm5.large', 'us-east-1f', 'on-demand')).toBeUndefined();
  });

  it('honours configured intervals', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance } = aProvider(ec2, { refreshIntervalMs: { spotPrices: 30_000 } });
    await provider.list({ amiFamily: 'AL2023' });
    advance(30_000);
    await provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 1, DescribeSpotPriceHistory: 2 });
  });

  it('lets concurrent callers share one read (single flight), cold and on refresh', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance } = aProvider(ec2);

    let release = ec2.hold();
    const cold = [provider.list({ amiFamily: 'AL2023' }), provider.list({ amiFamily: 'AL2' }), provider.list({ amiFamily: 'Bottlerocket' })];
    await flushMicrotasks();
    release();
    const answers = await Promise.all(cold);
    expect(answers.map((types) => types.length)).toEqual([4, 4, 4]);
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 1, DescribeSpotPriceHistory: 1 });

    advance(5 * MINUTE);
    release = ec2.hold();
    const refreshing = [provider.list({ amiFamily: 'AL2023' }), provider.list({ amiFamily: 'AL2023' })];
    await flushMicrotasks();
    release();
    await Promise.all(refreshing);
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });
  });
});

describe('instance-type provider: built lists reused', () => {
  const sameObjects = (a: readonly InstanceType[], b: readonly InstanceType[]) => a.length === b.length && a.every((t, i) => t === b[i]);

  it('a second list of the same query inside a minute is the same build; another query, a refresh or a minute later builds again', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance } = aProvider(ec2);
    const first = await provider.list({ amiFamily: 'AL2023', zones: ['us-east-1a'] });
    advance(30_000);
    expect(sameObjects(await provider.list({ zones: ['us-east-1a'], amiFamily: 'AL2023' }), first)).toBe(true);
    expect(sameObjects(await provider.list({ amiFamily: 'AL2023', zones: ['us-east-1b'] }), first)).toBe(false);
    advance(30_000);
    const later = await provider.list({ amiFamily: 'AL2023', zones: ['us-east-1a'] });
    expect(sameObjects(later, first)).toBe(false);
    expect(later).toEqual(first);
    // offerings and spot prices re-read after 5 min: built from the new answers
    ec2.data = { ...ec2.data, offerings: catalogOfferings().filter((o) => !(o.InstanceType === 'm5.large' && o.Location === 'us-east-1a')) };
    advance(5 * MINUTE);
    expect(offering(await provider.list({ amiFamily: 'AL2023', zones: ['us-east-1a'] }), 'm5.large', 'us-east-1a', 'on-demand')).toBeUndefined();
  });

  it('held offerings on a reused build are marked exactly as a build with them would mark them, and the build itself stays unmarked', async () => {
    const held = [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' as const }, { instanceType: 't3.micro', zone: 'us-east-1b', capacityType: 'on-demand' as const }];
    const reusing = aProvider(fakeInstanceTypeEc2(someRegionData())).provider;
    const plain = await reusing.list({ amiFamily: 'AL2023' });
    const marked = await reusing.list({ amiFamily: 'AL2023', unavailable: held });
    const fresh = await aProvider(fakeInstanceTypeEc2(someRegionData())).provider.list({ amiFamily: 'AL2023', unavailable: held });
    expect(marked).toEqual(fresh);
    expect(offering(marked, 'm5.large', 'us-east-1a', 'spot')?.available).toBe(false);
    expect(offering(marked, 't3.micro', 'us-east-1b', 'on-demand')?.available).toBe(false);
    expect(offering(await reusing.list({ amiFamily: 'AL2023' }), 'm5.large', 'us-east-1a', 'spot')?.available).toBe(true);
    expect(plain).toEqual(await reusing.list({ amiFamily: 'AL2023' }));
  });
});

describe('instance-type provider: failures', () => {
  it('serves the last good copy with a warning when a refresh fails, and waits before trying again', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, advance, warnings } = aProvider(ec2, { retryAfterFailureMs: 30_000 });
    const first = await provider.list({ amiFamily: 'AL2023' });

    advance(5 * MINUTE);
    ec2.data = { ...ec2.data, offerings: [] };
    ec2.failNext('DescribeInstanceTypeOfferings', anAwsError('UnauthorizedOperation', 403));
    await expect(provider.list({ amiFamily: 'AL2023' })).resolves.toEqual(first);
    expect(warnings).toEqual([expect.stringMatching(/^refreshing DescribeInstanceTypeOfferings in us-east-1 failed; serving the copy from 2025-06-01T12:00:00/)]);

    advance(20_000);
    await provider.list({ amiFamily: 'AL2023' });
    expect(ec2.callsOf('DescribeInstanceTypeOfferings')).toHaveLength(2);

    advance(10_000);
    ec2.data = someRegionData();
    await provider.list({ amiFamily: 'AL2023' });
    expect(ec2.callsOf('DescribeInstanceTypeOfferings')).toHaveLength(3);
  });

  it('retries a throttled read inside one refresh (callEc2) before falling back', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider, warnings } = aProvider(ec2);
    ec2.failNext('DescribeSpotPriceHistory', anAwsError('RequestLimitExceeded', 503));

    await expect(provider.list({ amiFamily: 'AL2023' })).resolves.toHaveLength(4);
    expect(ec2.callsOf('DescribeSpotPriceHistory')).toHaveLength(2);
    expect(warnings).toEqual([expect.stringContaining('DescribeSpotPriceHistory failed (RequestLimitExceeded); retrying')]);
  });

  it.each([
    // attempts: callEc2 does not retry a denial; the test policy allows 2 attempts otherwise
    ['denied', anAwsError('UnauthorizedOperation', 403), 1, false, 'ec2:DescribeInstanceTypes'],
    ['still throttled after the retry budget', anAwsError('RequestLimitExceeded', 503), 2, true, 'RequestLimitExceeded'],
  ])('fails with InstanceTypesUnavailableError when nothing is cached and the read is %s', async (_case, awsError, attempts, retryable, mentioned) => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const { provider } = aProvider(ec2);
    ec2.failNext('DescribeInstanceTypes', awsError, attempts);

    const error = await provider.list({ amiFamily: 'AL2023' }).catch((e: unknown) => e);
    if (!isInstanceTypesUnavailableError(error)) throw error;
    expect(error).toMatchObject({ region: 'us-east-1', source: 'DescribeInstanceTypes', retryable });
    expect(error.message).toContain(mentioned);
    expect(ec2.callsOf('DescribeInstanceTypes')).toHaveLength(attempts);

    // nothing failed is remembered: the next call reads again and succeeds
    await expect(provider.list({ amiFamily: 'AL2023' })).resolves.toHaveLength(4);
  });

  it('fails when a response cannot be understood at all rather than returning an empty region', async () => {
    const data = someRegionData();
    data.offerings = [{ InstanceType: 'm5.large' }, { Location: 'us-east-1a' }];
    const { provider } = aProvider(fakeInstanceTypeEc2(data));

    const error = await provider.list({ amiFamily: 'AL2023' }).catch((e: unknown) => e);
    if (!isInstanceTypesUnavailableError(error)) throw error;
    expect(error).toMatchObject({ source: 'DescribeInstanceTypeOfferings', retryable: false });
    expect(error.message).toContain('none of 2 item(s) parsed');
  });

  it('refuses to page forever when EC2 repeats a NextToken', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    ec2.pageSize.DescribeSpotPriceHistory = 1;
    ec2.pageToken = () => 'again';
    const { provider } = aProvider(ec2);

    const error = await provider.list({ amiFamily: 'AL2023' }).catch((e: unknown) => e);
    if (!isInstanceTypesUnavailableError(error)) throw error;
    expect(error.message).toContain('NextToken again twice');
  });
});

describe('latestSpotPrices', () => {
  it('keeps only the newest rows per type, zone and product description', () => {
    const row = (zone: string, price: number, at: number, description = 'Linux/UNIX') => ({ InstanceType: 'm5.large', AvailabilityZone: zone, ProductDescription: description, SpotPrice: price, Timestamp: at });
    expect(latestSpotPrices([row('a', 1, 1), row('a', 2, 3), row('a', 3, 3), row('a', 4, 2), row('b', 5, 1), row('a', 6, 9, 'Linux/UNIX (Amazon VPC)')])).toEqual([
      row('a', 2, 3),
      row('a', 3, 3),
      row('b', 5, 1),
      row('a', 6, 9, 'Linux/UNIX (Amazon VPC)'),
    ]);
  });
});

/** Lets every started read reach the fake before it is released. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('instance-type provider: kept across restarts (catalog-store.ts)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'autonode-catalog-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A worker process: its own provider (an empty memory) over the one directory, at `at`. */
  const aProcess = (ec2: FakeInstanceTypeEc2, at: number, scope = 'cluster-a') => aProvider(ec2, {}, { at, store: { dir, scope } });

  it('a restarted worker plans from the stored reads without calling EC2, and sees exactly what the first one saw', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const first = await aProcess(ec2, T0).provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 1, DescribeSpotPriceHistory: 1 });
    // spot prices and timestamps are numbers once read: they come back the same
    const restarted = await aProcess(ec2, T0 + 2 * MINUTE).provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 1, DescribeSpotPriceHistory: 1 });
    expect(restarted).toEqual(first);
    expect(offering(restarted, 'm5.large', 'us-east-1a', 'spot')?.price).toBe(offering(first, 'm5.large', 'us-east-1a', 'spot')?.price);
  });

  it('a stored read older than its interval is read again (offerings and prices after 5 min, types after 1 h)', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    await aProcess(ec2, T0).provider.list({ amiFamily: 'AL2023' });
    await aProcess(ec2, T0 + 6 * MINUTE).provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });
    // what the second process read is stored in turn: a third inside its interval calls nothing
    await aProcess(ec2, T0 + 8 * MINUTE).provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });
    await aProcess(ec2, T0 + 2 * HOUR).provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 2, DescribeInstanceTypeOfferings: 3, DescribeSpotPriceHistory: 3 });
  });

  it('an old stored copy is served, with a warning, when EC2 fails: a restart in an outage still plans', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const first = await aProcess(ec2, T0).provider.list({ amiFamily: 'AL2023' });
    ec2.failNext('DescribeInstanceTypeOfferings', anAwsError('RequestLimitExceeded', 503), 5);
    const later = aProcess(ec2, T0 + 10 * MINUTE);
    await expect(later.provider.list({ amiFamily: 'AL2023' })).resolves.toEqual(first);
    expect(later.warnings).toContainEqual(expect.stringMatching(/^refreshing DescribeInstanceTypeOfferings in us-east-1 failed; serving the copy from 2025-06-01T12:00:00/));
    // without a store the same outage leaves nothing to plan with
    const cold = fakeInstanceTypeEc2(someRegionData());
    cold.failNext('DescribeInstanceTypeOfferings', anAwsError('RequestLimitExceeded', 503), 5);
    const refused: unknown = await aProvider(cold).provider.list({ amiFamily: 'AL2023' }).catch((e: unknown) => e);
    expect(isInstanceTypesUnavailableError(refused)).toBe(true);
  });

  it('a stored copy dated in the future (a clock gone wrong) is never taken as fresh, only as a fallback', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    await aProcess(ec2, T0 + HOUR).provider.list({ amiFamily: 'AL2023' });
    // a process whose clock says an hour earlier reads EC2 again; when EC2 fails it serves the copy, and retries 30 s later
    const early = aProcess(ec2, T0);
    ec2.failNext('DescribeInstanceTypeOfferings', anAwsError('RequestLimitExceeded', 503), 2);
    await expect(early.provider.list({ amiFamily: 'AL2023' })).resolves.toHaveLength(4);
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 2, DescribeInstanceTypeOfferings: 3, DescribeSpotPriceHistory: 2 });
    early.advance(31_000);
    await early.provider.list({ amiFamily: 'AL2023' });
    expect(ec2.callsOf('DescribeInstanceTypeOfferings')).toHaveLength(4);
  });

  it('each cluster reads only its own stored copy (offerings are the account\'s)', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    await aProcess(ec2, T0, 'cluster-a').provider.list({ amiFamily: 'AL2023' });
    await aProcess(ec2, T0, 'cluster-b').provider.list({ amiFamily: 'AL2023' });
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 2, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });
    // a scope that tries to climb out of the directory stays in it
    await aProcess(ec2, T0, '../../etc/x').provider.list({ amiFamily: 'AL2023' });
    expect(readdirSync(dir).every((f) => f.endsWith('.json'))).toBe(true);
    expect(readdirSync(dir)).toHaveLength(9);
  });

  it('a stored copy that cannot be read (corrupt, another version) is ignored with a warning and read again', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    await aProcess(ec2, T0).provider.list({ amiFamily: 'AL2023' });
    const offerings = readdirSync(dir).find((f) => f.includes('DescribeInstanceTypeOfferings'));
    writeFileSync(join(dir, offerings ?? 'missing'), '{"version":1,"loadedAt":1,"rows":[{"InstanceType":7}]}');
    const spot = readdirSync(dir).find((f) => f.includes('DescribeSpotPriceHistory'));
    writeFileSync(join(dir, spot ?? 'missing'), '{"version":1,"loaded');
    const restarted = aProcess(ec2, T0 + MINUTE);
    expect(names(await restarted.provider.list({ amiFamily: 'AL2023' }))).toEqual(TYPES);
    expect(callCounts(ec2)).toEqual({ DescribeInstanceTypes: 1, DescribeInstanceTypeOfferings: 2, DescribeSpotPriceHistory: 2 });
    // the three stored copies are read at once: their warnings come in any order
    expect([...restarted.warnings].sort()).toEqual([
      expect.stringMatching(/the stored DescribeInstanceTypeOfferings is not a catalog this version reads/),
      expect.stringMatching(/the stored DescribeSpotPriceHistory is not a catalog this version reads/),
    ]);
  });

  it('a directory it cannot write to costs a warning, never a plan', async () => {
    const ec2 = fakeInstanceTypeEc2(someRegionData());
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const { provider, warnings } = aProvider(ec2, {}, { store: { dir: join(file, 'cache'), scope: 'a' } });
    expect(names(await provider.list({ amiFamily: 'AL2023' }))).toEqual(TYPES);
    expect(warnings.filter((w) => /could not be stored/.test(w))).toHaveLength(3);
  });
});
