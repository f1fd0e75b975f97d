import { Connection } from '@temporalio/client';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { autonodeSearchAttributes } from '../../workflows/search-attributes';
import type { ProductionTemporalBinaries } from './binaries';
import { freePortsFor } from './ports';
import { ManagedProcess } from './process';
import { startProductionTemporal } from './temporal-production';

export interface TemporalEndpoint {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** true when we started the server (and will stop it) */
  managed: boolean;
  /** which server: the dev server, the production build on PostgreSQL, or one at TEMPORAL_ADDRESS */
  server: 'dev' | 'production' | 'external';
  /** the server's own Prometheus endpoint, when we started it (the production server: its frontend's) */
  metricsUrl?: string;
  /** every service's Prometheus endpoint (the production server runs each service as its own process) */
  metricsUrls?: string[];
  close(): Promise<void>;
}

const indexedValueType = { KEYWORD: 2, TEXT: 1, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7 } as const;
const cliType = { KEYWORD: 'Keyword', TEXT: 'Text', INT: 'Int', DOUBLE: 'Double', BOOL: 'Bool', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' } as const;

/**
 * Starts `temporal server start-dev` (SQLite in the stack dir, Web UI on, autonode's
 * search attributes registered), or — with `production` binaries (AUTONODE_TEMPORAL=production)
 * — PostgreSQL and the Temporal server built from its Go module (temporal-production.ts), or —
 * with TEMPORAL_ADDRESS — uses that server and makes sure the search attributes exist there.
 * `started` hears of every process as soon as it exists, so a failure later still stops it.
 */
export async function startTemporal(o: {
  binary: string | undefined;
  /** run the production server instead of the dev server (ignored with an address) */
  production?: ProductionTemporalBinaries;
  /** history shards of the production server (fixed when its schema is created) */
  historyShards?: number;
  log?: (line: string) => void;
  started: (p: ManagedProcess) => void;
  address: string | undefined;
  namespace: string | undefined;
  dir: string;
  logDir: string;
  /** extra dynamic config for the dev server, e.g. a low continue-as-new threshold in tests */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** the codec server the dev server's Web UI decodes payloads with (`autonode dev` with payload encryption) */
  uiCodecEndpoint?: string;
}): Promise<TemporalEndpoint> {
  const namespace = o.namespace ?? 'default';
  if (o.address) {
    const connection = await Connection.connect({ address: o.address });
    try {
      await registerSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
    return { address: o.address, namespace, uiUrl: undefined, managed: false, server: 'external', close: async () => undefined };
  }
  if (o.production) {
    const production = await startProductionTemporal(
      { binaries: o.production, dir: o.dir, logDir: o.logDir, namespace, historyShards: o.historyShards ?? 4, dynamicConfig: o.dynamicConfig ?? {}, log: o.log ?? (() => undefined) },
      o.started,
    );
    const connection = await Connection.connect({ address: production.address });
    try {
      await registerSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
    return { address: production.address, namespace, uiUrl: undefined, managed: true, server: 'production', metricsUrl: production.metricsUrl, metricsUrls: production.metricsUrls, close: async () => undefined };
  }
  if (!o.binary) throw new Error('no Temporal CLI binary and no TEMPORAL_ADDRESS: run `npm run setup`');

  // Free ports are picked before the server binds them: another process can take one in
  // between (seen in CI: the HTTP API port). Then the server exits at once; pick again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServer(o.binary, o, namespace, o.started);
    } catch (err) {
      const log = existsSync(join(o.logDir, 'temporal.log')) ? readFileSync(join(o.logDir, 'temporal.log'), 'utf8') : '';
      if (attempt >= 3 || !log.includes('address already in use')) throw err;
      rmSync(join(o.dir, 'temporal.sqlite'), { force: true });
    }
  }
}

async function startDevServer(
  binary: string,
  o: { dir: string; logDir: string; dynamicConfig?: Record<string, string | number | boolean>; uiCodecEndpoint?: string },
  namespace: string,
  started: (p: ManagedProcess) => void,
): Promise<TemporalEndpoint> {
  const { port, uiPort, httpPort, metricsPort } = await freePortsFor(['port', 'uiPort', 'httpPort', 'metricsPort']);
  const address = `127.0.0.1:${port}`;
  const process = new ManagedProcess({
    name: 'temporal',
    command: binary,
    args: [
      'server', 'start-dev',
      '--ip', '127.0.0.1',
      '--port', String(port),
      '--ui-ip', '127.0.0.1',
      '--ui-port', String(uiPort),
      '--ui-disable-news-fetch',
      ...(o.uiCodecEndpoint ? ['--ui-codec-endpoint', o.uiCodecEndpoint] : []),
      '--http-port', String(httpPort),
      '--metrics-port', String(metricsPort),
      '--db-filename', join(o.dir, 'temporal.sqlite'),
      '--namespace', namespace,
      '--log-format', 'json',
      '--log-level', 'warn',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
      ...Object.entries(o.dynamicConfig ?? {}).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]),
      ...autonodeSearchAttributes.flatMap((key) => ['--search-attribute', `${key.name}=${cliType[key.type]}`]),
    ],
    logFile: join(o.logDir, 'temporal.log'),
    ready: async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return true;
      } finally {
        await connection.close();
      }
    },
    startTimeoutMs: 90_000,
  });
  await process.start();
  started(process);
  return {
    address,
    namespace,
    uiUrl: `http://127.0.0.1:${uiPort}`,
    managed: true,
    server: 'dev',
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    close: async () => undefined,
  };
}

async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = autonodeSearchAttributes.filter((key) => !(key.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedValueType[key.type]])),
  });
}
