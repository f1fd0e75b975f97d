import { type InstanceType } from '../instancetypes';
import { labelsSatisfy, matches, parseRequirements, type NodeSelectorRequirementInput } from '../scheduling';

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

/**
 * The instance types a NodeClaim may launch as, cheapest available offering first, capped
 * at 60: type-level labels must satisfy the claim's requirements; zone and capacity type
 * are offering-level, so they filter offerings rather than types. `unavailable` holds the
 * insufficient-capacity memory (`type/zone/capacityType` keys).
 */
export function launchOptionsForClaim(
  requirementInputs: readonly NodeSelectorRequirementInput[],
  instanceTypes: readonly InstanceType[],
  unavailable: ReadonlySet<string> = new Set(),
): LaunchOptionsResult {
  const parsed = parseRequirements(requirementInputs);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const { [ZONE]: zoneReq, [CAPACITY_TYPE]: capacityReq, ...typeLevel } = parsed.requirements;
  const options: { option: LaunchOption; cheapest: number }[] = [];
  for (const type of instanceTypes) {
    if (!labelsSatisfy(typeLevel, type.labels).ok) continue;
    const offerings = type.offerings
      .filter((o) => (zoneReq ? matches(zoneReq, o.zone) : true) && (capacityReq ? matches(capacityReq, o.capacityType) : true))
      .map((o) => ({
        zone: o.zone,
        capacityType: o.capacityType,
        price: o.price,
        available: o.available && o.price > 0 && !unavailable.has(`${type.name}/${o.zone}/${o.capacityType}`),
      }));
    const available = offerings.filter((o) => o.available);
    if (available.length === 0) continue;
    options.push({ option: { instanceType: type.name, offerings }, cheapest: Math.min(...available.map((o) => o.price)) });
  }
  if (options.length === 0) {
    return { ok: false, reason: `no instance type with an available offering satisfies the NodeClaim's requirements (${requirementInputs.map((r) => `${r.key} ${r.operator} ${(r.values ?? []).join(',')}`).join('; ')})` };
  }
  options.sort((a, b) => a.cheapest - b.cheapest || a.option.instanceType.localeCompare(b.option.instanceType));
  const chosen = options.slice(0, MAX_LAUNCH_INSTANCE_TYPES).map((o) => o.option);
  const zones = [...new Set(chosen.flatMap((o) => o.offerings.filter((x) => x.available).map((x) => x.zone)))].sort();
  const capacityTypes = [...new Set(chosen.flatMap((o) => o.offerings.filter((x) => x.available).map((x) => x.capacityType)))].sort();
  return { ok: true, options: chosen, zones, capacityTypes };
}
