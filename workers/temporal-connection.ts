import { Client, Connection } from '@temporalio/client';
import { type DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';

export const TemporalConfigSchema = z.object({
  address: z.string().min(1).describe('host:port of the Temporal frontend, e.g. 127.0.0.1:7233'),
  namespace: z.string().min(1).default('default'),
});
export type TemporalConfig = z.infer<typeof TemporalConfigSchema>;

/**
 * A Temporal client (for starters, tests and the CLI). Close `client.connection` when done.
 * `dataConverter`: autonodeDataConverter(…) (workers/codec/), the same the workers use, so
 * encrypted inputs, results and queries stay readable; default Temporal's own.
 */
export async function connectClient(config: TemporalConfig, options: { dataConverter?: DataConverter } = {}): Promise<Client> {
  const connection = await Connection.connect({ address: config.address });
  return new Client({ connection, namespace: config.namespace, ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}) });
}

/** The native connection a Worker polls through. */
export function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect({ address: config.address });
}
