// A worker process as workers/main.ts sets one up (the JSON logger, the SDK's Prometheus
// exporter), polling one task queue of the server at argv[2] with no workflows and one
// activity: for temporal-metrics.test.ts, which reads its stdout and scrapes its exporter.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createWorkerLogger } from '../../workers/logging';
import { installWorkerRuntime } from '../../workers/runtime';

async function main(): Promise<void> {
  const [address, port, taskQueue] = process.argv.slice(2);
  if (!address || !port || !taskQueue) throw new Error('usage: worker-process <address> <metrics port> <task queue>');
  const logger = createWorkerLogger({ level: 'info' });
  installWorkerRuntime({ logger, temporalMetrics: { host: '127.0.0.1', port: Number(port) }, shutdownSignals: ['SIGTERM'] });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({ connection, taskQueue, activities: { ping: async () => 'pong' } });
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`worker-process: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
