/**
 * Builds CreateFleet's overrides for one NodeClaim (karpenter.md §2.4), pure: the claim's
 * cheapest compatible instance types (at most 60) × one subnet per allowed zone, for one
 * capacity type — spot when allowed and available, else on-demand. Each override names the
 * image of its instance type's architecture; types whose architecture has no image are
 * dropped before anything else, so they neither win a capacity type nor take one of the 60.
 */
import { type Architecture, type CapacityType, type ImagesByArchitecture } from './domain';

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
  architecture: Architecture;
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
  | {
      kind: 'launch';
      capacityType: CapacityType;
      /** cheapest first */
      overrides: FleetOverride[];
      /** instance types left out because `images` has none for their architecture */
      withoutImage: string[];
    }
  | { kind: 'nothing-available'; reason: string }
  /** no instance type has an image of its architecture: the node class's AMIs, not capacity, are the problem */
  | { kind: 'no-image'; architectures: Architecture[]; reason: string };

export interface FleetPlanInput {
  instanceTypes: readonly InstanceTypeOption[];
  subnets: readonly SubnetChoice[];
  capacityTypes: readonly CapacityType[];
  /** the claim's zone requirement; undefined means every zone with a subnet */
  zones?: readonly string[];
  /** the image for each architecture the node class has one for */
  images: ImagesByArchitecture;
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
  const imageOf = (it: InstanceTypeOption): string | undefined => input.images[it.architecture];
  const instanceTypes = input.instanceTypes.filter((it) => imageOf(it) !== undefined);
  const withoutImage = input.instanceTypes.filter((it) => imageOf(it) === undefined).map((it) => it.instanceType);
  if (instanceTypes.length === 0 && input.instanceTypes.length > 0) {
    const architectures = [...new Set(input.instanceTypes.map((it) => it.architecture))].sort();
    return {
      kind: 'no-image',
      architectures,
      reason: `no image for ${architectures.join(' or ')}, the architecture of every instance type offered ([${withoutImage.join(', ')}])`,
    };
  }
  const subnets = subnetPerZone(input.subnets, input.zones);
  const usable = (o: Offering) => o.available && subnets.has(o.zone) && input.capacityTypes.includes(o.capacityType);
  const hasUsable = (ct: CapacityType) => instanceTypes.some((it) => it.offerings.some((o) => o.capacityType === ct && usable(o)));
  const capacityType: CapacityType | undefined =
    input.capacityTypes.includes('spot') && hasUsable('spot') ? 'spot' : hasUsable('on-demand') ? 'on-demand' : undefined;
  if (capacityType === undefined) {
    const types = instanceTypes.map((it) => it.instanceType).join(', ') || 'none';
    const zones = [...subnets.keys()].sort().join(', ') || 'none (no subnet in an allowed zone)';
    return {
      kind: 'nothing-available',
      reason: `no available ${input.capacityTypes.join('/')} offering of [${types}] in zones [${zones}]`,
    };
  }
  const ranked = instanceTypes
    .map((it) => {
      const offerings = it.offerings
        .filter((o) => o.capacityType === capacityType && usable(o))
        .sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone));
      return { option: it, offerings, cheapest: offerings[0]?.price ?? Number.POSITIVE_INFINITY };
    })
    .filter((it) => it.offerings.length > 0)
    .sort((a, b) => a.cheapest - b.cheapest || a.option.instanceType.localeCompare(b.option.instanceType))
    .slice(0, input.maxInstanceTypes ?? MAX_INSTANCE_TYPES);

  const overrides = ranked
    .flatMap((it) => it.offerings.map((o) => ({ option: it.option, zone: o.zone, price: o.price })))
    .sort((a, b) => a.price - b.price || a.option.instanceType.localeCompare(b.option.instanceType) || a.zone.localeCompare(b.zone))
    .map((o, rank): FleetOverride => {
      const subnet = subnets.get(o.zone);
      const imageId = imageOf(o.option);
      // usable() kept only zones that have a subnet; instanceTypes only types with an image
      if (subnet === undefined) throw new Error(`no subnet for zone ${o.zone}`);
      if (imageId === undefined) throw new Error(`no image for ${o.option.instanceType}`);
      return { instanceType: o.option.instanceType, zone: o.zone, subnetId: subnet.id, imageId, priority: rank };
    });
  return { kind: 'launch', capacityType, overrides, withoutImage };
}

export interface ImageOverrides {
  imageId: string;
  overrides: FleetOverride[];
}

/**
 * The overrides by image — one launch template, so one LaunchTemplateConfig, each — in the
 * order of each image's cheapest override, overrides keeping their order within. EC2 applies
 * the allocation strategy across all configs, so the order matters only where the strategy
 * is not applied: moto launches the first override of the first config.
 */
export function overridesByImage(overrides: readonly FleetOverride[]): ImageOverrides[] {
  const groups = new Map<string, FleetOverride[]>();
  for (const override of [...overrides].sort((a, b) => a.priority - b.priority)) {
    const group = groups.get(override.imageId);
    if (group) group.push(override);
    else groups.set(override.imageId, [override]);
  }
  return [...groups.entries()].map(([imageId, group]) => ({ imageId, overrides: group }));
}
