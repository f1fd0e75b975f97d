/**
 * The node userData HyperShift would publish for a hosted cluster, made on the local stack:
 * an Ignition config carrying the kubelet's bootstrap kubeconfig (core/enablement/ignition.ts
 * says what is modelled). Its token is the node bootstrapper's
 * (openshift-machine-config-operator/node-bootstrapper, bound to system:node-bootstrapper),
 * a long-lived ServiceAccount token Secret as OpenShift's machine-config operator keeps it
 * (`node-bootstrapper-token`): the controller-manager's token controller fills it in, and it
 * lives as long as the Secret — a node booting tomorrow from today's userData still joins.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeIgnition } from '../../core/enablement/ignition';
import { type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { clusterAccessOf, ensureServiceAccountIdentity, NODE_BOOTSTRAPPER } from '../simkubelet/identity';

export const NODE_BOOTSTRAPPER_TOKEN_SECRET = 'node-bootstrapper-token';

/** The bootstrapper's long-lived token (created once; waits for the token controller, bounded). */
export async function nodeBootstrapperToken(guestAdmin: KubeClients, timeoutMs = 60_000): Promise<string> {
  // the ServiceAccount and its binding (the TokenRequest it also makes is not used here)
  await ensureServiceAccountIdentity(guestAdmin, NODE_BOOTSTRAPPER);
  const { namespace, name } = NODE_BOOTSTRAPPER;
  await guestAdmin.core
    .createNamespacedSecret({
      namespace,
      body: { metadata: { name: NODE_BOOTSTRAPPER_TOKEN_SECRET, namespace, annotations: { 'kubernetes.io/service-account.name': name } }, type: 'kubernetes.io/service-account-token' },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const secret = await guestAdmin.core.readNamespacedSecret({ namespace, name: NODE_BOOTSTRAPPER_TOKEN_SECRET });
    const token = secret.data?.token;
    if (token) return Buffer.from(token, 'base64').toString('utf8');
    if (Date.now() > deadline) {
      throw new Error(`Secret ${namespace}/${NODE_BOOTSTRAPPER_TOKEN_SECRET} has no token after ${timeoutMs / 1000}s: is the guest's kube-controller-manager running with --service-account-private-key-file?`);
    }
    await sleep(250);
  }
}

/** The cluster's node userData: join this guest as the node bootstrapper. */
export async function localNodeUserData(guestAdmin: KubeClients): Promise<string> {
  const access = clusterAccessOf(guestAdmin.config);
  return nodeIgnition({ server: access.server, caPem: access.caPem, token: await nodeBootstrapperToken(guestAdmin) });
}
