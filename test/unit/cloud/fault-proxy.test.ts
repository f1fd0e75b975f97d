import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { joinOverrides, randomFaultFor, splitOverrides, startEc2FaultProxy, withErrorSet } from '../../support/ec2-fault-proxy';

describe('the fault proxy’s CreateFleet rewriting', () => {
  it('removes overrides and renumbers the rest', () => {
    const params = new URLSearchParams(
      'Action=CreateFleet&LaunchTemplateConfigs.1.Overrides.1.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone=us-east-1a' +
        '&LaunchTemplateConfigs.1.Overrides.2.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.2.AvailabilityZone=us-east-1b' +
        '&LaunchTemplateConfigs.1.Overrides.10.InstanceType=c5.large&LaunchTemplateConfigs.1.Overrides.10.AvailabilityZone=us-east-1c',
    );
    const { rest, overrides } = splitOverrides(params);
    expect(overrides.map((o) => o.fields.get('AvailabilityZone'))).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    const joined = joinOverrides(rest, overrides.slice(1));
    expect(joined.get('LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone')).toBe('us-east-1b');
    expect(joined.get('LaunchTemplateConfigs.1.Overrides.2.InstanceType')).toBe('c5.large');
    expect(joined.has('LaunchTemplateConfigs.1.Overrides.3.InstanceType')).toBe(false);
    expect(joined.get('Action')).toBe('CreateFleet');
  });

  it('drops a launch template config left without overrides and renumbers the others', () => {
    const params = new URLSearchParams(
      'Action=CreateFleet' +
        '&LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId=lt-arm&LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version=%24Default' +
        '&LaunchTemplateConfigs.1.Overrides.1.InstanceType=t4g.large&LaunchTemplateConfigs.1.Overrides.1.ImageId=ami-arm' +
        '&LaunchTemplateConfigs.2.LaunchTemplateSpecification.LaunchTemplateId=lt-x86&LaunchTemplateConfigs.2.LaunchTemplateSpecification.Version=%24Default' +
        '&LaunchTemplateConfigs.2.Overrides.1.InstanceType=m5.large&LaunchTemplateConfigs.2.Overrides.1.ImageId=ami-x86',
    );
    const { rest, overrides } = splitOverrides(params);
    const joined = joinOverrides(rest, overrides.filter((o) => o.fields.get('InstanceType') !== 't4g.large'));
    expect([...joined.entries()].filter(([key]) => key.startsWith('LaunchTemplateConfigs.'))).toEqual([
      ['LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId', 'lt-x86'],
      ['LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version', '$Default'],
      ['LaunchTemplateConfigs.1.Overrides.1.InstanceType', 'm5.large'],
      ['LaunchTemplateConfigs.1.Overrides.1.ImageId', 'ami-x86'],
    ]);
  });

  it('adds the errorSet to a response that has none', () => {
    expect(withErrorSet('<CreateFleetResponse><fleetId>f</fleetId></CreateFleetResponse>', ['<item/>'])).toBe(
      '<CreateFleetResponse><fleetId>f</fleetId><errorSet><item/></errorSet></CreateFleetResponse>',
    );
  });
});

describe('the fault proxy’s seeded random faults', () => {
  it.each([
    [0, 'throttle'],
    [0.1999, 'throttle'],
    [0.2, 'server-error'],
    [0.2199, 'server-error'],
    [0.22, undefined],
    [0.9999, undefined],
  ] as const)('a draw of %p at 20 %% throttle / 2 %% 500 is %p', (draw, fault) => {
    expect(randomFaultFor(draw, { throttle: 0.2, serverError: 0.02 })).toBe(fault);
  });

  it('refuses rates that are not probabilities', () => {
    expect(() => randomFaultFor(0.5, { throttle: 0.9, serverError: 0.2 })).toThrow(/summing to at most 1/);
    expect(() => randomFaultFor(0.5, { throttle: -0.1, serverError: 0 })).toThrow(/probabilities/);
  });

  /** An EC2 stand-in that answers every request 200, and a proxy with random faults in front of it. */
  async function statusesThroughProxy(seed: number, requests: number, actions?: string[]): Promise<{ statuses: number[]; injected: number; forwarded: number }> {
    let forwarded = 0;
    const target = createServer((req, res) => {
      forwarded++;
      req.resume();
      req.on('end', () => res.end('<DescribeInstancesResponse/>'));
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const address = target.address() as AddressInfo;
    const proxy = await startEc2FaultProxy({ target: `http://127.0.0.1:${address.port}` });
    proxy.random({ seed, throttle: 0.2, serverError: 0.02, ...(actions ? { actions } : {}) });
    const statuses: number[] = [];
    try {
      for (let i = 0; i < requests; i++) {
        const res = await fetch(proxy.endpoint, { method: 'POST', body: `Action=${i % 2 === 0 ? 'DescribeInstances' : 'CreateFleet'}` });
        await res.text();
        statuses.push(res.status);
      }
      return { statuses, injected: proxy.injected.length, forwarded };
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  }

  it('throttles about 20 % and fails about 2 % of requests, the same ones for the same seed', async () => {
    const first = await statusesThroughProxy(17, 500);
    const again = await statusesThroughProxy(17, 500);
    const other = await statusesThroughProxy(18, 500);
    const count = (s: number[], status: number) => s.filter((x) => x === status).length;
    // binomial(500, 0.2): mean 100, sd ≈ 8.9; (500, 0.02): mean 10, sd ≈ 3.1 — five sd either side
    expect(count(first.statuses, 503)).toBeGreaterThanOrEqual(55);
    expect(count(first.statuses, 503)).toBeLessThanOrEqual(145);
    expect(count(first.statuses, 500)).toBeGreaterThanOrEqual(1);
    expect(count(first.statuses, 500)).toBeLessThanOrEqual(26);
    expect(first.injected).toBe(count(first.statuses, 503) + count(first.statuses, 500));
    expect(first.forwarded).toBe(count(first.statuses, 200));
    expect(again.statuses).toEqual(first.statuses);
    expect(other.statuses).not.toEqual(first.statuses);
  }, 30_000);

  it('leaves actions it was not told about alone', async () => {
    const { statuses } = await statusesThroughProxy(17, 200, ['CreateFleet']);
    const describeStatuses = statuses.filter((_, i) => i % 2 === 0);
    const fleetStatuses = statuses.filter((_, i) => i % 2 === 1);
    expect(new Set(describeStatuses)).toEqual(new Set([200]));
    expect(fleetStatuses.some((s) => s !== 200)).toBe(true);
  });
});

describe('the fault proxy’s static reads (npm run scale)', () => {
  it('answers a repeated catalog read from moto’s first good answer, per region and question, and still injects faults first', async () => {
    const seen: string[] = [];
    let failNext = false;
    const target = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push(body);
        if (failNext) {
          failNext = false;
          res.statusCode = 500;
          res.end('<Response><Errors><Error><Code>InternalError</Code></Error></Errors></Response>');
          return;
        }
        res.end(`<DescribeInstanceTypesResponse><n>${seen.length}</n></DescribeInstanceTypesResponse>`);
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const proxy = await startEc2FaultProxy({ target: `http://127.0.0.1:${(target.address() as AddressInfo).port}`, staticReads: ['DescribeInstanceTypes'] });
    const ask = async (body: string, region = 'us-east-1') => {
      const res = await fetch(proxy.endpoint, { method: 'POST', body, headers: { authorization: `AWS4-HMAC-SHA256 Credential=testing/20261128/${region}/ec2/aws4_request, SignedHeaders=host, Signature=x` } });
      return { status: res.status, text: await res.text() };
    };
    try {
      failNext = true;
      expect((await ask('Action=DescribeInstanceTypes&MaxResults=100')).status).toBe(500);
      // a failed answer is not kept; the next good one is, and serves the later pages too
      const first = await ask('Action=DescribeInstanceTypes&MaxResults=100');
      expect(first).toEqual({ status: 200, text: '<DescribeInstanceTypesResponse><n>2</n></DescribeInstanceTypesResponse>' });
      expect(await ask('Action=DescribeInstanceTypes&MaxResults=100&NextToken=abc')).toEqual(first);
      // concurrent askers share one render
      const together = await Promise.all([ask('Action=DescribeInstanceTypes&MaxResults=100'), ask('Action=DescribeInstanceTypes&MaxResults=100')]);
      expect(together).toEqual([first, first]);
      expect(seen).toHaveLength(2);
      // another region or another question goes to moto; other actions always do
      expect((await ask('Action=DescribeInstanceTypes&MaxResults=100', 'eu-west-1')).text).toContain('<n>3</n>');
      expect((await ask('Action=DescribeInstanceTypes&InstanceType.1=m5.large')).text).toContain('<n>4</n>');
      expect((await ask('Action=DescribeInstances')).text).toContain('<n>5</n>');
      expect((await ask('Action=DescribeInstances')).text).toContain('<n>6</n>');
      // random faults apply to kept reads as to any other
      proxy.random({ seed: 1, throttle: 1, serverError: 0, actions: ['DescribeInstanceTypes'] });
      expect((await ask('Action=DescribeInstanceTypes&MaxResults=100')).status).toBe(503);
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });
});
