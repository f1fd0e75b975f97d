// On-demand prices (issue 14, "Catalog and defaults"): from the Pricing API where it is
// reachable, the bundled us-east-1 table as the fallback, per region, cached for 12 h, as
// Karpenter's pricing provider does (providers/pricing/pricing.go; reference §2.5).
import { PricingClient } from '@aws-sdk/client-pricing';
import { bundledCatalogData, bundledOnDemandPrices } from '../../../core/instancetypes';
import { onDemandPricesFromPriceList, pricingEndpointRegion } from '../../../core/instancetypes/pricing';
import {
  createInstanceTypeProvider, createOnDemandPriceSource, createPricingClientFactory, type CloudLogger, type OnDemandPriceSource, type PricingApi,
} from '../../../activities/cloud';
import { pricingEndpointFromConfig } from '../../../workers/main';
import { parseWorkerConfig } from '../../../workers/config';
import { anAwsError } from './fake-sts';
import { FakePricing, aPriceListProduct, servePricingApi, type PriceListData } from './fake-pricing';
import { fakeInstanceTypeEc2 } from './fake-instance-type-ec2';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-11-24T12:00:00Z');
const bundled = bundledOnDemandPrices();

/** eu-west-1's list: m5.large dearer than us-east-1's 0.096, one metal type, c6g.large. */
const euWest1: PriceListData = {
  'eu-west-1': {
    shared: [aPriceListProduct('m5.large', '0.1070000000'), aPriceListProduct('c6g.large', '0.0776000000'), aPriceListProduct('m5.xlarge', '0.2140000000')],
    metal: [aPriceListProduct('m5.metal', '5.1360000000', { tenancy: 'Dedicated' })],
  },
};

function aWorld(options: { region?: string; pricing?: PricingApi } = {}) {
  let now = T0;
  const clock = { now: () => new Date(now), sleep: async () => {} };
  const warnings: string[] = [];
  const logged: string[] = [];
  const logger: CloudLogger = {
    debug: () => {},
    info: (_o, msg) => void logged.push(msg),
    warn: (o, msg) => void warnings.push(`${msg} ${JSON.stringify(o)}`),
  };
  const source = createOnDemandPriceSource({
    region: options.region ?? 'eu-west-1',
    bundled,
    ...(options.pricing ? { pricing: options.pricing } : {}),
    retry: { policy: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, clock, logger },
    clock,
    logger,
  });
  return { source, warnings, logged, advance: (ms: number) => void (now += ms) };
}

/** current() starts a due refresh; settled() waits for it. */
async function refreshed(source: OnDemandPriceSource) {
  source.current();
  return source.settled();
}

describe('the Price List parser', () => {
  it('reads each product\'s on-demand price per hour, in the region\'s currency, skipping zero prices and foreign documents', () => {
    const page = onDemandPricesFromPriceList([
      aPriceListProduct('m5.large', '0.1070000000'),
      aPriceListProduct('t3.nano', '0.0000000000'),
      JSON.stringify({ product: { attributes: {} }, terms: {} }),
      '{not json',
      JSON.stringify({ terms: 'not an object' }),
    ], 'USD');
    expect(page).toEqual({ prices: { 'm5.large': 0.107 }, unreadable: 2 });
    expect(onDemandPricesFromPriceList([aPriceListProduct('m5.large', '0.88', { currency: 'CNY' })], 'CNY').prices).toEqual({ 'm5.large': 0.88 });
    expect(onDemandPricesFromPriceList([aPriceListProduct('m5.large', '0.88', { currency: 'CNY' })], 'USD').prices).toEqual({});
  });

  it.each([
    ['us-east-1', 'us-east-1'], ['us-west-2', 'us-east-1'], ['ca-central-1', 'us-east-1'],
    ['eu-west-1', 'eu-central-1'], ['ap-southeast-2', 'ap-south-1'], ['cn-north-1', 'cn-northwest-1'],
  ])('asks the Pricing API nearest %s: %s', (region, endpointRegion) => {
    expect(pricingEndpointRegion(region)).toBe(endpointRegion);
  });
});

describe('the on-demand price source', () => {
  it('starts from the bundled table, then serves the region\'s Pricing API prices merged over it', async () => {
    const pricing = new FakePricing(euWest1);
    const { source } = aWorld({ pricing });
    // before any answer: the table (us-east-1's m5.large 0.096), as Karpenter's initial prices
    expect(source.current()).toEqual({ prices: bundled.onDemand, source: 'bundled' });
    const after = await source.settled();
    expect(after.source).toBe('pricing-api');
    expect(after.refreshedAt).toBe(T0);
    expect(after.prices['m5.large']).toBe(0.107);
    expect(after.prices['m5.metal']).toBe(5.136);
    // a type the API did not list keeps the table's price rather than vanishing
    expect(after.prices['r5.large']).toBe(bundled.onDemand['r5.large']);
  });

  it('asks for exactly Karpenter\'s product sets in the cluster\'s region, following every page', async () => {
    const pricing = new FakePricing(euWest1, 2);
    const { source } = aWorld({ pricing });
    await refreshed(source);
    const termsOf = (i: number) => Object.fromEntries((pricing.requests[i]?.Filters ?? []).map((f) => [f.Field, f.Value]));
    // shared: 3 products in pages of 2 → 2 requests; metal: 1
    expect(pricing.requests).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      expect(termsOf(i)).toMatchObject({ regionCode: 'eu-west-1', serviceCode: 'AmazonEC2', preInstalledSw: 'NA', operatingSystem: 'Linux', capacitystatus: 'Used', marketoption: 'OnDemand' });
      expect(pricing.requests[i]?.ServiceCode).toBe('AmazonEC2');
      expect(pricing.requests[i]?.Filters?.every((f) => f.Type === 'TERM_MATCH')).toBe(true);
    }
    const sets = pricing.requests.map((_, i) => `${String(termsOf(i).tenancy)}/${String(termsOf(i).productFamily)}`).sort();
    expect(sets).toEqual(['Dedicated/Compute Instance (bare metal)', 'Shared/Compute Instance', 'Shared/Compute Instance']);
    expect(pricing.requests.map((r) => r.NextToken)).toContain('2');
  });

  it('refreshes every 12 hours, not before', async () => {
    const pricing = new FakePricing(euWest1, 10);
    const { source, advance } = aWorld({ pricing });
    await refreshed(source);
    expect(pricing.requests).toHaveLength(2);
    advance(12 * HOUR - 1);
    await refreshed(source);
    expect(pricing.requests).toHaveLength(2);
    pricing.setData({ 'eu-west-1': { shared: [aPriceListProduct('m5.large', '0.1100000000')], metal: [aPriceListProduct('m5.metal', '5.2000000000', { tenancy: 'Dedicated' })] } });
    advance(1);
    const later = await refreshed(source);
    expect(pricing.requests).toHaveLength(4);
    expect(later.prices['m5.large']).toBe(0.11);
    // c6g.large was not in this answer: its last known API price stays
    expect(later.prices['c6g.large']).toBe(0.0776);
  });

  it('keeps the table when the Pricing API fails, says so, and tries again after 5 minutes', async () => {
    const pricing = new FakePricing(euWest1, 10);
    pricing.failNext(anAwsError('AccessDeniedException', 400, 'User is not authorized to perform: pricing:GetProducts'));
    const { source, warnings, advance } = aWorld({ pricing });
    const first = await refreshed(source);
    expect(first).toEqual({ prices: bundled.onDemand, source: 'bundled' });
    expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^refreshing on-demand prices for eu-west-1 from the Pricing API failed; keeping the bundled table .*pricing:GetProducts/)]));
    const calls = pricing.requests.length;
    advance(5 * MINUTE - 1);
    await refreshed(source);
    expect(pricing.requests).toHaveLength(calls);
    advance(1);
    expect((await refreshed(source)).source).toBe('pricing-api');
  });

  it('keeps the last API prices when a later refresh fails or comes back without bare-metal prices', async () => {
    const pricing = new FakePricing(euWest1, 10);
    const { source, advance, warnings } = aWorld({ pricing });
    await refreshed(source);
    pricing.setData({ 'eu-west-1': { shared: [aPriceListProduct('m5.large', '9.9900000000')], metal: [] } });
    advance(12 * HOUR);
    const kept = await refreshed(source);
    expect(kept.prices['m5.large']).toBe(0.107);
    expect(kept.refreshedAt).toBe(T0);
    expect(warnings.at(-1)).toMatch(/returned no on-demand prices for eu-west-1 \(1 shared, 0 bare metal\)/);
  });

  it('never calls without a client, nor in GovCloud, and says where prices come from', async () => {
    const none = aWorld({ region: 'eu-west-1' });
    expect(await refreshed(none.source)).toEqual({ prices: bundled.onDemand, source: 'bundled' });
    expect(none.logged).toEqual([expect.stringContaining('bundled table only: no Pricing API client is configured')]);
    expect(none.warnings).toEqual([expect.stringContaining("no bundled on-demand prices for eu-west-1; using us-east-1's")]);

    const pricing = new FakePricing(euWest1);
    const gov = aWorld({ region: 'us-gov-west-1', pricing });
    expect((await refreshed(gov.source)).source).toBe('bundled');
    expect(pricing.requests).toEqual([]);
    expect(gov.logged).toEqual([expect.stringContaining('AWS serves no Pricing API for us-gov-west-1')]);
  });

  it('runs one refresh at a time however many callers ask', async () => {
    const pricing = new FakePricing(euWest1, 10);
    const { source } = aWorld({ pricing });
    for (let i = 0; i < 5; i++) source.current();
    await source.settled();
    expect(pricing.requests).toHaveLength(2);
  });
});

describe('instance types priced from the Pricing API', () => {
  it('an eu-west-1 offering is priced at eu-west-1\'s on-demand price once the API has answered', async () => {
    const types = ['m5.large', 'c6g.large'];
    const ec2 = fakeInstanceTypeEc2({
      instanceTypes: bundledCatalogData().instanceTypes.filter((i) => types.includes(i.InstanceType)),
      offerings: bundledCatalogData().offeringsIn('eu-west-1').filter((o) => types.includes(o.InstanceType)),
      spotPrices: [],
    });
    const { source } = aWorld({ pricing: new FakePricing(euWest1) });
    const provider = createInstanceTypeProvider({ ec2: ec2.api, region: 'eu-west-1', onDemandPriceSource: source });
    const onDemandOf = (list: Awaited<ReturnType<typeof provider.list>>, name: string) =>
      list.find((t) => t.name === name)?.offerings.find((o) => o.capacityType === 'on-demand')?.price;
    const before = await provider.list({ amiFamily: 'AL2023' });
    expect(onDemandOf(before, 'm5.large')).toBe(bundled.onDemand['m5.large']);
    await source.settled();
    const after = await provider.list({ amiFamily: 'AL2023' });
    expect(onDemandOf(after, 'm5.large')).toBe(0.107);
    expect(onDemandOf(after, 'c6g.large')).toBe(0.0776);
  });
});

describe('conformance: the real PricingClient against the Pricing API\'s wire protocol', () => {
  it('gives the same prices and sends the same requests as the fake', async () => {
    const server = await servePricingApi(euWest1, 2);
    try {
      const clientFor = createPricingClientFactory({
        endpoint: server.endpoint,
        credentialsFor: () => ({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
        endpointPolicy: 'loopback-only',
      });
      const client = clientFor({ name: 'c', region: 'eu-west-1' });
      expect(client).toBeInstanceOf(PricingClient);
      expect(await client.config.region()).toBe('eu-central-1');
      const real = aWorld({ pricing: client });
      const fake = new FakePricing(euWest1, 2);
      const faked = aWorld({ pricing: fake });
      const [fromReal, fromFake] = [await refreshed(real.source), await refreshed(faked.source)];
      expect({ source: fromReal.source, warnings: real.warnings.filter((w) => !w.startsWith('no bundled')) }).toEqual({ source: 'pricing-api', warnings: [] });
      expect(fromReal.prices).toEqual(fromFake.prices);
      const canonical = (rs: readonly { Filters?: unknown; NextToken?: string }[]) => rs.map((r) => JSON.stringify([r.Filters, r.NextToken ?? null])).sort();
      expect(canonical(server.requests)).toEqual(canonical(fake.requests));
      client.destroy();
    } finally {
      await server.close();
    }
  });

  it('refuses a non-loopback Pricing endpoint while tests run', () => {
    expect(() => createPricingClientFactory({ endpoint: 'https://api.pricing.us-east-1.amazonaws.com', credentialsFor: () => ({ accessKeyId: 'a', secretAccessKey: 'b' }), endpointPolicy: 'loopback-only' }))
      .toThrow(/refusing Pricing endpoint/);
  });
});

describe('the worker\'s pricing configuration', () => {
  it.each([
    [{}, 'aws'],
    [{ AWS_ENDPOINT_URL_EC2: 'http://127.0.0.1:5000' }, undefined],
    [{ AWS_ENDPOINT_URL_EC2: 'http://127.0.0.1:5000', AWS_ENDPOINT_URL_PRICING: 'http://127.0.0.1:5001' }, 'http://127.0.0.1:5001'],
    [{ AUTONODE_ISOLATED_VPC: 'true' }, undefined],
  ])('%j → %s', (env, expected) => {
    expect(pricingEndpointFromConfig(parseWorkerConfig(env))).toBe(expected);
  });

  it('names the variable when AUTONODE_ISOLATED_VPC is not a boolean', () => {
    expect(() => parseWorkerConfig({ AUTONODE_ISOLATED_VPC: 'yes' })).toThrow(/AUTONODE_ISOLATED_VPC/);
  });
});
