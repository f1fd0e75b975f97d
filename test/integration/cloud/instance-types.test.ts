import { DescribeSpotPriceHistoryCommand } from '@aws-sdk/client-ec2';
import { catalogInstanceTypes, spotPriceEstimateFraction, type InstanceType } from '../../../core/instancetypes';
import {
  createEc2ClientFactory,
  createInstanceTypeProvider,
  endpointPolicyFromEnv,
  staticCredentialsProvider,
  type CloudLogger,
} from '../../../activities/cloud';
import { startCloudHarness, type CloudHarness } from '../../support/cloud';

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});

const m5LargeOf = (types: readonly InstanceType[]): InstanceType => {
  const found = types.find((t) => t.name === 'm5.large');
  if (!found) throw new Error(`m5.large missing from ${types.length} instance types`);
  return found;
};

async function timed<T>(body: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await body();
  return { value, ms: Math.round(performance.now() - started) };
}

describe('instance types from moto', () => {
  it('lists us-east-1 through the cloud-provider port, priced, with the bundled catalog’s labels and allocatable', async () => {
    const cold = await timed(() => h.provider.instanceTypes({ amiFamily: 'AL2023' }));
    const requestsAfterCold = h.proxy.requests.length;
    const warm = await timed(() => h.provider.instanceTypes({ amiFamily: 'AL2023' }));
    console.log(`instance types from moto: cold list ${cold.ms} ms (${cold.value.length} types), warm list ${warm.ms} ms`);

    // the warm list is served from the cache
    expect(h.proxy.requests.length).toBe(requestsAfterCold);
    expect(['DescribeInstanceTypes', 'DescribeInstanceTypeOfferings', 'DescribeSpotPriceHistory'].map((a) => h.proxy.count(a))).toEqual([1, 1, 1]);
    expect(cold.value.length).toBeGreaterThan(500);

    const m5 = m5LargeOf(cold.value);
    const zones = [...new Set(m5.offerings.map((o) => o.zone))];
    expect(zones.length).toBeGreaterThanOrEqual(3);
    expect(zones.every((zone) => zone.startsWith('us-east-1'))).toBe(true);
    for (const o of m5.offerings.filter((o) => o.capacityType === 'on-demand')) expect(o).toMatchObject({ price: 0.096, available: true });
    // moto reports every spot price as 0.00001 dated 2006 (checked below): implausible, so the estimate
    for (const o of m5.offerings.filter((o) => o.capacityType === 'spot')) {
      expect(o.price).toBeCloseTo(0.096 * spotPriceEstimateFraction, 6);
      expect(o.available).toBe(true);
    }
    expect(m5.offerings.filter((o) => o.capacityType === 'spot').map((o) => o.zone)).toEqual(zones);

    const catalog = catalogInstanceTypes({ region: 'us-east-1', amiFamily: 'AL2023', now: Date.now() });
    if (!catalog.ok) throw new Error(catalog.reason);
    const bundled = m5LargeOf(catalog.instanceTypes);
    expect(m5.labels).toEqual(bundled.labels);
    expect(m5.capacity).toEqual(bundled.capacity);
    expect(m5.allocatable).toEqual(bundled.allocatable);
    expect(m5.allocatable).toMatchObject({ cpu: '1930m', memory: '6903Mi', pods: '29' });
  });

  it('is fed an implausible spot price by moto, which the estimate replaces', async () => {
    const history = await h.direct.send(
      new DescribeSpotPriceHistoryCommand({ InstanceTypes: ['m5.large'], ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime: new Date(Date.now() - 86_400_000) }),
    );
    const rows = (history.SpotPriceHistory ?? []).filter((row) => row.InstanceType === 'm5.large');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.SpotPrice).toBe('0.00001');
      expect(row.Timestamp?.getUTCFullYear()).toBe(2006);
    }
  });

  it('keeps serving the last good copy when a refresh is denied, and recovers after', async () => {
    let now = Date.now();
    const clock = { now: () => new Date(now), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
    const warnings: string[] = [];
    const logger: CloudLogger = { debug: () => {}, info: () => {}, warn: (_obj, msg) => void warnings.push(msg) };
    const ec2 = createEc2ClientFactory({
      endpoint: h.proxy.endpoint,
      credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
      endpointPolicy: endpointPolicyFromEnv(process.env),
    })(h.cluster);
    try {
      const provider = createInstanceTypeProvider({ ec2, region: h.cluster.region, clock, logger, retryAfterFailureMs: 1_000 });
      const before = await provider.list({ amiFamily: 'AL2023' });

      now += 5 * 60_000;
      h.proxy.inject({ kind: 'unauthorized', action: 'DescribeInstanceTypeOfferings' });
      const during = await provider.list({ amiFamily: 'AL2023' });

      expect(h.proxy.injected).toContainEqual({ kind: 'unauthorized', action: 'DescribeInstanceTypeOfferings' });
      expect(m5LargeOf(during)).toEqual(m5LargeOf(before));
      // a call that timed out and was retried (moto under load) says so too; that is not what is judged here
      const refreshWarnings = () => warnings.filter((w) => !/ failed \([^)]+\); retrying$/.test(w));
      expect(refreshWarnings()).toEqual([expect.stringContaining('refreshing DescribeInstanceTypeOfferings in us-east-1 failed')]);

      now += 1_000;
      const offeringReads = h.proxy.count('DescribeInstanceTypeOfferings');
      await provider.list({ amiFamily: 'AL2023' });
      expect(h.proxy.count('DescribeInstanceTypeOfferings')).toBe(offeringReads + 1);
      expect(refreshWarnings()).toHaveLength(1);
    } finally {
      ec2.destroy();
    }
  });
});
