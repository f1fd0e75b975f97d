import { type KubeClients } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';

/**
 * An `amiFamily: Custom` EC2NodeClass (a HyperShift node class: userData passed through)
 * selecting a cluster's network by its discovery tag. Created once; an existing one is kept.
 */
export async function ensureCustomNodeClass(
  guest: KubeClients,
  options: { name: string; discoveryTag: Record<string, string>; amiSelectorTerms: Record<string, unknown>[]; userData: string },
): Promise<void> {
  await guest.customObjects
    .createClusterCustomObject({
      group: 'karpenter.k8s.aws',
      version: 'v1',
      plural: 'ec2nodeclasses',
      body: {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: options.name },
        spec: {
          amiFamily: 'Custom',
          subnetSelectorTerms: [{ tags: options.discoveryTag }],
          securityGroupSelectorTerms: [{ tags: options.discoveryTag }],
          amiSelectorTerms: options.amiSelectorTerms,
          userData: options.userData,
        },
      },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
}
