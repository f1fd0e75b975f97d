import type { NodePool } from '../api/nodepool';
import { unavailableOfferingKey } from '../lifecycle/launch-options';
import type { PlannedNodeClaim } from '../packing/plan';
import { LabelKey } from '../scheduling/labels';
import { BATCH_GATE_ANNOTATION } from './batch-gate';
import { addResources, formatResourceList, parseResourceList, type ResourceList } from '../scheduling/resources';

/** The batch a NodeClaim was created by: a resumed batch finds the claims it already made. */
export const BATCH_LABEL = 'autonode.io/batch';
export const NODEPOOL_HASH_ANNOTATION = 'karpenter.sh/nodepool-hash';
export const NODEPOOL_HASH_VERSION_ANNOTATION = 'karpenter.sh/nodepool-hash-version';
export const NODEPOOL_HASH_VERSION = 'v3';
/** The $/h of the offering the plan chose for a claim: what `autonode status` sums (a launch may land on a cheaper one). */
export const PLANNED_PRICE_ANNOTATION = 'autonode.io/planned-price';
/**
 * The offerings planning held unavailable among the claim's instance types, as
 * `type/zone/capacityType` separated by commas: the launch leaves them out of CreateFleet's
 * overrides while Karpenter's insufficient-capacity TTL (3 minutes) runs from the claim's
 * creation, as Karpenter's launch filters its unavailable-offerings cache.
 */
export const UNAVAILABLE_OFFERINGS_ANNOTATION = 'autonode.io/unavailable-offerings';
/** Karpenter's unavailable-offerings TTL (pkg/cache: UnavailableOfferingsTTL). */
export const UNAVAILABLE_OFFERINGS_TTL_MS = 3 * 60_000;

/** An offering held unavailable. */
export interface HeldOffering {
  instanceType: string;
  zone: string;
  capacityType: 'spot' | 'on-demand';
}

/** The annotation's value for a claim whose options are `instanceTypes`: only their held offerings, sorted; undefined when none. */
export function unavailableOfferingsValue(held: readonly HeldOffering[], instanceTypes: readonly string[]): string | undefined {
  const types = new Set(instanceTypes);
  const keys = [...new Set(held.filter((o) => types.has(o.instanceType)).map(unavailableOfferingKey))].sort();
  return keys.length > 0 ? keys.join(',') : undefined;
}

function heldAnnotation(held: readonly HeldOffering[], instanceTypes: readonly string[]): Record<string, string> {
  const value = unavailableOfferingsValue(held, instanceTypes);
  return value === undefined ? {} : { [UNAVAILABLE_OFFERINGS_ANNOTATION]: value };
}

/**
 * The held offerings a claim's launch must leave out (`type/zone/capacityType` keys), read
 * from its annotation while the TTL from its creation runs. An entry that is not three
 * non-empty parts is ignored: the memory is advice, never a reason to fail a launch.
 */
export function heldOfferingsOf(claim: { metadata: { annotations?: Record<string, string> | undefined; creationTimestamp?: string | Date | undefined } }, nowMs: number): Set<string> {
  const value = claim.metadata.annotations?.[UNAVAILABLE_OFFERINGS_ANNOTATION];
  const created = claim.metadata.creationTimestamp === undefined ? Number.NaN : new Date(claim.metadata.creationTimestamp).getTime();
  if (!value || !Number.isFinite(created) || nowMs - created >= UNAVAILABLE_OFFERINGS_TTL_MS) return new Set();
  return new Set(
    value
      .split(',')
      .map((k) => k.trim())
      .filter((k) => {
        const parts = k.split('/');
        return parts.length === 3 && parts.every((x) => x.length > 0);
      }),
  );
}

/**
 * The pods the plan put on a claim (`namespace/name`, comma-separated): at registration,
 * just before the node becomes schedulable, each still unbound one gets the node as its
 * `status.nominatedNodeName`, so kube-scheduler keeps the node's room for it (issue 14
 * finding 2). Absent when the batch's names went over its budget (plannedPodsBudget).
 */
export const PLANNED_PODS_ANNOTATION = 'autonode.io/planned-pods';
/**
 * Bytes of pod names a provisioner batch's plan may carry for nominations. The plan is a
 * payload in the provisioner's history (twice: planBatch's result, createClaims' input):
 * ~30 B a pod on top of ~15 B a pod of compact plan. 256 KiB keeps ~8k pods nominated and a
 * 20k-pod batch's payload under 600 KiB; past the budget, later claims carry no names and
 * their pods are left to kube-scheduler as before. Rejected: the names in the nodeclaim
 * workflow's input (createClaims starts it, so they would cross the history all the same)
 * and a store outside Temporal (a second source of truth for a retried batch).
 */
export const PLANNED_PODS_BUDGET_BYTES = 256 * 1024;

/** Pod keys from a claim's PLANNED_PODS_ANNOTATION; anything not `namespace/name` is dropped. */
export function parsePlannedPods(annotation: string | undefined): { namespace: string; name: string }[] {
  if (annotation === undefined) return [];
  const pods: { namespace: string; name: string }[] = [];
  for (const key of annotation.split(',')) {
    const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(key.trim());
    if (match !== null) pods.push({ namespace: match[1] ?? '', name: match[3] ?? '' });
  }
  return pods;
}

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

export interface Requirement {
  key: string;
  operator: string;
  values?: string[] | undefined;
}

/** What every NodeClaim of one NodePool takes from it: carried once per batch, not once per claim. */
export interface ClaimTemplate {
  pool: string;
  poolUid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  nodeClassRef: { group: string; kind: string; name: string };
  taints?: unknown[];
  startupTaints?: unknown[];
  expireAfter?: string;
  terminationGracePeriod?: string;
}

/**
 * One planned NodeClaim, compact: its pool's template and its instance-type options are
 * referenced, not repeated (a 20k-pod batch's plan is a payload in the provisioner's history).
 */
export interface CompactClaim {
  name: string;
  pool: string;
  /** index into the batch's list of distinct instance-type option lists */
  options: number;
  /** the plan's requirements other than the instance type */
  requirements: Requirement[];
  /** the pods' requests, summed */
  requests: Record<string, string>;
  /** USD/h of the offering the plan chose */
  price: number;
  pods: number;
  /** the pods' keys (`namespace/name`), for nominations at registration; absent past the batch's budget */
  podNames?: string[];
}

/** A pool's share of every claim it makes, as Karpenter stamps it: template labels (and the nodepool label), annotations with the template hash, taints, expiry. */
export function claimTemplate(pool: NodePool, poolUid: string): ClaimTemplate {
  const name = pool.metadata.name ?? '';
  const template = pool.spec.template;
  return {
    pool: name,
    poolUid,
    labels: { ...(template.metadata?.labels ?? {}), [LabelKey.nodePool]: name },
    annotations: { ...(template.metadata?.annotations ?? {}), [NODEPOOL_HASH_ANNOTATION]: nodePoolHash(pool), [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION },
    nodeClassRef: { group: template.spec.nodeClassRef.group, kind: template.spec.nodeClassRef.kind, name: template.spec.nodeClassRef.name },
    ...(template.spec.taints?.length ? { taints: template.spec.taints } : {}),
    ...(template.spec.startupTaints?.length ? { startupTaints: template.spec.startupTaints } : {}),
    ...(template.spec.expireAfter !== undefined ? { expireAfter: template.spec.expireAfter } : {}),
    ...(template.spec.terminationGracePeriod ? { terminationGracePeriod: template.spec.terminationGracePeriod } : {}),
  };
}

/** The pods' requests, summed: the claim's `spec.resources.requests`. */
export function summedRequests(pods: readonly string[], podRequests: ReadonlyMap<string, Record<string, string>>): Record<string, string> {
  let requests: ResourceList = {};
  for (const pod of pods) {
    const parsed = parseResourceList(podRequests.get(pod) ?? {});
    if (parsed.ok) requests = addResources(requests, parsed.resources);
  }
  return formatResourceList(requests);
}

/**
 * Distinct instance-type option lists, each stored once: claims of one pool and shape
 * mostly share theirs, so a batch's plan carries a few lists instead of one per claim.
 */
export class OptionLists {
  readonly lists: string[][] = [];
  private readonly index = new Map<string, number>();
  add(options: readonly string[]): number {
    const key = options.join(',');
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.lists.length;
      this.lists.push([...options]);
      this.index.set(key, i);
    }
    return i;
  }
}

/** A planned claim in its compact form; its name is derived from the batch and its pods. */
export function compactClaim(planned: PlannedNodeClaim, options: { batchId: string; optionLists: OptionLists; podRequests: ReadonlyMap<string, Record<string, string>>; withPodNames?: boolean }): CompactClaim {
  return {
    name: nodeClaimName(planned.nodePool, options.batchId, planned.pods),
    pool: planned.nodePool,
    options: options.optionLists.add(planned.instanceTypeOptions),
    requirements: planned.requirements.filter((r) => r.key !== LabelKey.instanceType).map((r) => ({ key: r.key, operator: r.operator, ...(r.values ? { values: [...r.values] } : {}) })),
    requests: summedRequests(planned.pods, options.podRequests),
    price: planned.price,
    pods: planned.pods.length,
    ...(options.withPodNames === true ? { podNames: [...planned.pods] } : {}),
  };
}

/** Whether a claim's pod names still fit the batch's budget; `spent` counts bytes taken so far. */
export function podNamesFit(pods: readonly string[], spent: { bytes: number }, budget: number): boolean {
  const bytes = pods.reduce((n, pod) => n + pod.length + 3, 0);
  if (spent.bytes + bytes > budget) return false;
  spent.bytes += bytes;
  return true;
}

/**
 * The NodeClaim to create, as Karpenter makes it: owned by its NodePool, with the
 * template's labels, annotations, taints and startup taints, its expireAfter and
 * terminationGracePeriod, the plan's requirements narrowed to the ranked instance-type
 * options, the pods' requests, and the batch that made it.
 */
export function claimManifest(claim: CompactClaim, template: ClaimTemplate, instanceTypeOptions: readonly string[], batchId: string, held: readonly HeldOffering[] = [], options: { batchGate?: boolean } = {}): NodeClaimManifest {
  const requirements = [...claim.requirements.filter((r) => r.key !== LabelKey.instanceType), { key: LabelKey.instanceType, operator: 'In', values: [...instanceTypeOptions] }].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  const spec: Record<string, unknown> = {
    nodeClassRef: template.nodeClassRef,
    requirements,
    resources: { requests: claim.requests },
    expireAfter: template.expireAfter,
  };
  if (template.taints) spec.taints = template.taints;
  if (template.startupTaints) spec.startupTaints = template.startupTaints;
  if (template.terminationGracePeriod) spec.terminationGracePeriod = template.terminationGracePeriod;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: claim.name,
      labels: { ...template.labels, [BATCH_LABEL]: batchId },
      annotations: {
        ...template.annotations,
        ...(claim.price > 0 ? { [PLANNED_PRICE_ANNOTATION]: String(Math.round(claim.price * 1e6) / 1e6) } : {}),
        ...heldAnnotation(held, instanceTypeOptions),
        ...(claim.podNames !== undefined && claim.podNames.length > 0 ? { [PLANNED_PODS_ANNOTATION]: claim.podNames.join(',') } : {}),
        ...(options.batchGate === true ? { [BATCH_GATE_ANNOTATION]: 'true' } : {}),
      },
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: template.pool, uid: template.poolUid, blockOwnerDeletion: true }],
    },
    spec,
  };
}

/** One planned claim straight to its manifest (tests, and callers without a batch to compact). */
export function nodeClaimManifest(planned: PlannedNodeClaim, source: ClaimSource, options: { batchId: string; podRequests: ReadonlyMap<string, Record<string, string>> }): NodeClaimManifest {
  const optionLists = new OptionLists();
  const claim = compactClaim(planned, { batchId: options.batchId, optionLists, podRequests: options.podRequests });
  return claimManifest(claim, claimTemplate(source.pool, source.poolUid), optionLists.lists[claim.options] ?? [], options.batchId);
}
