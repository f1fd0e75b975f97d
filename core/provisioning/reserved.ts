import { type StoredNodeClaim } from '../api/nodeclaim';
import { PLANNED_PODS_ANNOTATION, parsePlannedPods } from './nodeclaims';
import { podKey } from './pods';

// A pod an earlier batch planned onto a NodeClaim that is still coming up is not
// provisionable (issue 12, "Which pods"): its capacity is on the way. Planned again, it would
// be packed onto the in-flight claims as the packer sees them — before launch, the smallest
// type the claim allows — and a topology-heavy batch launched a second claim for pods the
// first batch had already covered (test/integration/provisioner-topology.test.ts: 4 of 23
// claims held nothing). So such a pod is held on its claim, as if bound there: it keeps its
// room, nobody else is planned into it, and it is planned anew only once the claim has
// initialized (kube-scheduler had its chance), is being deleted (a failed launch), or is gone.

/** A claim still coming up: not initialized and not being deleted. */
export function claimInFlight(claim: StoredNodeClaim): boolean {
  if (claim.metadata.deletionTimestamp !== undefined) return false;
  return !(claim.status?.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
}

export interface Reservations {
  /** the provisionable pods no in-flight claim was planned for */
  provisionable: unknown[];
  /** the others, each as a copy bound to its claim's node, or to the claim's name before it has one */
  reserved: unknown[];
}

const metadataOf = (pod: unknown): { namespace?: string; name: string } => {
  const metadata = (pod as { metadata?: { namespace?: unknown; name?: unknown } }).metadata;
  return { ...(typeof metadata?.namespace === 'string' ? { namespace: metadata.namespace } : {}), name: typeof metadata?.name === 'string' ? metadata.name : '' };
};

/**
 * Splits provisionable pods into those still to plan and those an in-flight claim holds
 * (PLANNED_PODS_ANNOTATION). A pod listed by two in-flight claims (two batches, the second
 * after the first claim's pods were freed) is held by the newer claim.
 */
export function reserveForInFlightClaims(provisionable: readonly unknown[], claims: readonly StoredNodeClaim[]): Reservations {
  const holder = new Map<string, string>();
  const inFlight = claims.filter(claimInFlight)
    .sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')));
  for (const claim of inFlight) {
    const target = claim.status?.nodeName ?? claim.metadata.name;
    for (const { namespace, name } of parsePlannedPods(claim.metadata.annotations?.[PLANNED_PODS_ANNOTATION])) holder.set(`${namespace}/${name}`, target);
  }
  const result: Reservations = { provisionable: [], reserved: [] };
  for (const pod of provisionable) {
    const target = holder.get(podKey({ metadata: metadataOf(pod) }));
    if (target === undefined) {
      result.provisionable.push(pod);
      continue;
    }
    const spec = (pod as { spec?: object }).spec ?? {};
    result.reserved.push({ ...(pod as object), spec: { ...spec, nodeName: target } });
  }
  return result;
}
