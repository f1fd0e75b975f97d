import { Worker, type NativeConnection } from '@temporalio/worker';
import { type Client } from '@temporalio/client';
import { connectClient, connectWorker } from '../../workers/temporal-connection';
import { loadStackInfo } from './stack';

/** The run's workflow bundle (built once by the global setup). */
export function workflowBundle(): { codePath: string } {
  const codePath = process.env.AUTONODE_WORKFLOW_BUNDLE;
  if (!codePath) throw new Error('AUTONODE_WORKFLOW_BUNDLE is not set: run under `npm run test:integration`');
  return { codePath };
}

export interface TemporalHarness {
  client: Client;
  connection: NativeConnection;
  namespace: string;
  close(): Promise<void>;
}

/** Client + worker connection to the stack's Temporal server, through autonode's own wrappers. */
export async function temporalHarness(): Promise<TemporalHarness> {
  const { temporal } = loadStackInfo();
  const config = { address: temporal.address, namespace: temporal.namespace };
  const client = await connectClient(config);
  const connection = await connectWorker(config);
  return {
    client,
    connection,
    namespace: temporal.namespace,
    close: async () => {
      await client.connection.close();
      await connection.close();
    },
  };
}

export { Worker };
