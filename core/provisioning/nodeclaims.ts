import type { NodePool } from '../api/nodepool';
import type { PlannedNodeClaim } from '../packing/plan';
import { LabelKey } from '../scheduling/labels';
import { addResources, formatResourceList, parseResourceList, type ResourceList } from '../scheduling/resources';

/** The batch a NodeClaim was created by: a resumed batch finds the claims it already made. */
export const BATCH_LABEL = 'autonode.io/batch';
export const NODEPOOL_HASH_ANNOTATION = 'karpenter.sh/nodepool-hash';
export const NODEPOOL_HASH_VERSION_ANNOTATION = 'karpenter.sh/nodepool-hash-version';
export const NODEPOOL_HASH_VERSION = 'v3';

/** FNV-1a, 64 bits: a stable, dependency-free hash of a string (ids and drift hashes, not security). */
export function fnv1a64(text: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash;
}

/** JSON with object keys sorted at every level: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The NodePool's template hash, stamped on each NodeClaim it makes: when the template
 * changes, the claims' hash no longer matches and disruption treats them as drifted.
 * Requirements are left out, as Karpenter leaves them out (they drift by being compared).
 */
export function nodePoolHash(pool: NodePool): string {
  const { requirements: _requirements, ...spec } = pool.spec.template.spec;
  return fnv1a64(canonicalJson({ metadata: pool.spec.template.metadata ?? {}, spec })).toString();
}

/** `<nodepool>-<5 chars>`, derived from the batch and the claim's pods: the same claim of the same batch, the same name. */
export function nodeClaimName(nodePool: string, batchId: string, pods: readonly string[]): string {
  const suffix = fnv1a64(`${batchId}\n${[...pods].sort().join('\n')}`).toString(36).padStart(5, '0').slice(-5);
  return `${nodePool}-${suffix}`;
}

export interface ClaimSource {
  pool: NodePool;
  poolUid: string;
}

export interface NodeClaimManifest {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodeClaim';
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion: boolean }[];
  };
  spec: Record<string, unknown>;
}

/**
 * The NodeClaim to create for one planned claim, as Karpenter makes it: owned by its
 * NodePool, with the template's labels, annotations, taints and startup taints, its
 * expireAfter and terminationGracePeriod, the plan's requirements narrowed to the ranked
 * instance-type options, and the pods' requests.
 */
export function nodeClaimManifest(planned: PlannedNodeClaim, source: ClaimSource, options: { batchId: string; podRequests: ReadonlyMap<string, Record<string, string>> }): NodeClaimManifest {
  const { pool } = source;
  const poolName = pool.metadata.name ?? planned.nodePool;
  const template = pool.spec.template;
  let requests: ResourceList = {};
  for (const pod of planned.pods) {
    const parsed = parseResourceList(options.podRequests.get(pod) ?? {});
    if (parsed.ok) requests = addResources(requests, parsed.resources);
  }
  const requirements = [
    ...planned.requirements.filter((r) => r.key !== LabelKey.instanceType),
    { key: LabelKey.instanceType, operator: 'In', values: [...planned.instanceTypeOptions] },
  ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const spec: Record<string, unknown> = {
    nodeClassRef: { group: template.spec.nodeClassRef.group, kind: template.spec.nodeClassRef.kind, name: template.spec.nodeClassRef.name },
    requirements,
    resources: { requests: formatResourceList(requests) },
    expireAfter: template.spec.expireAfter,
  };
  if (template.spec.taints?.length) spec.taints = template.spec.taints;
  if (template.spec.startupTaints?.length) spec.startupTaints = template.spec.startupTaints;
  if (template.spec.terminationGracePeriod) spec.terminationGracePeriod = template.spec.terminationGracePeriod;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: nodeClaimName(poolName, options.batchId, planned.pods),
      labels: { ...(template.metadata?.labels ?? {}), [LabelKey.nodePool]: poolName, [BATCH_LABEL]: options.batchId },
      annotations: {
        ...(template.metadata?.annotations ?? {}),
        [NODEPOOL_HASH_ANNOTATION]: nodePoolHash(pool),
        [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION,
      },
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: poolName, uid: source.poolUid, blockOwnerDeletion: true }],
    },
    spec,
  };
}
