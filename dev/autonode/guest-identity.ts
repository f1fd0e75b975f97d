import { projectRoot } from '../paths';
import { loadAllYaml } from '@kubernetes/client-node';
import { z } from 'zod';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { clusterAccessOf, tokenKubeConfig } from '../simkubelet';

const RBAC_FILE = join(projectRoot(), 'k8s', 'guest', 'rbac.yaml');
const TOKEN_SECONDS = 24 * 3600;

/**
 * Applies k8s/guest/rbac.yaml and writes a kubeconfig for the `autonode` ServiceAccount
 * (a TokenRequest token), so the workers act in the guest with exactly the permissions an
 * operator grants them — never as cluster-admin.
 */
export async function writeAutonodeGuestKubeconfig(admin: KubeClients, path: string): Promise<string> {
  const docs = z
    .array(z.object({ apiVersion: z.string(), kind: z.string(), metadata: z.object({ name: z.string(), namespace: z.string().optional() }) }).passthrough())
    .parse(loadAllYaml(readFileSync(RBAC_FILE, 'utf8')));
  for (const doc of docs) {
    try {
      await admin.objects.create(doc);
    } catch (err) {
      if (!isConflict(err)) throw err;
      await admin.objects.replace(doc);
    }
  }
  const request = await admin.core.createNamespacedServiceAccountToken({
    name: 'autonode',
    namespace: 'kube-system',
    body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } },
  });
  const token = request.status?.token;
  if (!token) throw new Error('TokenRequest for kube-system/autonode returned no token');
  const kc = tokenKubeConfig(clusterAccessOf(admin.config), 'system:serviceaccount:kube-system:autonode', token);
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}
