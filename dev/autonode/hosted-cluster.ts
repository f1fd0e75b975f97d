/**
 * What HyperShift would have put into a management cluster for one hosted cluster, made by
 * hand on the local stack: the HostedCluster (without spec.autoNode: enabling it is the
 * starter's job), the guest's admin kubeconfig Secret, the node bootstrap userData Secret,
 * and the release's CoreOS stream metadata (which AMI the release names per region).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { HOSTED_CLUSTERS, RELEASE_METADATA_NAMESPACE, adminKubeconfigSecret, userDataSecret } from '../../activities/enablement/activity';
import { kubeClientsFromKubeconfigString, type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { RELEASE_METADATA_LABEL } from '../../core/enablement/release';
import { fnv1a64 } from '../../core/provisioning';
import { localNodeUserData } from './node-ignition';

export const LOCAL_RELEASE_IMAGE = 'quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64';

export interface LocalHostedCluster {
  namespace: string;
  name: string;
  infraID: string;
  region: string;
  releaseImage: string;
}

const ReleaseAmisSchema = z.array(z.object({ ami_id: z.string(), architecture: z.enum(['x86_64', 'arm64']) }));

/** The release's stream metadata: the AMIs moto knows as the release's node images (dev/stack/release-amis.json). */
export function localReleaseStream(region: string): string {
  const amis = ReleaseAmisSchema.parse(JSON.parse(readFileSync(join(__dirname, '..', 'stack', 'release-amis.json'), 'utf8')));
  const architectures: Record<string, unknown> = {};
  for (const ami of amis) {
    const arch = ami.architecture === 'arm64' ? 'aarch64' : 'x86_64';
    architectures[arch] = { images: { aws: { regions: { [region]: { image: ami.ami_id } } } } };
  }
  return JSON.stringify({ stream: 'rhcos-4.18', architectures });
}

async function createOrReplace(create: () => Promise<unknown>, replace: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isConflict(err)) throw err;
    await replace();
  }
}

/**
 * `options.userData` replaces the node userData HyperShift would publish (an Ignition config
 * that joins the guest as its node bootstrapper, node-ignition.ts), e.g. to publish a wrong one.
 */
export async function createLocalHostedCluster(management: KubeClients, guestAdminKubeconfig: string, hc: LocalHostedCluster, options: { userData?: string } = {}): Promise<void> {
  for (const namespace of [hc.namespace, RELEASE_METADATA_NAMESPACE]) {
    await management.core.createNamespace({ body: { metadata: { name: namespace } } }).catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
  }
  const admin = adminKubeconfigSecret(hc);
  const adminBody = { metadata: { name: admin.name, namespace: admin.namespace }, type: 'Opaque', data: { [admin.key]: Buffer.from(guestAdminKubeconfig).toString('base64') } };
  await createOrReplace(
    () => management.core.createNamespacedSecret({ namespace: admin.namespace, body: adminBody }),
    () => management.core.replaceNamespacedSecret({ namespace: admin.namespace, name: admin.name, body: adminBody }),
  );
  const userData = userDataSecret(hc);
  const userDataBody = {
    metadata: { name: userData.name, namespace: userData.namespace },
    type: 'Opaque',
    data: { [userData.key]: Buffer.from(options.userData ?? (await localNodeUserData(kubeClientsFromKubeconfigString(guestAdminKubeconfig)))).toString('base64') },
  };
  await createOrReplace(
    () => management.core.createNamespacedSecret({ namespace: userData.namespace, body: userDataBody }),
    () => management.core.replaceNamespacedSecret({ namespace: userData.namespace, name: userData.name, body: userDataBody }),
  );
  const release = `release-${fnv1a64(hc.releaseImage).toString(36)}`;
  const releaseBody = {
    metadata: { name: release, namespace: RELEASE_METADATA_NAMESPACE, labels: { [RELEASE_METADATA_LABEL]: 'true' } },
    data: { releaseImage: hc.releaseImage, stream: localReleaseStream(hc.region) },
  };
  await createOrReplace(
    () => management.core.createNamespacedConfigMap({ namespace: RELEASE_METADATA_NAMESPACE, body: releaseBody }),
    () => management.core.replaceNamespacedConfigMap({ namespace: RELEASE_METADATA_NAMESPACE, name: release, body: releaseBody }),
  );
  await management.customObjects
    .createNamespacedCustomObject({
      ...HOSTED_CLUSTERS,
      namespace: hc.namespace,
      body: {
        apiVersion: `${HOSTED_CLUSTERS.group}/${HOSTED_CLUSTERS.version}`,
        kind: 'HostedCluster',
        metadata: { name: hc.name, namespace: hc.namespace },
        spec: { infraID: hc.infraID, release: { image: hc.releaseImage }, platform: { type: 'AWS', aws: { region: hc.region } } },
      },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
}
