import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../core/api/nodeclaim';
import { podDisposition, reserveForInFlightClaims } from '../../core/provisioning';
import { type KubeClients } from '../kube/clients';
import { listItems } from '../kube/lists';

/**
 * The guest cluster as one batch sees it: read by the packing activity itself (never
 * passed through signals), once per batch, as plain JSON.
 */
export interface World {
  /** pods to plan for: provisionable, and no claim still coming up was planned for them */
  provisionable: unknown[];
  /** bound pods, and the provisionable pods an in-flight claim holds (bound to it here; core/provisioning/reserved.ts) */
  bound: unknown[];
  /** how many of `bound` are held by in-flight claims rather than bound */
  awaiting: number;
  nodes: unknown[];
  daemonSets: unknown[];
  nodeClaims: StoredNodeClaim[];
  nodePools: unknown[];
  nodeClasses: unknown[];
}

const withKind = (apiVersion: string, kind: string) => (item: unknown) => (typeof item === 'object' && item !== null ? { apiVersion, kind, ...item } : item);

/** `onListed` sees every node and pod as listed (the metrics' cluster snapshot), before the world keeps only what a batch plans with. */
export async function readWorld(guest: KubeClients, options: { onListed?: (lists: { nodes: readonly unknown[]; pods: readonly unknown[] }) => void } = {}): Promise<World> {
  const custom = (group: string, plural: string) => guest.customObjects.listClusterCustomObject({ group, version: 'v1', plural });
  // pods, nodes and daemon sets as plain JSON (clients.ts getJson): the core parses what it reads of them
  const [pods, nodes, daemonSets, claims, pools, classes] = await Promise.all([
    guest.getJson('/api/v1/pods'),
    guest.getJson('/api/v1/nodes'),
    guest.getJson('/apis/apps/v1/daemonsets'),
    custom('karpenter.sh', 'nodeclaims'),
    custom('karpenter.sh', 'nodepools'),
    custom('karpenter.k8s.aws', 'ec2nodeclasses'),
  ]);
  const podObjects = listItems(pods).map(withKind('v1', 'Pod'));
  const nodeObjects = listItems(nodes).map(withKind('v1', 'Node'));
  options.onListed?.({ nodes: nodeObjects, pods: podObjects });
  return worldFrom({
    pods: podObjects,
    nodes: nodeObjects,
    daemonSets: listItems(daemonSets).map(withKind('apps/v1', 'DaemonSet')),
    nodeClaims: listItems(claims).map((c) => StoredNodeClaimSchema.parse(c)),
    nodePools: listItems(pools),
    nodeClasses: listItems(classes),
  });
}

/** The world from what was listed: pods sorted into those to plan for and those that hold room (bound, or held by an in-flight claim). */
export function worldFrom(lists: Omit<World, 'provisionable' | 'bound' | 'awaiting'> & { pods: readonly unknown[] }): World {
  const { pods, ...rest } = lists;
  const { provisionable, reserved } = reserveForInFlightClaims(pods.filter((p) => podDisposition(p) === 'provisionable'), rest.nodeClaims);
  return {
    ...rest,
    provisionable,
    bound: [...pods.filter((p) => podDisposition(p) === 'bound'), ...reserved],
    awaiting: reserved.length,
  };
}
