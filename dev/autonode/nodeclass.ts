import { z } from 'zod';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { type KubeClients } from '../../activities/kube/clients';
import { join } from 'node:path';
import { projectRoot } from '../paths';
import { isConflict } from '../../activities/kube/errors';

/**
 * An `amiFamily: Custom` EC2NodeClass (a HyperShift node class: userData passed through)
 * selecting a cluster's network by its discovery tag. Created once; an existing one is kept.
 */
export async function ensureCustomNodeClass(
  guest: KubeClients,
  options: {
    name: string;
    discoveryTag: Record<string, string>;
    amiSelectorTerms: Record<string, unknown>[];
    /** absent: the class has none (a simulated kubelet then needs its fleet's withoutUserData) */
    userData?: string;
    /** more spec fields (kubelet, blockDeviceMappings, metadataOptions, tags, …) */
    spec?: Record<string, unknown>;
  },
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
          ...(options.userData === undefined ? {} : { userData: options.userData }),
          ...options.spec,
        },
      },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
}

/** Creates k8s/examples/nodepool.yaml when the guest has no NodePool; returns its name when created. */
export async function ensureDefaultNodePool(guest: KubeClients): Promise<string | undefined> {
  const existing = await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' });
  if (typeof existing === 'object' && existing !== null && 'items' in existing && Array.isArray(existing.items) && existing.items.length > 0) return undefined;
  const body = z.record(z.string(), z.unknown()).parse(parse(readFileSync(join(projectRoot(), 'k8s', 'examples', 'nodepool.yaml'), 'utf8')));
  try {
    await guest.customObjects.createClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', body });
  } catch (err) {
    if (!isConflict(err)) throw err;
    return undefined;
  }
  return 'default';
}
