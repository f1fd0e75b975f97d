/**
 * A fake of the three EC2 reads behind the instance-type provider, implementing the
 * Ec2Api port: serves fixed data in pages of a chosen size (with NextToken), records every
 * call, injects one-shot errors, and can hold responses so tests see concurrent callers.
 */
import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
} from '@aws-sdk/client-ec2';
import { type Ec2Api } from '../../../activities/cloud';

export type FakeOperation = 'DescribeInstanceTypes' | 'DescribeInstanceTypeOfferings' | 'DescribeSpotPriceHistory';

export interface FakeCall {
  operation: FakeOperation;
  input: Record<string, unknown>;
}

export interface FakeInstanceTypeEc2 {
  api: Ec2Api;
  calls: FakeCall[];
  callsOf(operation: FakeOperation): FakeCall[];
  /** what the next calls answer; replace to simulate AWS changing */
  data: { instanceTypes: unknown[]; offerings: unknown[]; spotPrices: unknown[] };
  pageSize: Record<FakeOperation, number>;
  /** the NextToken handed out for the page starting at `offset` */
  pageToken: (offset: number) => string;
  /** the next `times` calls of `operation` throw `error` */
  failNext(operation: FakeOperation, error: Error, times?: number): void;
  /** responses wait until the returned function is called */
  hold(): () => void;
}

export function anAwsError(code: string, status: number): Error {
  return Object.assign(new Error(`${code} (fake)`), { name: code, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}

export function fakeInstanceTypeEc2(data: FakeInstanceTypeEc2['data']): FakeInstanceTypeEc2 {
  const calls: FakeCall[] = [];
  const failures: { operation: FakeOperation; error: Error }[] = [];
  let gate: Promise<void> | undefined;
  const offsetOfToken = new Map<string, number>();
  const fake: FakeInstanceTypeEc2 = {
    data,
    calls,
    pageSize: { DescribeInstanceTypes: 100, DescribeInstanceTypeOfferings: 1000, DescribeSpotPriceHistory: 1000 },
    pageToken: (offset) => `page-${offset}`,
    callsOf: (operation) => calls.filter((c) => c.operation === operation),
    failNext(operation, error, times = 1) {
      for (let i = 0; i < times; i++) failures.push({ operation, error });
    },
    hold() {
      let release = () => {};
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    api: {
      // The SDK's `send` is a set of generic overloads no plain function satisfies; the
      // fake answers the shapes the real commands return, and the provider parses them.
      send: (async (command: unknown) => {
        const { operation, input, items, key } = route(command, fake.data);
        calls.push({ operation, input });
        if (gate) await gate;
        const index = failures.findIndex((f) => f.operation === operation);
        const [failure] = index >= 0 ? failures.splice(index, 1) : [];
        if (failure) throw failure.error;
        const start = typeof input.NextToken === 'string' ? (offsetOfToken.get(input.NextToken) ?? 0) : 0;
        const end = start + fake.pageSize[operation];
        if (end >= items.length) return { [key]: items.slice(start, end), $metadata: {} };
        const NextToken = fake.pageToken(end);
        offsetOfToken.set(NextToken, end);
        return { [key]: items.slice(start, end), NextToken, $metadata: {} };
      }) as Ec2Api['send'],
    },
  };
  return fake;
}

function route(command: unknown, data: FakeInstanceTypeEc2['data']): { operation: FakeOperation; input: Record<string, unknown>; items: unknown[]; key: string } {
  if (command instanceof DescribeInstanceTypesCommand) {
    return { operation: 'DescribeInstanceTypes', input: { ...command.input }, items: data.instanceTypes, key: 'InstanceTypes' };
  }
  if (command instanceof DescribeInstanceTypeOfferingsCommand) {
    return { operation: 'DescribeInstanceTypeOfferings', input: { ...command.input }, items: data.offerings, key: 'InstanceTypeOfferings' };
  }
  if (command instanceof DescribeSpotPriceHistoryCommand) {
    return { operation: 'DescribeSpotPriceHistory', input: { ...command.input }, items: data.spotPrices, key: 'SpotPriceHistory' };
  }
  throw new Error(`the fake EC2 does not implement ${String(command)}`);
}
