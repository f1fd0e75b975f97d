import { writeFileSync } from 'node:fs';
import { applyAll, autonodeKubeconfig, guestRbacManifests } from '../../activities/enablement/guest';
import { type KubeClients } from '../../activities/kube/clients';

/**
 * Applies k8s/guest/rbac.yaml and writes a kubeconfig for the `autonode` ServiceAccount
 * (a TokenRequest token), so the workers act in the guest with exactly the permissions an
 * operator grants them — never as cluster-admin. The same two steps the enablement
 * workflow takes (activities/enablement/guest.ts), for tests that have no HostedCluster.
 */
export async function writeAutonodeGuestKubeconfig(admin: KubeClients, path: string): Promise<string> {
  await applyAll(admin, guestRbacManifests());
  const { kubeconfig } = await autonodeKubeconfig(admin);
  writeFileSync(path, kubeconfig, { mode: 0o600 });
  return path;
}
