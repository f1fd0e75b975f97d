import { connectClient } from '../../workers/temporal-connection';
import { PLANTED_SECRET_PREFIX, describeFindings, knownSecrets, scanHistories } from './history-secrets';

/**
 * Scans every workflow history of the run for secrets (issue 13, test 5; skip with
 * AUTONODE_SCAN_HISTORIES=0), then stops exactly the processes the global setup started,
 * in reverse order — also when the scan finds something, which then fails the run.
 */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__autonodeStack;
  if (!stack) return;
  try {
    if (process.env.AUTONODE_SCAN_HISTORIES !== '0') {
      const t0 = Date.now();
      const client = await connectClient({ address: stack.info.temporal.address, namespace: stack.info.temporal.namespace });
      try {
        const scan = await scanHistories(client, await knownSecrets(stack.info), { exclude: (id) => id.startsWith(PLANTED_SECRET_PREFIX) });
        process.stderr.write(`[stack] history scan: ${scan.runs} workflow runs, ${scan.events} events, ${scan.findings.length} secrets found (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
        if (scan.findings.length > 0) throw new Error(`secrets in workflow histories (issue 13 test 5):\n${describeFindings(scan.findings)}`);
      } finally {
        await client.connection.close();
      }
    }
  } finally {
    await stack.stop();
    globalThis.__autonodeStack = undefined;
  }
}
