import { type InstanceType } from '../instancetypes';
import { labelsSatisfy, matches, parseRequirements, type NodeSelectorRequirementInput } from '../scheduling';
import { parseQuantity } from '../scheduling/quantity';

const ZONE = 'topology.kubernetes.io/zone';
const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
/** Karpenter sends at most this many instance types to CreateFleet (reference §2.4). */
export const MAX_LAUNCH_INSTANCE_TYPES = 60;

export interface LaunchOffering {
  zone: string;
  capacityType: 'spot' | 'on-demand';
  price: number;
  available: boolean;
}

export interface LaunchOption {
  instanceType: string;
  offerings: LaunchOffering[];
}

export type LaunchOptionsResult =
  | { ok: true; options: LaunchOption[]; zones: string[]; capacityTypes: ('spot' | 'on-demand')[] }
  | { ok: false; reason: string };

/** How `launchOptionsForClaim`'s `unavailable` names an offering: `type/zone/capacityType`. */
export function unavailableOfferingKey(o: { instanceType: string; zone: string; capacityType: string }): string {
  return `${o.instanceType}/${o.zone}/${o.capacityType}`;
}

/**
 * The instance types a NodeClaim may launch as, cheapest available offering first, capped
 * at 60: type-level labels must satisfy the claim's requirements; zone and capacity type
 * are offering-level, so they filter offerings rather than types. `unavailable` holds the
 * insufficient-capacity memory (`type/zone/capacityType` keys).
 */
export function launchOptionsForClaim(
  requirementInputs: readonly NodeSelectorRequirementInput[],
  instanceTypes: readonly InstanceType[],
  limits: {
    unavailable?: ReadonlySet<string>;
    requests?: Readonly<Record<string, string | number>>;
    /**
     * The claim's own labels (its NodePool's template labels, the nodepool label): the node
     * is given them at registration, so a requirement they satisfy is no question for the
     * instance type (Karpenter's requirements intersect only on keys both sides define).
     */
    stampedLabels?: Readonly<Record<string, string>>;
  } = {},
): LaunchOptionsResult {
  const unavailable = limits.unavailable ?? new Set<string>();
  const stamped = limits.stampedLabels ?? {};
  const parsed = parseRequirements(requirementInputs.filter((r) => {
    const value = stamped[r.key];
    return value === undefined || !(r.operator === 'In' && (r.values ?? []).includes(value));
  }));
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const requests = parseClaimRequests(limits.requests ?? {});
  if (!requests.ok) return requests;
  const { [ZONE]: zoneReq, [CAPACITY_TYPE]: capacityReq, ...typeLevel } = parsed.requirements;
  const options: { option: LaunchOption; cheapest: number }[] = [];
  for (const type of instanceTypes) {
    if (!labelsSatisfy(typeLevel, type.labels).ok) continue;
    if (!fitsRequests(type, requests.requests)) continue;
    const offerings = type.offerings
      .filter((o) => (zoneReq ? matches(zoneReq, o.zone) : true) && (capacityReq ? matches(capacityReq, o.capacityType) : true))
      .map((o) => ({
        zone: o.zone,
        capacityType: o.capacityType,
        price: o.price,
        available: o.available && o.price > 0 && !unavailable.has(unavailableOfferingKey({ instanceType: type.name, zone: o.zone, capacityType: o.capacityType })),
      }));
    const available = offerings.filter((o) => o.available);
    if (available.length === 0) continue;
    options.push({ option: { instanceType: type.name, offerings }, cheapest: Math.min(...available.map((o) => o.price)) });
  }
  if (options.length === 0) {
    const asked = Object.entries(limits.requests ?? {}).map(([k, v]) => `${k}: ${v}`);
    return {
      ok: false,
      reason: `no instance type with an available offering satisfies the NodeClaim's requirements (${requirementInputs.map((r) => `${r.key} ${r.operator} ${(r.values ?? []).join(',')}`).join('; ')})${asked.length > 0 ? ` and has allocatable for spec.resources.requests (${asked.join(', ')})` : ''}`,
    };
  }
  options.sort((a, b) => a.cheapest - b.cheapest || a.option.instanceType.localeCompare(b.option.instanceType));
  const chosen = options.slice(0, MAX_LAUNCH_INSTANCE_TYPES).map((o) => o.option);
  const zones = [...new Set(chosen.flatMap((o) => o.offerings.filter((x) => x.available).map((x) => x.zone)))].sort();
  const capacityTypes = [...new Set(chosen.flatMap((o) => o.offerings.filter((x) => x.available).map((x) => x.capacityType)))].sort();
  return { ok: true, options: chosen, zones, capacityTypes };
}

/**
 * spec.resources.requests as quantities. The API server's schema lets any string through,
 * so a negative or unreadable quantity is reported naming the field rather than ignored.
 */
export function parseClaimRequests(requests: Readonly<Record<string, string | number>>): { ok: true; requests: Map<string, bigint> } | { ok: false; reason: string } {
  const parsed = new Map<string, bigint>();
  for (const [name, value] of Object.entries(requests).sort(([a], [b]) => a.localeCompare(b))) {
    const q = parseQuantity(String(value));
    if (!q.ok) return { ok: false, reason: `spec.resources.requests.${name}: ${JSON.stringify(value)} is not a quantity (${q.reason}); write e.g. "2", "500m" or "4Gi"` };
    if (q.quantity.nanos < 0n) return { ok: false, reason: `spec.resources.requests.${name}: ${JSON.stringify(value)} is negative; a request is zero or more` };
    parsed.set(name, q.quantity.nanos);
  }
  return { ok: true, requests: parsed };
}

/** Karpenter launches only types whose allocatable holds the claim's requests. */
function fitsRequests(type: InstanceType, requests: ReadonlyMap<string, bigint>): boolean {
  for (const [name, wanted] of requests) {
    if (wanted === 0n) continue;
    const have = type.allocatable[name];
    if (have === undefined) return false;
    const q = parseQuantity(String(have));
    if (!q.ok || q.quantity.nanos < wanted) return false;
  }
  return true;
}
