import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ProductionTemporalBinaries } from './binaries';
import { freePortsInRange } from './ports';
import { initPostgres, postgresProcess, runLogged } from './postgres';
import { ManagedProcess } from './process';

const DB_USER = 'temporal';
const DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;
/** the schema tool's embedded schemas (`temporal-sql-tool update-schema --schema-name`) */
const SCHEMAS = { default: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' } as const;

export interface ProductionTemporalOptions {
  binaries: ProductionTemporalBinaries;
  dir: string;
  logDir: string;
  namespace: string;
  /** fixed at schema creation: a cluster cannot change it later */
  historyShards: number;
  dynamicConfig: Record<string, string | number | boolean>;
  log: (line: string) => void;
}

export interface ProductionTemporal {
  address: string;
  /** started in this order; stop in reverse */
  processes: ManagedProcess[];
  /** the frontend's Prometheus endpoint */
  metricsUrl: string;
  /** every service's Prometheus endpoint (frontend, history, matching, worker) */
  metricsUrls: string[];
}

/** Temporal's four services, in the order they are started: each its own process. */
export const TEMPORAL_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];
/** the stack's name for a service's process (`LocalStack.restart('temporal-frontend')`) */
export const temporalProcessName = (service: TemporalService) => `temporal-${service}`;

export type ServicePorts = Record<
  | 'postgres'
  | 'frontend'
  | 'frontendMembership'
  | 'frontendHttp'
  | 'history'
  | 'historyMembership'
  | 'matching'
  | 'matchingMembership'
  | 'worker'
  | 'workerMembership'
  | `${TemporalService}Metrics`,
  number
>;

/**
 * Temporal as it is deployed: PostgreSQL (Debian's build, in the stack directory), the
 * schemas created and migrated by Temporal's own `temporal-sql-tool`, and the server built
 * from `go.temporal.io/server` running its history, matching, frontend and worker services
 * against it as four processes (`temporal-server start --service <one>`, one config, each
 * service its own ports; they find each other through the cluster_membership table), with
 * the namespace registered through the API as an operator would. One service can then be
 * restarted alone (`LocalStack.restart('temporal-frontend')`), as one Deployment of a
 * cluster would be. Each process is handed back as soon as it starts, so a failure later
 * still stops it.
 */
export async function startProductionTemporal(o: ProductionTemporalOptions, started: (p: ManagedProcess) => void): Promise<ProductionTemporal> {
  // below 32768: the server records its services' ports in a smallint column (cluster_membership)
  const ports: ServicePorts = await freePortsInRange(
    ['postgres', 'frontend', 'frontendMembership', 'frontendHttp', 'history', 'historyMembership', 'matching', 'matchingMembership', 'worker', 'workerMembership', 'historyMetrics', 'matchingMetrics', 'frontendMetrics', 'workerMetrics'],
    { from: 20000, to: 32767 },
  );
  const processes: ManagedProcess[] = [];
  const run = async (p: ManagedProcess) => {
    processes.push(p);
    started(p);
    const t0 = Date.now();
    await p.start();
    o.log(`${p.spec.name} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (log ${p.spec.logFile})`);
  };

  const postgres = { bin: o.binaries.postgresBin, libraryPath: o.binaries.postgresLibraryPath, dataDir: join(o.dir, 'postgres'), port: ports.postgres, logDir: o.logDir, user: DB_USER };
  const fresh = (await initPostgres(postgres)) === 'created';
  await run(postgresProcess(postgres));

  const t0 = Date.now();
  await createSchemas(o, ports.postgres, fresh);
  o.log(`temporal schemas (${SCHEMAS.default}, ${SCHEMAS.visibility}) ${fresh ? 'created' : 'updated'} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);

  const configDir = join(o.dir, 'temporal');
  mkdirSync(configDir, { recursive: true });
  const dynamicConfigFile = join(configDir, 'dynamicconfig.yaml');
  writeFileSync(dynamicConfigFile, stringify(dynamicConfigYaml(o.dynamicConfig)));
  const address = `127.0.0.1:${ports.frontend}`;
  for (const service of TEMPORAL_SERVICES) {
    // the same config for every service but where its metrics are served (one listener per process)
    const configFile = join(configDir, `config-${service}.yaml`);
    writeFileSync(configFile, stringify(serverConfig({ ports, historyShards: o.historyShards, dynamicConfigFile, metricsPort: ports[`${service}Metrics`] })));
    await run(
      new ManagedProcess({
        name: temporalProcessName(service),
        command: o.binaries.server,
        args: ['--config-file', configFile, '--allow-no-auth', 'start', '--service', service],
        logFile: join(o.logDir, `${temporalProcessName(service)}.log`),
        // the frontend is ready when it answers the API; the others when their gRPC port does
        ready: service === 'frontend' ? () => frontendAnswers(address) : () => tcpAnswers(ports[service]),
        startTimeoutMs: 120_000,
        stopTimeoutMs: 20_000,
      }),
    );
  }
  const t1 = Date.now();
  await registerNamespace(address, o.namespace);
  o.log(`temporal namespace ${o.namespace} registered in ${((Date.now() - t1) / 1000).toFixed(1)}s`);
  const metricsUrl = (service: TemporalService) => `http://127.0.0.1:${ports[`${service}Metrics`]}/metrics`;
  return { address, processes, metricsUrl: metricsUrl('frontend'), metricsUrls: TEMPORAL_SERVICES.map(metricsUrl) };
}

async function frontendAnswers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 });
  try {
    await connection.workflowService.getSystemInfo({});
    return true;
  } finally {
    await connection.close();
  }
}

function tcpAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 1000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** `create-database`, then the versioning tables at 0.0, then every versioned step up to the release's schema. */
async function createSchemas(o: ProductionTemporalOptions, port: number, fresh: boolean): Promise<void> {
  const logFile = join(o.logDir, 'temporal-sql-tool.log');
  for (const store of ['default', 'visibility'] as const) {
    const tool = (what: string, ...args: string[]) =>
      runLogged({
        command: o.binaries.sqlTool,
        args: ['--plugin', 'postgres12', '--endpoint', '127.0.0.1', '--port', String(port), '--user', DB_USER, '--database', DATABASES[store], ...args],
        logFile,
        what: `temporal-sql-tool ${what} (${DATABASES[store]})`,
      });
    if (fresh) {
      await tool('create-database', 'create-database');
      await tool('setup-schema', 'setup-schema', '--version', '0.0');
    }
    await tool('update-schema', 'update-schema', '--schema-name', SCHEMAS[store]);
  }
}

/** The dev server's defaults that autonode relies on, plus the caller's. */
export function dynamicConfigYaml(extra: Record<string, string | number | boolean>): Record<string, Array<{ value: unknown }>> {
  const values: Record<string, string | number | boolean> = {
    'frontend.enableUpdateWorkflowExecution': true,
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
    // a search attribute added through the API is usable at once (the dev server sets it too)
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    ...extra,
  };
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value }]]));
}

export function serverConfig(o: { ports: ServicePorts; historyShards: number; dynamicConfigFile: string; metricsPort: number }) {
  const { ports } = o;
  const sql = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${ports.postgres}`,
      connectProtocol: 'tcp',
      user: DB_USER,
      // trust authentication, 127.0.0.1 only: there is no password
      password: '',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, number> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  return {
    log: { stdout: true, level: 'warn', format: 'json' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: o.historyShards,
      datastores: { 'postgres-default': sql(DATABASES.default, 20), 'postgres-visibility': sql(DATABASES.visibility, 10) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${o.metricsPort}` } },
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: o.dynamicConfigFile, pollInterval: '10s' },
  };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A production server starts with only its system namespace: register ours (one day's
 * retention) and wait until the frontend's namespace cache knows it.
 */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    } catch (err) {
      if (!isGrpcCode(err, GRPC_ALREADY_EXISTS)) throw err;
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (err) {
        if (!isGrpcCode(err, GRPC_NOT_FOUND) || Date.now() > deadline) throw err;
        await delay(250);
      }
    }
  } finally {
    await connection.close();
  }
}

/** gRPC status codes (grpc/status.h) */
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

function isGrpcCode(err: unknown, code: number): boolean {
  return isGrpcServiceError(err) && err.code === code;
}
