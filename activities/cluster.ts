import { type EC2Client } from '@aws-sdk/client-ec2';
import { type SSMClient } from '@aws-sdk/client-ssm';
import { VersionApi } from '@kubernetes/client-node';
import { type ClusterRef } from '../core/lifecycle';
import { createEc2CloudProvider, type CloudLogger, type CloudProvider, type PricingApi } from './cloud';
import { type CatalogStore } from './cloud/catalog-store';
import { kubeClientsFromKubeconfigFile, type KubeClients } from './kube/clients';
import { SecretTokenSource, kubeClientsFollowingToken, parseSecretKubeconfig, sameTarget, type KubeconfigTarget, type SecretKubeconfig } from './kube/secret-kubeconfig';

/** Everything an activity needs to act on one hosted cluster. */
export interface ClusterConnections {
  guest: KubeClients;
  cloud: CloudProvider;
}

/** Port: from the ClusterRef in a workflow payload to live, credentialed clients. */
export type ClusterResolver = (cluster: ClusterRef) => Promise<ClusterConnections>;

interface ResolverOptions {
  ec2ClientFor: (cluster: { name: string; region: string; credentialsRef?: string }) => EC2Client;
  /** for `alias` / `ssmParameter` AMI terms; without it those terms say SSM is not configured */
  ssmClientFor?: (cluster: { name: string; region: string; credentialsRef?: string }) => SSMClient;
  /** on-demand prices from the Pricing API; without it, the bundled table's */
  pricingClientFor?: (cluster: { name: string; region: string; credentialsRef?: string }) => PricingApi;
  /** where the AMI alias parameters live (default /aws/service) */
  ssmPathPrefix?: string;
  /** each cluster's instance-type reads, kept across the worker's restarts */
  catalogStore?: CatalogStore;
  logger?: CloudLogger;
}

function cached(build: (cluster: ClusterRef) => Promise<ClusterConnections>): ClusterResolver {
  // One set of clients per cluster for the worker's lifetime: clients hold connection
  // pools, and activities for one cluster arrive constantly.
  const byCluster = new Map<string, Promise<ClusterConnections>>();
  return (cluster) => {
    const key = JSON.stringify([cluster.name, cluster.region, cluster.kubeconfigSecret, cluster.credentialsRef]);
    let connections = byCluster.get(key);
    if (!connections) {
      connections = build(cluster);
      byCluster.set(key, connections);
      connections.catch(() => byCluster.delete(key));
    }
    return connections;
  };
}

/**
 * The EC2 provider for one cluster. The guest's Kubernetes version (from its /version)
 * picks the EKS-optimized AMI parameters an `alias` term resolves to.
 */
async function cloudFor(cluster: ClusterRef, guest: KubeClients, options: ResolverOptions): Promise<CloudProvider> {
  const ref = { name: cluster.name, region: cluster.region, ...(cluster.credentialsRef ? { credentialsRef: cluster.credentialsRef } : {}) };
  const version = await guest.make(VersionApi).getCode();
  const minor = version.minor.replace(/[^0-9]/g, '');
  return createEc2CloudProvider({
    ec2: options.ec2ClientFor(ref),
    cluster: ref,
    kubernetesVersion: `${version.major}.${minor}`,
    ...(options.ssmClientFor ? { ssm: options.ssmClientFor(ref) } : {}),
    ...(options.pricingClientFor ? { pricing: options.pricingClientFor(ref) } : {}),
    ...(options.ssmPathPrefix ? { ssmPathPrefix: options.ssmPathPrefix } : {}),
    ...(options.catalogStore ? { catalogStore: options.catalogStore } : {}),
    ...(options.logger ? { logger: withCluster(options.logger, cluster.name) } : {}),
  });
}

/** Every line of one cluster's provider says which cluster (the provider itself does not know its ClusterRef's name is one). */
const withCluster = (logger: CloudLogger, cluster: string): CloudLogger => ({
  debug: (obj, msg) => logger.debug({ cluster, ...obj }, msg),
  info: (obj, msg) => logger.info({ cluster, ...obj }, msg),
  warn: (obj, msg) => logger.warn({ cluster, ...obj }, msg),
});

/** Development and tests: one guest kubeconfig file for every cluster name. */
export function staticClusterResolver(options: ResolverOptions & { guestKubeconfigPath: string }): ClusterResolver {
  return cached(async (cluster) => {
    const guest = kubeClientsFromKubeconfigFile(options.guestKubeconfigPath);
    return { guest, cloud: await cloudFor(cluster, guest, options) };
  });
}

/**
 * Production: the guest kubeconfig lives in a Secret of the management cluster (as
 * HyperShift keeps it); the worker's own identity there may read only those Secrets.
 * The enablement renews the token in that Secret at half its life: the clients follow it
 * (re-read every `tokenMaxAgeMs`, and after a 401: kube/secret-kubeconfig.ts); a Secret
 * that comes to name another server or CA gets new clients.
 */
export function managementSecretResolver(options: ResolverOptions & { management: KubeClients; tokenMaxAgeMs?: number; now?: () => number }): ClusterResolver {
  interface Entry {
    source: SecretTokenSource;
    target: KubeconfigTarget;
    connections: ClusterConnections;
  }
  const entries = new Map<string, Promise<Entry>>();
  const readSecret = async (cluster: ClusterRef): Promise<SecretKubeconfig> => {
    const ref = cluster.kubeconfigSecret;
    if (!ref) throw new Error(`cluster ${cluster.name}: no kubeconfigSecret in its ClusterRef; the enablement workflow sets it`);
    const secret = await options.management.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
    const encoded = secret.data?.[ref.key];
    if (!encoded) throw new Error(`cluster ${cluster.name}: Secret ${ref.namespace}/${ref.name} has no key "${ref.key}"`);
    return parseSecretKubeconfig(Buffer.from(encoded, 'base64').toString('utf8'), `cluster ${cluster.name}: Secret ${ref.namespace}/${ref.name}`);
  };
  const build = async (cluster: ClusterRef, initial: SecretKubeconfig): Promise<Entry> => {
    const source = new SecretTokenSource({
      read: () => readSecret(cluster),
      initial,
      ...(options.tokenMaxAgeMs !== undefined ? { maxAgeMs: options.tokenMaxAgeMs } : {}),
      ...(options.now ? { now: options.now } : {}),
      onStaleReadFailed: (error) => options.logger?.warn({ cluster: cluster.name, error: error instanceof Error ? error.message : String(error) }, 're-reading the guest kubeconfig Secret failed; keeping the current token'),
    });
    const guest = kubeClientsFollowingToken(initial, source);
    return { source, target: initial.target, connections: { guest, cloud: await cloudFor(cluster, guest, options) } };
  };
  const remember = (key: string, entry: Promise<Entry>) => {
    entries.set(key, entry);
    entry.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return entry;
  };
  return async (cluster) => {
    const key = JSON.stringify([cluster.name, cluster.region, cluster.kubeconfigSecret, cluster.credentialsRef]);
    const current = await (entries.get(key) ?? remember(key, readSecret(cluster).then((initial) => build(cluster, initial))));
    const latest = await current.source.latest();
    if (sameTarget(latest.target, current.target)) return current.connections;
    return (await remember(key, build(cluster, latest))).connections;
  };
}
