import { z } from 'zod';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../core/api/nodeclaim';
import { podDisposition } from '../../core/provisioning';
import { type KubeClients } from '../kube/clients';

/**
 * The guest cluster as one batch sees it: read by the packing activity itself (never
 * passed through signals), once per batch, as plain JSON.
 */
export interface World {
  provisionable: unknown[];
  bound: unknown[];
  nodes: unknown[];
  daemonSets: unknown[];
  nodeClaims: StoredNodeClaim[];
  nodePools: unknown[];
  nodeClasses: unknown[];
}

const ListSchema = z.object({ items: z.array(z.unknown()) });

/** Typed client models carry Dates and class instances: through JSON they become what the API server sent. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const withKind = (apiVersion: string, kind: string) => (item: unknown) => (typeof item === 'object' && item !== null ? { apiVersion, kind, ...item } : item);

/** `onListed` sees every node and pod as listed (the metrics' cluster snapshot), before the world keeps only what a batch plans with. */
export async function readWorld(guest: KubeClients, options: { onListed?: (lists: { nodes: readonly unknown[]; pods: readonly unknown[] }) => void } = {}): Promise<World> {
  const custom = (group: string, plural: string) => guest.customObjects.listClusterCustomObject({ group, version: 'v1', plural });
  const [pods, nodes, daemonSets, claims, pools, classes] = await Promise.all([
    guest.core.listPodForAllNamespaces(),
    guest.core.listNode(),
    guest.objects.list('apps/v1', 'DaemonSet'),
    custom('karpenter.sh', 'nodeclaims'),
    custom('karpenter.sh', 'nodepools'),
    custom('karpenter.k8s.aws', 'ec2nodeclasses'),
  ]);
  const podObjects = ListSchema.parse(plain(pods)).items.map(withKind('v1', 'Pod'));
  const nodeObjects = ListSchema.parse(plain(nodes)).items.map(withKind('v1', 'Node'));
  options.onListed?.({ nodes: nodeObjects, pods: podObjects });
  return {
    provisionable: podObjects.filter((p) => podDisposition(p) === 'provisionable'),
    bound: podObjects.filter((p) => podDisposition(p) === 'bound'),
    nodes: nodeObjects,
    daemonSets: ListSchema.parse(plain(daemonSets)).items.map(withKind('apps/v1', 'DaemonSet')),
    nodeClaims: ListSchema.parse(claims).items.map((c) => StoredNodeClaimSchema.parse(c)),
    nodePools: ListSchema.parse(pools).items,
    nodeClasses: ListSchema.parse(classes).items,
  };
}
