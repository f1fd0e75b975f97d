/**
 * Builds CreateFleet's overrides for one NodeClaim (karpenter.md §2.4), pure: the claim's
 * cheapest compatible instance types (at most 60) × one subnet per allowed zone, for one
 * capacity type — spot when allowed and available, else on-demand.
 */
import { type CapacityType } from './domain';

export interface Offering {
  zone: string;
  capacityType: CapacityType;
  /** USD per hour */
  price: number;
  /** false when the caller's unavailable-offerings memory says so */
  available: boolean;
}

export interface InstanceTypeOption {
  instanceType: string;
  offerings: Offering[];
}

export interface SubnetChoice {
  id: string;
  zone: string;
  availableIpCount: number;
}

export interface FleetOverride {
  instanceType: string;
  zone: string;
  subnetId: string;
  imageId: string;
  /** rank by price; EC2 reads it only with prioritized strategies */
  priority: number;
}

export type FleetPlan =
  | { kind: 'launch'; capacityType: CapacityType; overrides: FleetOverride[] }
  | { kind: 'nothing-available'; reason: string };

export interface FleetPlanInput {
  instanceTypes: readonly InstanceTypeOption[];
  subnets: readonly SubnetChoice[];
  capacityTypes: readonly CapacityType[];
  /** the claim's zone requirement; undefined means every zone with a subnet */
  zones?: readonly string[];
  imageId: string;
  maxInstanceTypes?: number;
}

export const MAX_INSTANCE_TYPES = 60;

/** The subnet with the most free IPs in each zone (Karpenter `ZonalSubnetsForLaunch`); ties by id. */
export function subnetPerZone(subnets: readonly SubnetChoice[], zones?: readonly string[]): Map<string, SubnetChoice> {
  const best = new Map<string, SubnetChoice>();
  for (const subnet of subnets) {
    if (zones !== undefined && !zones.includes(subnet.zone)) continue;
    const current = best.get(subnet.zone);
    if (
      current === undefined ||
      subnet.availableIpCount > current.availableIpCount ||
      (subnet.availableIpCount === current.availableIpCount && subnet.id < current.id)
    ) {
      best.set(subnet.zone, subnet);
    }
  }
  return best;
}

export function planFleet(input: FleetPlanInput): FleetPlan {
  const subnets = subnetPerZone(input.subnets, input.zones);
  const usable = (o: Offering) => o.available && subnets.has(o.zone) && input.capacityTypes.includes(o.capacityType);
  const hasUsable = (ct: CapacityType) => input.instanceTypes.some((it) => it.offerings.some((o) => o.capacityType === ct && usable(o)));
  const capacityType: CapacityType | undefined =
    input.capacityTypes.includes('spot') && hasUsable('spot') ? 'spot' : hasUsable('on-demand') ? 'on-demand' : undefined;
  if (capacityType === undefined) {
    const types = input.instanceTypes.map((it) => it.instanceType).join(', ') || 'none';
    const zones = [...subnets.keys()].sort().join(', ') || 'none (no subnet in an allowed zone)';
    return {
      kind: 'nothing-available',
      reason: `no available ${input.capacityTypes.join('/')} offering of [${types}] in zones [${zones}]`,
    };
  }
  const ranked = input.instanceTypes
    .map((it) => {
      const offerings = it.offerings
        .filter((o) => o.capacityType === capacityType && usable(o))
        .sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone));
      return { instanceType: it.instanceType, offerings, cheapest: offerings[0]?.price ?? Number.POSITIVE_INFINITY };
    })
    .filter((it) => it.offerings.length > 0)
    .sort((a, b) => a.cheapest - b.cheapest || a.instanceType.localeCompare(b.instanceType))
    .slice(0, input.maxInstanceTypes ?? MAX_INSTANCE_TYPES);

  const overrides = ranked
    .flatMap((it) => it.offerings.map((o) => ({ instanceType: it.instanceType, zone: o.zone, price: o.price })))
    .sort((a, b) => a.price - b.price || a.instanceType.localeCompare(b.instanceType) || a.zone.localeCompare(b.zone))
    .map((o, rank): FleetOverride => {
      const subnet = subnets.get(o.zone);
      // usable() kept only zones that have a subnet
      if (subnet === undefined) throw new Error(`no subnet for zone ${o.zone}`);
      return { instanceType: o.instanceType, zone: o.zone, subnetId: subnet.id, imageId: input.imageId, priority: rank };
    });
  return { kind: 'launch', capacityType, overrides };
}
