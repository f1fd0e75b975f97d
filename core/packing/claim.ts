// A new NodeClaim being planned. While it is filled it has a target instance type (the
// one the fill was sized for); when filling is over, `finalizeClaim` keeps every type of
// the pool that holds the same pods, cheapest first, and the cheapest is the choice.
import { LabelKey } from '../scheduling/labels';
import { inValues, isUnsatisfiable, matches, toNodeSelectorRequirements, type NodeSelectorRequirementOutput } from '../scheduling/requirement';
import { intersectRequirements, requirementKeys, type Requirements } from '../scheduling/requirements';
import { maskFor, type PodClass } from './classes';
import { topologyOf, universeOf, type SolveContext } from './context';
import { addInto, fitsWith, subtract, type Vec } from './dims';
import { offeringAllowed, withinLimits, type Offering, type Pool, type PoolType } from './pools';

export interface Claim {
  readonly id: number;
  readonly pool: Pool;
  /** Synthetic hostname domain, unique in this solve. */
  readonly hostname: string;
  /** Mutable only through retargetMutating (a relaxed pod may grow a planned claim). */
  target: PoolType;
  requirements: Requirements;
  zone: string | undefined;
  capacityType: string | undefined;
  /** Pods plus the target type's DaemonSet overhead. */
  readonly used: Vec;
  /** Pods only (DaemonSet overhead differs per type). */
  readonly podRequests: Vec;
  readonly ports: Set<string>;
  /** Host ports of the pods alone (DaemonSet ports depend on the type). */
  readonly podPorts: Set<string>;
  readonly pods: string[];
  readonly classes: Set<PodClass>;
  /** Capacity counted against the pool's limits for this claim. */
  reservation: Vec;
}

export type ClaimProposal =
  | { readonly ok: true; readonly requirements: Requirements; readonly zone: string | undefined; readonly capacityType: string | undefined }
  | { readonly ok: false; readonly reason: string };

export function openClaimMutating(id: number, pool: Pool, target: PoolType, context: SolveContext): Claim {
  const used = context.dims.zero();
  used.set(target.daemonOverhead);
  pool.headroom.set(subtract(pool.headroom, target.capacity));
  pool.nodesHeadroom -= 1;
  return {
    id, pool, hostname: `${pool.name}#${id}`, target, requirements: pool.requirements, zone: undefined, capacityType: undefined,
    used, podRequests: context.dims.zero(), ports: new Set(target.daemonPorts), podPorts: new Set(), pods: [], classes: new Set(), reservation: target.capacity,
  };
}

/** A claim not yet opened, for checking a seed pod against a candidate type. */
export function probeClaim(pool: Pool, target: PoolType, context: SolveContext): Claim {
  const used = context.dims.zero();
  used.set(target.daemonOverhead);
  return {
    id: -1, pool, hostname: `${pool.name}#probe`, target, requirements: pool.requirements, zone: undefined, capacityType: undefined,
    used, podRequests: context.dims.zero(), ports: new Set(target.daemonPorts), podPorts: new Set(), pods: [], classes: new Set(), reservation: target.capacity,
  };
}

function uniqueValues(offerings: readonly Offering[], pick: (o: Offering) => string): string[] {
  const seen: string[] = [];
  for (const offering of offerings) if (!seen.includes(pick(offering))) seen.push(pick(offering));
  return seen;
}

/** Whether one pod of this class can join the claim; nothing is mutated. */
export function canAddToClaim(claim: Claim, podClass: PodClass, context: SolveContext): ClaimProposal {
  const { pool, target } = claim;
  const feasibility = podClass.feasibility[pool.order];
  // (no need to word the class's miss here: callers only ask whether the pod fits)
  if (feasibility === undefined || !feasibility.ok) return { ok: false, reason: `the pod cannot use NodePool ${pool.name}` };
  if (feasibility.mask[target.index] !== 1) return { ok: false, reason: `${target.name} cannot hold the pod` };
  if (!fitsWith(claim.used, podClass.requests, target.allocatable)) return { ok: false, reason: `${target.name} is full` };
  if (podClass.hostPorts.some((port) => claim.ports.has(port))) return { ok: false, reason: 'host port in use' };

  let requirements = claim.requirements;
  if (requirementKeys(podClass.requirements).length > 0) {
    requirements = intersectRequirements(claim.requirements, podClass.requirements);
    const conflict = Object.values(requirements).find((r) => isUnsatisfiable(r));
    if (conflict !== undefined) return { ok: false, reason: `conflicting requirement on ${conflict.key}` };
  }
  const zoneRequirement = requirements[LabelKey.zone];
  const capacityTypeRequirement = requirements[LabelKey.capacityType];
  const offerings = target.offerings.filter((o) => offeringAllowed(o, zoneRequirement, capacityTypeRequirement));
  if (offerings.length === 0) return { ok: false, reason: `${target.name} has no available offering for the combined requirements` };

  const topology = topologyOf(context, podClass);
  if (topology.keys.length === 0) return { ok: true, requirements, zone: claim.zone, capacityType: claim.capacityType };
  const needsZone = topology.keys.includes(LabelKey.zone) && claim.zone === undefined;
  const needsCapacityType = topology.keys.includes(LabelKey.capacityType) && claim.capacityType === undefined;
  // Candidate domains in price order: the first that satisfies every rule is the cheapest.
  const zones = needsZone ? uniqueValues(offerings, (o) => o.zone) : [claim.zone];
  const capacityTypes = needsCapacityType ? uniqueValues(offerings, (o) => o.capacityType) : [claim.capacityType];
  let reason = 'no domain';
  for (const zone of zones) {
    for (const capacityType of capacityTypes) {
      if (!offerings.some((o) => (zone === undefined || o.zone === zone) && (capacityType === undefined || o.capacityType === capacityType))) continue;
      const domainOf = (key: string): string | undefined =>
        key === LabelKey.hostname ? claim.hostname
          : key === LabelKey.zone ? zone
            : key === LabelKey.capacityType ? capacityType
              : target.labels[key] ?? pool.templateLabels[key];
      const violation = context.topology.violation(topology, domainOf, (key) => universeOf(context, podClass, key));
      if (violation === undefined) return { ok: true, requirements, zone, capacityType };
      reason = violation;
    }
  }
  return { ok: false, reason };
}

export function addToClaimMutating(claim: Claim, podClass: PodClass, proposal: Extract<ClaimProposal, { ok: true }>, podName: string, context: SolveContext): void {
  let requirements = proposal.requirements;
  if (proposal.zone !== undefined && claim.zone === undefined) requirements = intersectRequirements(requirements, { [LabelKey.zone]: inValues(LabelKey.zone, [proposal.zone]) });
  if (proposal.capacityType !== undefined && claim.capacityType === undefined) {
    requirements = intersectRequirements(requirements, { [LabelKey.capacityType]: inValues(LabelKey.capacityType, [proposal.capacityType]) });
  }
  claim.requirements = requirements;
  claim.zone = proposal.zone;
  claim.capacityType = proposal.capacityType;
  addInto(claim.used, podClass.requests);
  addInto(claim.podRequests, podClass.requests);
  for (const port of podClass.hostPorts) {
    claim.ports.add(port);
    claim.podPorts.add(port);
  }
  claim.pods.push(podName);
  claim.classes.add(podClass);
  const topology = topologyOf(context, podClass);
  const domainOf = (key: string): string | undefined =>
    key === LabelKey.hostname ? claim.hostname
      : key === LabelKey.zone ? claim.zone
        : key === LabelKey.capacityType ? claim.capacityType
          : claim.target.labels[key] ?? claim.pool.templateLabels[key];
  context.topology.recordMutating(topology, domainOf, (key) => universeOf(context, podClass, key));
}

export interface FinalClaim {
  readonly claim: Claim;
  readonly options: readonly { readonly type: PoolType; readonly offering: Offering }[];
  readonly requirements: NodeSelectorRequirementOutput[];
}

/**
 * Every type of the pool that can hold exactly these pods (same requirements, resources
 * after its own DaemonSets, host ports, an allowed available offering, within limits),
 * ranked by its cheapest allowed offering then name; truncated to `maxTypes` but kept
 * long enough to satisfy minValues. The pool's limit reservation shrinks to the largest
 * capacity among the options (Karpenter subtracts the max across options, too).
 */
export function finalizeClaimMutating(claim: Claim, maxTypes: number): FinalClaim {
  const { pool } = claim;
  const zone = claim.requirements[LabelKey.zone];
  const capacityType = claim.requirements[LabelKey.capacityType];
  // Headroom as if this claim's reservation were returned.
  const released = pool.headroom.map((value, i) => value + (claim.reservation[i] ?? 0));
  const ranked: { type: PoolType; offering: Offering }[] = [];
  const masks = [...claim.classes].map((c) => maskFor(c, pool));
  const typeRequirements = Object.values(claim.requirements).filter((r) => pool.typeKeys.has(r.key));
  // Types come cheapest-first by their cheapest offering, a lower bound on the allowed
  // one: once `maxTypes` are kept and all cost less than the next type's lower bound, no
  // later type can make the cut. minValues may need types past the cut: scan them all then.
  const exhaustive = Object.values(claim.requirements).some((r) => r.minValues !== undefined);
  let dearest = -Infinity;
  for (const type of pool.typesByPrice) {
    if (!exhaustive && ranked.length >= maxTypes && dearest < (type.offerings[0]?.price ?? Infinity)) break;
    if (masks.some((mask) => mask?.[type.index] !== 1)) continue;
    if (!fitsWith(type.daemonOverhead, claim.podRequests, type.allocatable)) continue;
    if (type.daemonPorts.some((port) => claim.ports.has(port) && !claim.target.daemonPorts.includes(port))) continue;
    if (!typeRequirements.every((r) => matches(r, type.labels[r.key]))) continue;
    if (pool.limited.some((i) => (type.capacity[i] ?? 0) > (released[i] ?? 0))) continue;
    const offering = type.offerings.find((o) => offeringAllowed(o, zone, capacityType));
    if (offering === undefined) continue;
    ranked.push({ type, offering });
    dearest = Math.max(dearest, offering.price);
  }
  ranked.sort((a, b) => a.offering.price - b.offering.price || (a.type.name < b.type.name ? -1 : a.type.name > b.type.name ? 1 : 0));
  const options = truncateRespectingMinValues(ranked, claim.requirements, maxTypes);
  chargeMutating(claim, reservationOf(claim, options));
  const names = options.map((o) => o.type.name);
  const requirements = intersectRequirements(claim.requirements, { [LabelKey.instanceType]: inValues(LabelKey.instanceType, names) });
  return {
    claim, options,
    requirements: requirementKeys(requirements).flatMap((key) => {
      const requirement = requirements[key];
      return requirement === undefined ? [] : toNodeSelectorRequirements(requirement);
    }),
  };
}

/**
 * finalizeClaimMutating for every claim, once per set of alike claims: claims of one pool
 * and target type, with the same classes, the same pod requests in total and the same
 * zone and capacity type have the same requirements, ports and masks, so the same options
 * — unless the pool has limits, where each claim's options depend on the headroom left
 * when it is finalized. (aws-realistic 20k: 5,600 claims in a few hundred kinds; the
 * per-claim scan was a sixth of the solve.) The pool's headroom is still charged per claim.
 */
export function finalizeClaimsMutating(claims: readonly Claim[], maxTypes: number): FinalClaim[] {
  const alike = new Map<string, FinalClaim>();
  return claims.map((claim) => {
    if (claim.pool.limited.length > 0) return finalizeClaimMutating(claim, maxTypes);
    const key = alikeKey(claim);
    const known = alike.get(key);
    if (known === undefined) {
      const final = finalizeClaimMutating(claim, maxTypes);
      alike.set(key, final);
      return final;
    }
    // (a claim's reservation is never written in place, so alike claims may share one)
    chargeMutating(claim, known.claim.reservation);
    return { claim, options: known.options, requirements: known.requirements };
  });
}

function alikeKey(claim: Claim): string {
  const classes = [...claim.classes].map((c) => c.id).sort((a, b) => a - b);
  return `${claim.pool.order}|${claim.target.index}|${claim.zone ?? ''}|${claim.capacityType ?? ''}|${classes.join(',')}|${claim.podRequests.join(',')}`;
}

/** The claim's reservation for these options, the largest capacity among them (as Karpenter subtracts). */
function reservationOf(claim: Claim, options: FinalClaim['options']): Vec {
  const reservation = new Float64Array(claim.target.capacity.length);
  for (const option of options) {
    const capacity = option.type.capacity;
    for (let i = 0; i < reservation.length; i++) reservation[i] = Math.max(reservation[i] ?? 0, capacity[i] ?? 0);
  }
  return reservation;
}

/** The claim's old reservation back to its pool's headroom, the new one taken from it. */
function chargeMutating(claim: Claim, reservation: Vec): void {
  const { headroom } = claim.pool;
  for (let i = 0; i < headroom.length; i++) headroom[i] = (headroom[i] ?? 0) + (claim.reservation[i] ?? 0) - (reservation[i] ?? 0);
  claim.reservation = reservation;
}

function truncateRespectingMinValues<T extends { type: PoolType }>(ranked: readonly T[], requirements: Requirements, maxTypes: number): T[] {
  const kept = ranked.slice(0, maxTypes);
  for (const requirement of Object.values(requirements)) {
    const minValues = requirement.minValues;
    if (minValues === undefined) continue;
    const values = new Set(kept.map((o) => o.type.labels[requirement.key]));
    for (const option of ranked.slice(maxTypes)) {
      if (values.size >= minValues) break;
      const value = option.type.labels[requirement.key];
      if (!values.has(value)) {
        values.add(value);
        kept.push(option);
      }
    }
  }
  return kept;
}

/**
 * Grows a planned claim to the cheapest type of its pool that also holds one more pod of
 * this class (Karpenter's claims keep every type that still fits; ours keep the target
 * until a relaxed pod needs more). Returns false, changing nothing, if no type can.
 */
export function retargetMutating(claim: Claim, podClass: PodClass, context: SolveContext): boolean {
  const { pool } = claim;
  const classes = [...claim.classes, podClass];
  const needed = context.dims.zero();
  needed.set(claim.podRequests);
  addInto(needed, podClass.requests);
  let best: { type: PoolType; price: number } | undefined;
  // Cheapest first by each type's cheapest offering, a lower bound on its allowed one: past
  // the best allowed price found, no type can win (ties by name are still compared).
  for (const type of pool.typesByPrice) {
    if (best !== undefined && (type.offerings[0]?.price ?? Infinity) > best.price) break;
    if (classes.some((c) => maskFor(c, pool)?.[type.index] !== 1)) continue;
    if (!fitsWith(type.daemonOverhead, needed, type.allocatable)) continue;
    if (type.daemonPorts.some((port) => claim.podPorts.has(port) || podClass.hostPorts.includes(port))) continue;
    if (pool.limited.some((i) => (type.capacity[i] ?? 0) > (pool.headroom[i] ?? 0) + (claim.reservation[i] ?? 0))) continue;
    const offering = type.offerings.find((o) => offeringAllowed(o, claim.requirements[LabelKey.zone], claim.requirements[LabelKey.capacityType]));
    if (offering === undefined) continue;
    if (best === undefined || offering.price < best.price || (offering.price === best.price && type.name < best.type.name)) best = { type, price: offering.price };
  }
  if (best === undefined || best.type === claim.target) return false;
  const type = best.type;
  pool.headroom.set(pool.headroom.map((value, i) => value + (claim.reservation[i] ?? 0) - (type.capacity[i] ?? 0)));
  claim.reservation = type.capacity;
  claim.target = type;
  claim.used.set(type.daemonOverhead);
  addInto(claim.used, claim.podRequests);
  claim.ports.clear();
  for (const port of [...type.daemonPorts, ...claim.podPorts]) claim.ports.add(port);
  return true;
}

/** Undoes retargetMutating. */
export function restoreTargetMutating(claim: Claim, target: PoolType, reservation: Vec): void {
  const { pool } = claim;
  pool.headroom.set(pool.headroom.map((value, i) => value + (claim.reservation[i] ?? 0) - (reservation[i] ?? 0)));
  claim.reservation = reservation;
  claim.target = target;
  claim.used.set(target.daemonOverhead);
  addInto(claim.used, claim.podRequests);
  claim.ports.clear();
  for (const port of [...target.daemonPorts, ...claim.podPorts]) claim.ports.add(port);
}

/** Whether the pool can still open a claim of this type. */
export function canOpen(pool: Pool, type: PoolType): boolean {
  return withinLimits(pool, type.capacity);
}
