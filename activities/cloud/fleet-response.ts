/**
 * Reads CreateFleet's answer, pure. With `type: instant` EC2 reports per-override failures
 * in `Errors` instead of failing the call; capacity and quota codes become exhausted
 * offerings the caller remembers (3 minutes, karpenter.md §2.4) before re-planning.
 */
import { CapacityTypeSchema, type CapacityType } from './domain';
import { type CreateFleetOutput } from './ec2-schemas';
import { type ExhaustedOffering } from './errors';
import { CAPACITY_ERROR_CODES } from './classify';

export interface FleetErrorSummary {
  exhausted: ExhaustedOffering[];
  /** non-capacity errors, as `code: message` */
  other: { code: string; message: string }[];
}

export function summarizeFleetErrors(
  output: CreateFleetOutput,
  context: { requestedCapacityType: CapacityType; zoneOfSubnet: ReadonlyMap<string, string> },
): FleetErrorSummary {
  const exhausted = new Map<string, ExhaustedOffering>();
  const other: FleetErrorSummary['other'] = [];
  for (const error of output.Errors ?? []) {
    const code = error.ErrorCode ?? 'Unknown';
    const overrides = error.LaunchTemplateAndOverrides?.Overrides;
    const zone = overrides?.AvailabilityZone ?? (overrides?.SubnetId ? context.zoneOfSubnet.get(overrides.SubnetId) : undefined);
    const lifecycle = CapacityTypeSchema.safeParse(error.Lifecycle);
    const capacityType = lifecycle.success ? lifecycle.data : context.requestedCapacityType;
    if (CAPACITY_ERROR_CODES.has(code) && overrides?.InstanceType !== undefined && zone !== undefined) {
      const offering = { instanceType: overrides.InstanceType, zone, capacityType, reason: code };
      exhausted.set(`${capacityType}:${offering.instanceType}:${zone}`, offering);
    } else {
      other.push({ code, message: error.ErrorMessage ?? '' });
    }
  }
  const sorted = [...exhausted.values()].sort(
    (a, b) => a.instanceType.localeCompare(b.instanceType) || a.zone.localeCompare(b.zone) || a.capacityType.localeCompare(b.capacityType),
  );
  return { exhausted: sorted, other };
}

/**
 * The exhausted offerings other than the one that launched. EC2 reports a pool per override
 * (type and subnet), so it can name one subnet of a zone full and still launch the same
 * type, zone and capacity type through another subnet: that offering is evidently available.
 */
export function exhaustedBesidesLaunched(
  exhausted: readonly ExhaustedOffering[],
  launched: { instanceType: string; zone: string; capacityType: CapacityType },
): ExhaustedOffering[] {
  return exhausted.filter((o) => !(o.instanceType === launched.instanceType && o.zone === launched.zone && o.capacityType === launched.capacityType));
}

export interface LaunchedId {
  instanceId: string;
  capacityType: CapacityType;
}

export function launchedInstanceIds(output: CreateFleetOutput, requested: CapacityType): LaunchedId[] {
  return (output.Instances ?? []).flatMap((group) => {
    const lifecycle = CapacityTypeSchema.safeParse(group.Lifecycle);
    const capacityType = lifecycle.success ? lifecycle.data : requested;
    return (group.InstanceIds ?? []).map((instanceId) => ({ instanceId, capacityType }));
  });
}
