import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { GetProductsCommand, type GetProductsCommandInput } from '@aws-sdk/client-pricing';
import { type PricingApi } from '../../../activities/cloud';

/** One product of the AWS Price List, as GetProducts returns it (a JSON string per product). */
export function aPriceListProduct(instanceType: string, price: string, options: { currency?: string; tenancy?: string } = {}): string {
  const sku = `SKU${instanceType.replace(/\W/g, '')}`;
  return JSON.stringify({
    product: {
      productFamily: options.tenancy === 'Dedicated' ? 'Compute Instance (bare metal)' : 'Compute Instance',
      attributes: { instanceType, operatingSystem: 'Linux', tenancy: options.tenancy ?? 'Shared', capacitystatus: 'Used', preInstalledSw: 'NA' },
      sku,
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        [`${sku}.JRTCKXETXF`]: {
          priceDimensions: {
            [`${sku}.JRTCKXETXF.6YS6EN2CT7`]: { unit: 'Hrs', pricePerUnit: { [options.currency ?? 'USD']: price }, description: `$${price} per On Demand Linux ${instanceType} Instance Hour` },
          },
          sku,
          effectiveDate: '2026-11-01T00:00:00Z',
        },
      },
    },
    version: '20261101000000',
  });
}

/** What the Price List holds per region: shared-tenancy products and bare-metal ones. */
export interface PriceListData {
  readonly [region: string]: { readonly shared: readonly string[]; readonly metal: readonly string[] };
}

/** The answer to one GetProducts request: filters pick the region and product set, pages of `pageSize`. */
export function answerGetProducts(data: PriceListData, input: GetProductsCommandInput, pageSize: number): { PriceList: string[]; NextToken?: string; FormatVersion: string } {
  const filter = (field: string) => input.Filters?.find((f) => f.Field === field)?.Value;
  const region = filter('regionCode') ?? '';
  const set = filter('productFamily') === 'Compute Instance (bare metal)' ? 'metal' : 'shared';
  const all = data[region]?.[set] ?? [];
  const start = Number(input.NextToken ?? '0');
  const page = all.slice(start, start + pageSize);
  const next = start + pageSize < all.length ? String(start + pageSize) : undefined;
  return { FormatVersion: 'aws_v1', PriceList: page, ...(next === undefined ? {} : { NextToken: next }) };
}

/**
 * A fake Pricing API: answers GetProducts from `data` in pages, records every request, and
 * can fail the next calls with given errors. The conformance test in
 * on-demand-prices.test.ts runs the same scenario through the real PricingClient against
 * `servePricingApi` (moto serves no Pricing API, so a local HTTP endpoint speaking its
 * JSON protocol is the real client's counterpart).
 */
export class FakePricing implements PricingApi {
  readonly requests: GetProductsCommandInput[] = [];
  private readonly failures: Error[] = [];

  constructor(private data: PriceListData, private readonly pageSize = 2) {}

  failNext(...errors: Error[]): void {
    this.failures.push(...errors);
  }

  setData(data: PriceListData): void {
    this.data = data;
  }

  send(command: unknown): Promise<never> {
    if (!(command instanceof GetProductsCommand)) return Promise.reject(new Error(`FakePricing: unexpected command ${String(command)}`));
    this.requests.push(command.input);
    const failure = this.failures.shift();
    if (failure) return Promise.reject(failure);
    // The SDK's `send` is typed per command; the fake answers the one command it knows.
    return Promise.resolve(answerGetProducts(this.data, command.input, this.pageSize) as never);
  }
}

/**
 * The Pricing API's wire protocol (awsJson1_1: POST /, X-Amz-Target
 * AWSPriceListService.GetProducts) on 127.0.0.1, answering from `data`.
 */
export async function servePricingApi(data: PriceListData, pageSize = 2): Promise<{ endpoint: string; requests: GetProductsCommandInput[]; close: () => Promise<void> }> {
  const requests: GetProductsCommandInput[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.headers['x-amz-target'] !== 'AWSPriceListService.GetProducts') {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'InvalidParameterException', message: `unexpected target ${String(req.headers['x-amz-target'])}` }));
        return;
      }
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GetProductsCommandInput;
      requests.push(input);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(answerGetProducts(data, input, pageSize)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => {
    // the SDK keeps its sockets alive; close would wait for them
    server.close(() => resolve());
    server.closeAllConnections();
  }) };
}
