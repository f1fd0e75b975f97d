/**
 * What enablement does in a guest cluster with its admin kubeconfig, and only that: apply
 * autonode's CRDs and its own least-privileged identity (k8s/crds, k8s/guest/rbac.yaml,
 * server-side apply), wait for the CRDs, and mint a token for that identity. Everything
 * else autonode does in the guest, it does as that identity.
 */
import { KubeConfig, PatchStrategy, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { type KubeClients } from '../kube/clients';
import { isNotFound } from '../kube/errors';

/** the identity's token lifetime; enablement mints a new one well before it ends */
export const GUEST_TOKEN_SECONDS = 24 * 3600;
export const FIELD_MANAGER = 'autonode';

let root: string | undefined;
/** The directory holding `k8s/` (the sources, or the package a dist/ build sits in). */
function manifestsRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'k8s', 'crds')) && existsSync(join(dir, 'k8s', 'guest', 'rbac.yaml'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`cannot find autonode's k8s/ manifests above ${__dirname}`);
  }
}

const ObjectSchema = z.object({ apiVersion: z.string(), kind: z.string(), metadata: z.object({ name: z.string(), namespace: z.string().optional() }).passthrough() }).passthrough();

function manifests(files: readonly string[]): KubernetesObject[] {
  return files.flatMap((file) => z.array(ObjectSchema).parse(loadAllYaml(readFileSync(file, 'utf8')).filter((d) => d !== null)));
}

export function guestCrdManifests(): KubernetesObject[] {
  const dir = join(manifestsRoot(), 'k8s', 'crds');
  return manifests(
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => join(dir, f)),
  );
}

export function guestRbacManifests(): KubernetesObject[] {
  return manifests([join(manifestsRoot(), 'k8s', 'guest', 'rbac.yaml')]);
}

/** Server-side apply, autonode's field manager, forced: autonode owns these objects' fields. */
export async function applyAll(admin: KubeClients, objects: readonly KubernetesObject[]): Promise<void> {
  for (const object of objects) {
    await admin.objects.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }
}

/** Waits until every CRD applied is Established (bounded: the caller's activity retries). */
export async function waitEstablished(admin: KubeClients, crds: readonly KubernetesObject[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const read = await admin.objects.read({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
      const conditions = z.object({ status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() }).optional() }).safeParse(read).data?.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} is not Established after ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Deletes what applyAll made (the identity; the CRDs only when asked: deleting them deletes every Karpenter object). */
export async function deleteAll(admin: KubeClients, objects: readonly KubernetesObject[]): Promise<void> {
  for (const object of [...objects].reverse()) {
    await admin.objects.delete(object).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
}

/**
 * A kubeconfig for kube-system/autonode with a fresh TokenRequest token, as YAML text;
 * `renewAfter` is half its life (from the API server's expiration, which may be shorter
 * than asked for). The API server refuses lifetimes under 10 minutes.
 */
export async function autonodeKubeconfig(admin: KubeClients, expirationSeconds = GUEST_TOKEN_SECONDS, now: () => Date = () => new Date()): Promise<{ kubeconfig: string; expiresAt: string; renewAfter: string }> {
  const requestedAt = now().getTime();
  const request = await admin.core.createNamespacedServiceAccountToken({
    name: 'autonode',
    namespace: 'kube-system',
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = request.status?.token;
  if (!token) throw new Error('TokenRequest for kube-system/autonode returned no token');
  const cluster = admin.config.getCurrentCluster();
  if (!cluster) throw new Error('the guest admin kubeconfig has no current cluster');
  const caData = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'guest', server: cluster.server, ...(caData ? { caData } : {}), skipTLSVerify: false }],
    users: [{ name: 'system:serviceaccount:kube-system:autonode', token }],
    contexts: [{ name: 'autonode', cluster: 'guest', user: 'system:serviceaccount:kube-system:autonode' }],
    currentContext: 'autonode',
  });
  const expiration = request.status?.expirationTimestamp;
  const expiresAtMs = expiration instanceof Date ? expiration.getTime() : requestedAt + expirationSeconds * 1000;
  return {
    kubeconfig: kc.exportConfig(),
    expiresAt: new Date(expiresAtMs).toISOString(),
    renewAfter: new Date(requestedAt + Math.max(0, expiresAtMs - requestedAt) / 2).toISOString(),
  };
}
