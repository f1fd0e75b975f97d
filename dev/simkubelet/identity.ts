/**
 * Real credentials for the simulated kubelet, as a real node would hold them: a
 * ServiceAccount token for the node bootstrapper (HyperShift's
 * openshift-machine-config-operator/node-bootstrapper, bound to the built-in ClusterRole
 * system:node-bootstrapper), and later its own client certificate. No impersonation: the
 * API server authenticates every request, so the Node authorizer and NodeRestriction see
 * exactly what they would see from a machine.
 */
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { isConflict } from '../../activities/kube/errors';
import { type KubeClients } from '../../activities/kube/clients';

export interface ClusterAccess {
  server: string;
  caPem: string;
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
  /** cluster role bound to the ServiceAccount, e.g. system:node-bootstrapper */
  clusterRole: string;
}

export const NODE_BOOTSTRAPPER: ServiceAccountRef = {
  namespace: 'openshift-machine-config-operator',
  name: 'node-bootstrapper',
  clusterRole: 'system:node-bootstrapper',
};

export interface ServiceAccountIdentity {
  /** system:serviceaccount:<namespace>:<name>, as CSRs will record it */
  username: string;
  kubeConfig: KubeConfig;
  expiresAt: Date;
}

const TOKEN_SECONDS = 3600;

/** The API server and the CA that signs its serving certificate, from an admin kubeconfig. */
export function clusterAccessOf(config: KubeConfig): ClusterAccess {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster: set current-context');
  const caPem = cluster.caData
    ? Buffer.from(cluster.caData, 'base64').toString('utf8')
    : cluster.caFile
      ? readFileSync(cluster.caFile, 'utf8')
      : undefined;
  if (!caPem) throw new Error(`kubeconfig cluster ${cluster.name} has no certificate authority: the simulated kubelet verifies the API server`);
  return { server: cluster.server, caPem };
}

export function tokenKubeConfig(access: ClusterAccess, user: string, token: string): KubeConfig {
  return kubeConfigFor(access, { name: user, token });
}

export function certificateKubeConfig(access: ClusterAccess, user: string, credentials: { certPem: string; keyPem: string }): KubeConfig {
  return kubeConfigFor(access, { name: user, certData: b64(credentials.certPem), keyData: b64(credentials.keyPem) });
}

function kubeConfigFor(access: ClusterAccess, user: { name: string; token?: string; certData?: string; keyData?: string }): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'guest', server: access.server, caData: b64(access.caPem), skipTLSVerify: false }],
    users: [user],
    contexts: [{ name: 'guest', cluster: 'guest', user: user.name }],
    currentContext: 'guest',
  });
  return config;
}

/**
 * Creates (or finds) the ServiceAccount and its ClusterRoleBinding, then asks the
 * TokenRequest API for a token. Idempotent: safe to call from every test file.
 */
export async function ensureServiceAccountIdentity(admin: KubeClients, ref: ServiceAccountRef): Promise<ServiceAccountIdentity> {
  await createIfAbsent(() => admin.core.createNamespace({ body: { metadata: { name: ref.namespace } } }));
  await createIfAbsent(() =>
    admin.core.createNamespacedServiceAccount({ namespace: ref.namespace, body: { metadata: { name: ref.name, namespace: ref.namespace } } }));
  await createIfAbsent(() =>
    admin.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `autonode-sim:${ref.namespace}:${ref.name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ref.clusterRole },
      subjects: [{ kind: 'ServiceAccount', name: ref.name, namespace: ref.namespace }],
    }));
  const request = await admin.core.createNamespacedServiceAccountToken({
    name: ref.name,
    namespace: ref.namespace,
    body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${ref.namespace}/${ref.name} returned no token`);
  const username = `system:serviceaccount:${ref.namespace}:${ref.name}`;
  const expiresAt = request.status?.expirationTimestamp ?? new Date(Date.now() + TOKEN_SECONDS * 1000);
  return { username, expiresAt, kubeConfig: tokenKubeConfig(clusterAccessOf(admin.config), username, token) };
}

/** The node bootstrapper's identity on the guest cluster (one-time setup, idempotent). */
export function ensureBootstrapIdentity(admin: KubeClients): Promise<ServiceAccountIdentity> {
  return ensureServiceAccountIdentity(admin, NODE_BOOTSTRAPPER);
}

/**
 * A source of bootstrap credentials for long runs (`autonode dev`): the token is requested
 * again once less than a quarter of its life is left.
 */
export function bootstrapIdentitySource(admin: KubeClients, now: () => Date = () => new Date()): () => Promise<ServiceAccountIdentity> {
  let current: Promise<ServiceAccountIdentity> | undefined;
  return async () => {
    const identity = current ? await current : undefined;
    if (identity && identity.expiresAt.getTime() - now().getTime() > (TOKEN_SECONDS * 1000) / 4) return identity;
    current = ensureBootstrapIdentity(admin);
    current.catch(() => (current = undefined));
    return current;
  };
}

async function createIfAbsent(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
