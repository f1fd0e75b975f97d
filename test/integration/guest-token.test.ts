// The workers' guest clients follow the token in the management cluster's Secret (issue 13,
// token renewal) against the real API servers: when the token they hold stops being valid,
// the next request after the 401 carries the renewed one from the Secret — without waiting
// for the age check and without new clients. A token stops being valid here the way a
// revoked one does: it is bound to an object (a Secret in the guest), which is deleted.
// (The enablement's own renewal timing is tested on the time-skipping server:
// test/workflow/enablement-token.test.ts; TokenRequest lifetimes under 10 minutes are
// refused, so an expiry here would take too long.)
import { KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { createEc2ClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { managementSecretResolver } from '../../activities/cluster';
import { applyAll, guestRbacManifests } from '../../activities/enablement/guest';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { clusterAccessOf } from '../../dev/simkubelet';
import { eventually } from '../support/eventually';
import { loadStackInfo } from '../support/stack';

jest.setTimeout(120_000);

const statusCode = (err: unknown): number | undefined => (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number' ? err.code : undefined);

describe('guest clients from the management cluster’s Secret (real API servers)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const namespace = `token-${id}`;
  const secretRef = { namespace, name: 'dev-autonode-kubeconfig', key: 'kubeconfig' };

  /** A kubeconfig for kube-system/autonode whose token dies with the guest Secret `anchor`. */
  async function boundKubeconfig(admin: KubeClients, anchor: string): Promise<string> {
    const created = await admin.core.createNamespacedSecret({ namespace: 'kube-system', body: { metadata: { name: anchor } } });
    const request = await admin.core.createNamespacedServiceAccountToken({
      name: 'autonode',
      namespace: 'kube-system',
      body: { spec: { audiences: [], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: anchor, uid: created.metadata?.uid ?? '' } } },
    });
    const access = clusterAccessOf(admin.config);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'guest', server: access.server, caData: Buffer.from(access.caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'autonode', token: request.status?.token ?? '' }],
      contexts: [{ name: 'autonode', cluster: 'guest', user: 'autonode' }],
      currentContext: 'autonode',
    });
    return kc.exportConfig();
  }

  async function publish(kubeconfig: string): Promise<void> {
    const body = { metadata: { name: secretRef.name, namespace }, data: { [secretRef.key]: Buffer.from(kubeconfig).toString('base64') } };
    try {
      await management.core.createNamespacedSecret({ namespace, body });
    } catch (err) {
      if (!isConflict(err)) throw err;
      await management.core.replaceNamespacedSecret({ namespace, name: secretRef.name, body });
    }
  }

  beforeAll(async () => {
    await applyAll(guest, guestRbacManifests());
    await management.core.createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await management.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    for (const anchor of [`autonode-a-${id}`, `autonode-b-${id}`]) await guest.core.deleteNamespacedSecret({ namespace: 'kube-system', name: anchor }).catch(() => undefined);
  });

  it('after the token is revoked, one request gets 401 and the next carries the renewed token from the Secret', async () => {
    await publish(await boundKubeconfig(guest, `autonode-a-${id}`));
    const ec2ClientFor = createEc2ClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: 'loopback-only' });
    // an age check an hour away: only the 401 can make it read the Secret again
    const resolve = managementSecretResolver({ management, ec2ClientFor, tokenMaxAgeMs: 3_600_000 });
    const cluster = { name: `token-${id}`, region: stack.ec2.region, kubeconfigSecret: secretRef };
    const { guest: asAutonode } = await resolve(cluster);
    await asAutonode.core.listNode();

    // the enablement renews: a new token in the Secret; then the old one is revoked
    await publish(await boundKubeconfig(guest, `autonode-b-${id}`));
    await guest.core.deleteNamespacedSecret({ namespace: 'kube-system', name: `autonode-a-${id}` });
    const refused = await eventually('a 401 for the revoked token', async () => {
      try {
        await asAutonode.core.listNode();
        return undefined;
      } catch (err) {
        return statusCode(err) === 401 ? err : undefined;
      }
    });
    expect(statusCode(refused)).toBe(401);
    // the same clients, the next request: the renewed token
    await expect(asAutonode.core.listNode()).resolves.toBeDefined();
    expect((await resolve(cluster)).guest).toBe(asAutonode);
  });
});
