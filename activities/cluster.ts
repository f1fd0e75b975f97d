import { type EC2Client } from '@aws-sdk/client-ec2';
import { type ClusterRef } from '../core/lifecycle';
import { createEc2CloudProvider, type CloudLogger, type CloudProvider } from './cloud';
import { kubeClientsFromKubeconfigFile, kubeClientsFromKubeconfigString, type KubeClients } from './kube/clients';

/** Everything an activity needs to act on one hosted cluster. */
export interface ClusterConnections {
  guest: KubeClients;
  cloud: CloudProvider;
}

/** Port: from the ClusterRef in a workflow payload to live, credentialed clients. */
export type ClusterResolver = (cluster: ClusterRef) => Promise<ClusterConnections>;

interface ResolverOptions {
  ec2ClientFor: (cluster: { name: string; region: string; credentialsRef?: string }) => EC2Client;
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

function cloudFor(cluster: ClusterRef, options: ResolverOptions): CloudProvider {
  const ref = { name: cluster.name, region: cluster.region, ...(cluster.credentialsRef ? { credentialsRef: cluster.credentialsRef } : {}) };
  return createEc2CloudProvider({ ec2: options.ec2ClientFor(ref), cluster: ref, ...(options.logger ? { logger: options.logger } : {}) });
}

/** Development and tests: one guest kubeconfig file for every cluster name. */
export function staticClusterResolver(options: ResolverOptions & { guestKubeconfigPath: string }): ClusterResolver {
  return cached(async (cluster) => ({ guest: kubeClientsFromKubeconfigFile(options.guestKubeconfigPath), cloud: cloudFor(cluster, options) }));
}

/**
 * Production: the guest kubeconfig lives in a Secret of the management cluster (as
 * HyperShift keeps it); the worker's own identity there may read only those Secrets.
 */
export function managementSecretResolver(options: ResolverOptions & { management: KubeClients }): ClusterResolver {
  return cached(async (cluster) => {
    const ref = cluster.kubeconfigSecret;
    if (!ref) throw new Error(`cluster ${cluster.name}: no kubeconfigSecret in its ClusterRef; the enablement workflow sets it`);
    const secret = await options.management.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
    const encoded = secret.data?.[ref.key];
    if (!encoded) throw new Error(`cluster ${cluster.name}: Secret ${ref.namespace}/${ref.name} has no key "${ref.key}"`);
    return { guest: kubeClientsFromKubeconfigString(Buffer.from(encoded, 'base64').toString('utf8')), cloud: cloudFor(cluster, options) };
  });
}
