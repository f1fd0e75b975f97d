// Why a pod cannot use a pool, worded as the closest miss: the instance type that comes
// nearest, and exactly what it lacks. Wording costs a pass over the pool's types, so it is
// done lazily: most classes that miss one pool land in another, and their reasons are
// never read. Only pods that end up unschedulable pay for theirs (once per class and pool).
import { LabelKey } from '../scheduling/labels';
import { describeRequirement, matches, type Requirement } from '../scheduling/requirement';
import { type Requirements } from '../scheduling/requirements';
import type { Dims, Vec } from './dims';
import { offeringAllowed, type Offering, type Pool, type PoolType } from './pools';

/** A reason, worded when first read and then kept. */
export type Explanation = () => string;

export function lazily(word: () => string): Explanation {
  let text: string | undefined;
  return () => (text ??= word());
}

/** A reason already worded (cheap, or depending on state that moves on). */
export const said = (text: string): Explanation => () => text;

/** Kubernetes truncates an Event's message at 1024 characters; a reason leaves room for the Event's own prefix. */
export const MAX_REASON_LENGTH = 960;
/** No pool's part is cut shorter than this while later pools are listed: fewer pools, each readable. */
const MIN_POOL_PART = 200;

/**
 * `header` and each pool's reason, within {@link MAX_REASON_LENGTH}. Short parts are kept
 * whole and the long ones share the rest evenly (cut with "…"), so a one-line "taint not
 * tolerated" never costs a closest miss its tail. When even that would cut a part below
 * {@link MIN_POOL_PART}, the last pools are left out and counted ("and 3 more NodePools").
 * Pools come in the order they were tried.
 */
export function perPool(header: string, parts: readonly string[], max = MAX_REASON_LENGTH): string {
  for (let shown = parts.length; shown >= 1; shown--) {
    const left = parts.length - shown;
    const tail = left === 0 ? '' : `; and ${left} more NodePool${left === 1 ? '' : 's'}`;
    const listed = parts.slice(0, shown);
    const room = max - header.length - tail.length - 2 * (shown - 1);
    const level = fairLevel(listed.map((p) => p.length), room);
    if (level < MIN_POOL_PART && listed.some((p) => p.length > level) && shown > 1) continue;
    return clip(`${header}${listed.map((p) => clip(p, Math.max(1, level))).join('; ')}${tail}`, max);
  }
  return clip(header, max);
}

/** The largest cut-off L with Σ min(length, L) ≤ room (Infinity when everything fits). */
function fairLevel(lengths: readonly number[], room: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let remaining = room;
  for (let i = 0; i < sorted.length; i++) {
    const even = Math.floor(remaining / (sorted.length - i));
    const length = sorted[i] ?? 0;
    if (length > even) return even;
    remaining -= length;
  }
  return Infinity;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** At most this many values in an "offered in" list. */
const MAX_LISTED = 6;

function listed(values: readonly string[]): string {
  const unique = [...new Set(values)].sort();
  return unique.length <= MAX_LISTED ? unique.join(', ') : `${unique.slice(0, MAX_LISTED).join(', ')} and ${unique.length - MAX_LISTED} more`;
}

interface RequirementMiss {
  readonly requirement: string;
  readonly has: string;
}

/**
 * What one type of the pool lacks for these requirements: each label requirement it fails
 * (keys the type decides), and the zone / capacity type when none of its offerings is
 * allowed. `zone` and `capacityType` are the pool's and the pod's together; `shown` are the
 * pod's, which is what the reader wrote.
 */
function missesOf(
  type: PoolType,
  requirements: Requirements,
  typeKeys: ReadonlySet<string>,
  offerings: { zone: Requirement | undefined; capacityType: Requirement | undefined; shownZone: Requirement | undefined; shownCapacityType: Requirement | undefined },
): RequirementMiss[] {
  const misses: RequirementMiss[] = [];
  for (const key of Object.keys(requirements).sort()) {
    const requirement = requirements[key];
    if (requirement === undefined || !typeKeys.has(key) || matches(requirement, type.labels[key])) continue;
    const value = type.labels[key];
    misses.push({ requirement: describeRequirement(requirement), has: value === undefined ? `it has no ${key} label` : `it has ${key}=${value}` });
  }
  const { zone, capacityType } = offerings;
  if (type.offerings.some((o) => offeringAllowed(o, zone, capacityType))) return misses;
  const zoneShown = offerings.shownZone ?? zone;
  const capacityShown = offerings.shownCapacityType ?? capacityType;
  const zoneOk = zone === undefined || type.offerings.some((o) => matches(zone, o.zone));
  const capacityOk = capacityType === undefined || type.offerings.some((o) => matches(capacityType, o.capacityType));
  if (!zoneOk && zoneShown !== undefined) misses.push({ requirement: describeRequirement(zoneShown), has: `offered in ${listed(type.offerings.map((o) => o.zone))}` });
  if (!capacityOk && capacityShown !== undefined) misses.push({ requirement: describeRequirement(capacityShown), has: `offered as ${listed(type.offerings.map((o) => o.capacityType))}` });
  if (zoneOk && capacityOk && zoneShown !== undefined && capacityShown !== undefined) {
    // each is offered, never together
    misses.push({ requirement: `${describeRequirement(zoneShown)} with ${describeRequirement(capacityShown)}`, has: `offered as ${listed(type.offerings.map(offeringName))}` });
  }
  return misses;
}

const offeringName = (o: Offering): string => `${o.capacityType} in ${o.zone}`;

/**
 * The closest miss among a pool's types when none matches the pod's requirements: the type
 * failing the fewest requirements (then the cheapest, then by name), and what it fails —
 * "c5.large matches every requirement but topology.kubernetes.io/zone In [us-east-1z]
 * (offered in us-east-1a, us-east-1b)".
 */
export function closestTypeMiss(
  pool: Pool,
  pod: { readonly requirements: Requirements; readonly zone: Requirement | undefined; readonly capacityType: Requirement | undefined },
  combined: Requirements,
): string {
  if (pool.types.length === 0) {
    return pool.noTypeBecause === undefined
      ? "the NodePool's own requirements leave no instance type with an available offering"
      : `the NodePool's own requirements leave no instance type: ${pool.noTypeBecause}`;
  }
  const offerings = {
    zone: combined[LabelKey.zone],
    capacityType: combined[LabelKey.capacityType],
    shownZone: pod.zone,
    shownCapacityType: pod.capacityType,
  };
  let best: { type: PoolType; misses: RequirementMiss[] } | undefined;
  // cheapest first, then by name: the first type with the fewest misses is the one named
  for (const type of pool.typesByPrice) {
    const misses = missesOf(type, pod.requirements, pool.typeKeys, offerings);
    if (best === undefined || misses.length < best.misses.length) best = { type, misses };
    if (best.misses.length <= 1) break;
  }
  if (best === undefined) return 'no instance type';
  const { type, misses } = best;
  const first = misses[0];
  if (first === undefined) return `${type.name} matches every requirement`;
  if (misses.length === 1) return `${type.name} matches every requirement but ${first.requirement} (${first.has})`;
  return `${type.name} misses ${misses.length} requirements: ${misses.map((m) => `${m.requirement} (${m.has})`).join('; ')}`;
}

/** The closest miss on resources: the compatible type with the most room in the dimension that failed. */
export function resourceMiss(
  podClass: { readonly requests: Vec; readonly requirements: Requirements; readonly hostPorts: readonly string[] },
  pool: Pool,
  compatMask: Uint8Array,
  dims: Dims,
): string {
  const compatibleTypes = pool.types.filter((t) => compatMask[t.index] === 1);
  const constraint = Object.values(podClass.requirements).filter((r) => r.key !== LabelKey.nodePool).map(describeRequirement);
  const context = constraint.length === 0 ? '' : ` with ${constraint.join(', ')}`;
  const failing = dims.names.map((_, i) => i).filter((i) => compatibleTypes.every((t) => (t.daemonOverhead[i] ?? 0) + (podClass.requests[i] ?? 0) > (t.allocatable[i] ?? 0)));
  const dimension = failing[0];
  const requested = dims.describe(podClass.requests);
  if (dimension === undefined) {
    const ports = podClass.hostPorts.join(', ');
    return `NodePool ${pool.name}: requests ${requested}${context}, but no single compatible type fits every resource at once${ports === '' ? '' : ` and host ports ${ports} free of DaemonSets`}`;
  }
  const name = dims.names[dimension] ?? '';
  let best = compatibleTypes[0];
  for (const type of compatibleTypes) {
    const room = (type.allocatable[dimension] ?? 0) - (type.daemonOverhead[dimension] ?? 0);
    const bestRoom = best === undefined ? -Infinity : (best.allocatable[dimension] ?? 0) - (best.daemonOverhead[dimension] ?? 0);
    if (room > bestRoom) best = type;
  }
  if (best === undefined) return `NodePool ${pool.name}: no compatible instance type`;
  const room = dims.zero();
  room[dimension] = Math.max(0, (best.allocatable[dimension] ?? 0) - (best.daemonOverhead[dimension] ?? 0));
  const wanted = dims.zero();
  wanted[dimension] = podClass.requests[dimension] ?? 0;
  const show = (v: Vec): string => dims.format(v)[name] ?? '0';
  return `NodePool ${pool.name}: requires ${show(wanted)} ${name}${context}; the largest compatible type (${best.name}) allows ${show(room)} after DaemonSet overhead`;
}
