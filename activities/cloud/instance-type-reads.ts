/**
 * The three paged EC2 reads behind the instance-type provider, each through callEc2 (the
 * one retry layer) and parsed with core/instancetypes' schemas. An item that does not
 * parse is dropped with a warning; a page envelope that does not parse, or a read where
 * every item was dropped, fails the read — that is a response we do not understand, and
 * an empty catalog would look like "no capacity" to the scheduler.
 */
import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
} from '@aws-sdk/client-ec2';
import { type z } from 'zod';
import {
  instanceTypeInfoSchema,
  instanceTypeOfferingSchema,
  spotPriceSchema,
  type InstanceTypeInfo,
  type InstanceTypeOffering,
  type SpotPrice,
} from '../../core/instancetypes';
import {
  DescribeInstanceTypeOfferingsPageSchema,
  DescribeInstanceTypesPageSchema,
  DescribeSpotPriceHistoryPageSchema,
} from './ec2-schemas';
import { type InstanceTypeSource } from './errors';
import { type CloudLogger, type Ec2Api } from './ports';
import { callEc2, type RetryDeps } from './retry';

export interface Ec2Reader {
  ec2: Ec2Api;
  retry: RetryDeps;
  logger: CloudLogger;
}

/** EC2's documented maxima per page for each call. */
export const pageSizes = { instanceTypes: 100, offerings: 1000, spotPrices: 1000 } as const;

/** Spot prices are read for the day before `now`: older rows fail the plausibility rule anyway. */
export const spotHistoryWindowMs = 24 * 60 * 60 * 1000;

/**
 * Karpenter asks for both (pricing.go): accounts created before EC2-Classic's retirement
 * may report VPC prices under the longer name. core/instancetypes accepts both.
 */
export const spotProductDescriptions = ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'];

export class UnreadableResponseError extends Error {
  override readonly name = 'UnreadableResponseError';
}

export async function readInstanceTypes(reader: Ec2Reader): Promise<InstanceTypeInfo[]> {
  const items = await readAllPages(reader, 'DescribeInstanceTypes', (NextToken) =>
    callEc2('DescribeInstanceTypes', () => reader.ec2.send(new DescribeInstanceTypesCommand({ MaxResults: pageSizes.instanceTypes, NextToken })), reader.retry)
      .then((page) => DescribeInstanceTypesPageSchema.parse(page))
      .then((page) => ({ items: page.InstanceTypes ?? [], nextToken: page.NextToken })),
  );
  return parseEach(reader, 'DescribeInstanceTypes', items, instanceTypeInfoSchema);
}

export async function readInstanceTypeOfferings(reader: Ec2Reader): Promise<InstanceTypeOffering[]> {
  const items = await readAllPages(reader, 'DescribeInstanceTypeOfferings', (NextToken) =>
    callEc2(
      'DescribeInstanceTypeOfferings',
      () => reader.ec2.send(new DescribeInstanceTypeOfferingsCommand({ LocationType: 'availability-zone', MaxResults: pageSizes.offerings, NextToken })),
      reader.retry,
    )
      .then((page) => DescribeInstanceTypeOfferingsPageSchema.parse(page))
      .then((page) => ({ items: page.InstanceTypeOfferings ?? [], nextToken: page.NextToken })),
  );
  return parseEach(reader, 'DescribeInstanceTypeOfferings', items, instanceTypeOfferingSchema);
}

/** Rows of the day before `now`; an empty history is a valid answer (every price is then estimated). */
export async function readSpotPriceHistory(reader: Ec2Reader, now: Date): Promise<SpotPrice[]> {
  const StartTime = new Date(now.getTime() - spotHistoryWindowMs);
  const items = await readAllPages(reader, 'DescribeSpotPriceHistory', (NextToken) =>
    callEc2(
      'DescribeSpotPriceHistory',
      () =>
        reader.ec2.send(
          new DescribeSpotPriceHistoryCommand({ ProductDescriptions: spotProductDescriptions, StartTime, MaxResults: pageSizes.spotPrices, NextToken }),
        ),
      reader.retry,
    )
      .then((page) => DescribeSpotPriceHistoryPageSchema.parse(page))
      .then((page) => ({ items: page.SpotPriceHistory ?? [], nextToken: page.NextToken })),
  );
  return parseEach(reader, 'DescribeSpotPriceHistory', items, spotPriceSchema);
}

interface Page {
  items: unknown[];
  nextToken: string | undefined;
}

async function readAllPages(reader: Ec2Reader, operation: InstanceTypeSource, readPage: (nextToken: string | undefined) => Promise<Page>): Promise<unknown[]> {
  const items: unknown[] = [];
  const seenTokens = new Set<string>();
  let nextToken: string | undefined;
  let pages = 0;
  do {
    const page = await readPage(nextToken);
    pages++;
    items.push(...page.items);
    // EC2 may answer an empty page with a token; an empty-string token means "done".
    nextToken = page.nextToken === '' ? undefined : page.nextToken;
    if (nextToken !== undefined && seenTokens.has(nextToken)) {
      throw new UnreadableResponseError(`${operation} returned NextToken ${nextToken} twice; refusing to page forever`);
    }
    if (nextToken !== undefined) seenTokens.add(nextToken);
  } while (nextToken !== undefined);
  reader.logger.debug({ operation, pages, items: items.length }, `${operation}: ${items.length} item(s) in ${pages} page(s)`);
  return items;
}

function parseEach<S extends z.ZodType>(reader: Ec2Reader, operation: InstanceTypeSource, items: readonly unknown[], schema: S): z.infer<S>[] {
  const parsed: z.infer<S>[] = [];
  const dropped: string[] = [];
  for (const item of items) {
    const result = schema.safeParse(item);
    if (result.success) parsed.push(result.data);
    else dropped.push(describeDropped(item, result.error));
  }
  if (dropped.length > 0 && parsed.length === 0) {
    throw new UnreadableResponseError(`${operation}: none of ${items.length} item(s) parsed; first: ${dropped[0] ?? ''}`);
  }
  if (dropped.length > 0) {
    reader.logger.warn({ operation, dropped: dropped.length, examples: dropped.slice(0, 3) }, `${operation}: dropped ${dropped.length} item(s) that did not parse`);
  }
  return parsed;
}

function describeDropped(item: unknown, error: z.ZodError): string {
  const name = typeof item === 'object' && item !== null && 'InstanceType' in item ? String(item.InstanceType) : '(unnamed)';
  const issue = error.issues[0];
  return `${name}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`;
}
