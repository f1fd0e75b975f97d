// The production Temporal stack's pure parts: where its binaries come from, the server
// config the launcher writes, and how PostgreSQL is started as root.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveProductionTemporal, stackVersions } from '../../../dev/stack/binaries';
import { unprivileged } from '../../../dev/stack/postgres';
import { TEMPORAL_SERVICES, dynamicConfigYaml, serverConfig, temporalProcessName, type ServicePorts } from '../../../dev/stack/temporal-production';

const ports: ServicePorts = {
  postgres: 15432, frontend: 17233, frontendMembership: 16933, frontendHttp: 17243, history: 17234, historyMembership: 16934,
  matching: 17235, matchingMembership: 16935, worker: 17239, workerMembership: 16939,
  historyMetrics: 18001, matchingMetrics: 18002, frontendMetrics: 18003, workerMetrics: 18004,
};

describe('production Temporal (AUTONODE_TEMPORAL=production)', () => {
  const v = stackVersions();

  it('pins a server release this Go can build and a Debian PostgreSQL package', () => {
    expect(v.TEMPORAL_SERVER_VERSION).toMatch(/^v1\.\d+\.\d+$/);
    expect(v.POSTGRES_DEB_VERSION).toMatch(/^15\.\d+-/);
  });

  it('finds the server, schema tool and PostgreSQL in the cache, or names each missing one and the setup command', () => {
    const cache = mkdtempSync(join(tmpdir(), 'autonode-cache-'));
    expect(() => resolveProductionTemporal({ AUTONODE_CACHE: cache })).toThrow(/server .*sqlTool .*postgres .*initdb .*npm run setup -- --production-temporal/s);

    const bin = join(cache, `temporal-server-${v.TEMPORAL_SERVER_VERSION}`, 'bin');
    const pg = join(cache, `postgresql-${v.POSTGRES_DEB_VERSION}`, 'root', 'usr', 'lib', 'postgresql', '15', 'bin');
    for (const dir of [bin, pg]) mkdirSync(dir, { recursive: true });
    for (const file of [join(bin, 'temporal-server'), join(bin, 'temporal-sql-tool'), join(pg, 'postgres')]) writeFileSync(file, '');
    expect(() => resolveProductionTemporal({ AUTONODE_CACHE: cache })).toThrow(/initdb/);
    writeFileSync(join(pg, 'initdb'), '');
    const found = resolveProductionTemporal({ AUTONODE_CACHE: cache });
    expect(found).toEqual({ server: join(bin, 'temporal-server'), sqlTool: join(bin, 'temporal-sql-tool'), postgresBin: pg, postgresLibraryPath: undefined });
  });

  it('runs the four services on their own loopback ports against PostgreSQL, with the shard count asked for', () => {
    const config = serverConfig({ ports, historyShards: 16, dynamicConfigFile: '/stack/temporal/dynamicconfig.yaml', metricsPort: ports.frontendMetrics });
    expect(Object.keys(config.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    const bound = Object.values(config.services).flatMap((s) => [s.rpc.grpcPort, s.rpc.membershipPort]);
    expect(new Set(bound).size).toBe(8);
    expect(Object.values(config.services).every((s) => s.rpc.bindOnIP === '127.0.0.1')).toBe(true);
    expect(config.persistence.numHistoryShards).toBe(16);
    expect(Object.values(config.persistence.datastores).map((d) => [d.sql.pluginName, d.sql.connectAddr, d.sql.databaseName])).toEqual([
      ['postgres12', '127.0.0.1:15432', 'temporal'],
      ['postgres12', '127.0.0.1:15432', 'temporal_visibility'],
    ]);
    expect(config.clusterMetadata.clusterInformation.active.rpcAddress).toBe('127.0.0.1:17233');
    expect(config.dynamicConfigClient.filepath).toBe('/stack/temporal/dynamicconfig.yaml');
  });

  it('starts each service as its own process, history and matching before the frontend, each config differing only in its metrics port', () => {
    expect(TEMPORAL_SERVICES).toEqual(['history', 'matching', 'frontend', 'worker']);
    expect(TEMPORAL_SERVICES.map(temporalProcessName)).toEqual(['temporal-history', 'temporal-matching', 'temporal-frontend', 'temporal-worker']);
    const configs = TEMPORAL_SERVICES.map((service) => serverConfig({ ports, historyShards: 4, dynamicConfigFile: '/d.yaml', metricsPort: ports[`${service}Metrics`] }));
    expect(configs.map((c) => c.global.metrics.prometheus.listenAddress)).toEqual(['127.0.0.1:18001', '127.0.0.1:18002', '127.0.0.1:18003', '127.0.0.1:18004']);
    const withoutMetrics = configs.map((c) => JSON.stringify({ ...c, global: { ...c.global, metrics: undefined } }));
    expect(new Set(withoutMetrics).size).toBe(1);
  });

  it('writes dynamic config as the server reads it, the caller\'s values over the defaults autonode relies on', () => {
    const yaml = dynamicConfigYaml({ 'limit.historyCount.suggestContinueAsNew': 150, 'frontend.enableUpdateWorkflowExecution': false });
    expect(yaml['limit.historyCount.suggestContinueAsNew']).toEqual([{ value: 150 }]);
    expect(yaml['frontend.enableUpdateWorkflowExecution']).toEqual([{ value: false }]);
    expect(yaml['system.forceSearchAttributesCacheRefreshOnRead']).toEqual([{ value: true }]);
  });

  it('starts PostgreSQL in a user namespace as nobody when we are root (it refuses uid 0), directly otherwise', () => {
    const wrapped = unprivileged('/cache/pg/bin/postgres', ['-D', '/stack/postgres']);
    if (process.getuid?.() === 0) {
      expect(wrapped).toEqual({ command: 'unshare', args: ['--user', '--map-user=65534', '--map-group=65534', '/cache/pg/bin/postgres', '-D', '/stack/postgres'] });
    } else {
      expect(wrapped).toEqual({ command: '/cache/pg/bin/postgres', args: ['-D', '/stack/postgres'] });
    }
  });
});
