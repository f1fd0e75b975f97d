import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';

export const TemporalConfigSchema = z.object({
  address: z.string().min(1).describe('host:port of the Temporal frontend, e.g. 127.0.0.1:7233'),
  namespace: z.string().min(1).default('default'),
});
export type TemporalConfig = z.infer<typeof TemporalConfigSchema>;

/** A Temporal client (for starters, tests and the CLI). Close `client.connection` when done. */
export async function connectClient(config: TemporalConfig): Promise<Client> {
  const connection = await Connection.connect({ address: config.address });
  return new Client({ connection, namespace: config.namespace });
}

/** The native connection a Worker polls through. */
export function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect({ address: config.address });
}
