// EC2 data → the instance types autonode schedules onto:
//   {name, labels, capacity, allocatable, offerings[{zone, capacityType, price, available}]}
// Plain JSON (quantities as Kubernetes strings) so the same value can be printed by
// `autonode catalog`, stored in workflow state and handed to the packing core.
import { LabelKey, awsInstanceTypeLabelKeys } from '../scheduling/labels';
import { formatResourceList, type ResourceListStrings } from '../scheduling/resources';
import { doesNotExist, inValues } from '../scheduling/requirement';
import { requirementsFromLabels, type Requirements } from '../scheduling/requirements';
import type { InstanceTypeInfo, InstanceTypeOffering, SpotPrice } from './ec2-schemas';
import { defaultRootVolumeSize, nodeModelFor, type AmiFamily, type KubeletProfile, type KubeletSettings } from './kubelet';
import { instanceTypeLabels, kubeArchitecture } from './labels';
import { nodeResources } from './node-resources';
import { chooseSpotPrice } from './pricing';

export type CapacityType = 'on-demand' | 'spot';
const capacityTypes: readonly CapacityType[] = ['on-demand', 'spot'];

export interface Offering {
  readonly zone: string;
  readonly capacityType: CapacityType;
  /** USD per hour; 0 when unknown (then the offering is unavailable). */
  readonly price: number;
  readonly available: boolean;
}

export interface InstanceType {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly capacity: ResourceListStrings;
  readonly allocatable: ResourceListStrings;
  /** Sorted by zone, then capacity type. */
  readonly offerings: readonly Offering[];
}

export interface InstanceTypeOptions {
  readonly region: string;
  readonly amiFamily: AmiFamily;
  /** Only for amiFamily Custom (HyperShift); see kubelet.ts for the default. */
  readonly kubeletProfile?: KubeletProfile | undefined;
  readonly kubelet?: KubeletSettings | undefined;
  /** Root volume from the EC2NodeClass block device mappings; default per family. */
  readonly rootVolumeSize?: string | undefined;
  readonly instanceStorePolicy?: 'RAID0' | undefined;
  readonly vmMemoryOverheadPercent?: number | undefined;
  /** On-demand USD/hour by instance type. */
  readonly onDemandPrices: Readonly<Record<string, number>>;
  readonly spotPriceHistory?: readonly SpotPrice[] | undefined;
  /** Epoch milliseconds; judges how fresh spot prices are. */
  readonly now: number;
  /** Zones the EC2NodeClass subnets cover; all offered zones when absent. */
  readonly zones?: readonly string[] | undefined;
  /** Offerings known to be out of capacity, as `${capacityType}:${instanceType}:${zone}`. */
  readonly unavailableOfferings?: ReadonlySet<string> | undefined;
}

export interface SkippedInstanceType {
  readonly name: string;
  readonly reason: string;
}

export interface InstanceTypesResult {
  readonly instanceTypes: readonly InstanceType[];
  readonly skipped: readonly SkippedInstanceType[];
}

/** Karpenter asks EC2 only for hvm types of the architectures it launches (§2.3). */
function unsupportedReason(info: InstanceTypeInfo): string | undefined {
  if (info.SupportedVirtualizationTypes !== undefined && !info.SupportedVirtualizationTypes.includes('hvm')) return 'not hvm';
  if (kubeArchitecture(info) === undefined) return `architectures ${info.ProcessorInfo.SupportedArchitectures.join(', ') || 'unknown'} are not supported`;
  return undefined;
}

export function offeringKey(capacityType: CapacityType, instanceType: string, zone: string): string {
  return `${capacityType}:${instanceType}:${zone}`;
}

function buildOfferings(info: InstanceTypeInfo, offeredZones: readonly string[], options: InstanceTypeOptions): Offering[] {
  const name = info.InstanceType;
  const onDemandPrice = options.onDemandPrices[name];
  const allowedZones = options.zones === undefined ? undefined : new Set(options.zones);
  const zones = [...new Set(offeredZones)].filter((zone) => allowedZones === undefined || allowedZones.has(zone)).sort();
  const offerings: Offering[] = [];
  for (const zone of zones) {
    for (const capacityType of capacityTypes) {
      // capacity-block and any future usage classes are not launched by autonode.
      if (!info.SupportedUsageClasses.includes(capacityType)) continue;
      let price: number | undefined;
      if (onDemandPrice !== undefined) {
        price = capacityType === 'on-demand' ? onDemandPrice
          : chooseSpotPrice({ instanceType: name, zone, onDemandPrice, history: options.spotPriceHistory ?? [], now: options.now }).price;
      }
      // Without a price the solver cannot rank the offering, so Karpenter marks it
      // unavailable rather than guessing (types.go createOfferings).
      const available = price !== undefined && !(options.unavailableOfferings?.has(offeringKey(capacityType, name, zone)) ?? false);
      offerings.push({ zone, capacityType, price: price ?? 0, available });
    }
  }
  return offerings;
}

export function buildInstanceType(info: InstanceTypeInfo, offeredZones: readonly string[], options: InstanceTypeOptions): { ok: true; instanceType: InstanceType } | { ok: false; reason: string } {
  const unsupported = unsupportedReason(info);
  if (unsupported !== undefined) return { ok: false, reason: unsupported };
  const resources = nodeResources(info, nodeModelFor(options.amiFamily, options.kubeletProfile), {
    kubelet: options.kubelet ?? {},
    rootVolumeSize: options.rootVolumeSize ?? defaultRootVolumeSize[options.amiFamily],
    instanceStorePolicy: options.instanceStorePolicy,
    vmMemoryOverheadPercent: options.vmMemoryOverheadPercent,
  });
  if (!resources.ok) return resources;
  return {
    ok: true,
    instanceType: {
      name: info.InstanceType,
      labels: instanceTypeLabels(info, { region: options.region }),
      capacity: formatResourceList(resources.resources.capacity),
      allocatable: formatResourceList(resources.resources.allocatable),
      offerings: buildOfferings(info, offeredZones, options),
    },
  };
}

/**
 * All launchable instance types, sorted by name, with the ones left out and why. A type
 * EC2 offers in no zone (of the allowed ones) is left out too: it cannot be launched.
 */
export function buildInstanceTypes(infos: readonly InstanceTypeInfo[], typeOfferings: readonly InstanceTypeOffering[], options: InstanceTypeOptions): InstanceTypesResult {
  const zonesByType = new Map<string, string[]>();
  for (const offering of typeOfferings) {
    const zones = zonesByType.get(offering.InstanceType) ?? [];
    zones.push(offering.Location);
    zonesByType.set(offering.InstanceType, zones);
  }
  const instanceTypes: InstanceType[] = [];
  const skipped: SkippedInstanceType[] = [];
  const byName = [...infos].sort((a, b) => (a.InstanceType < b.InstanceType ? -1 : a.InstanceType > b.InstanceType ? 1 : 0));
  for (const info of byName) {
    const built = buildInstanceType(info, zonesByType.get(info.InstanceType) ?? [], options);
    if (!built.ok) skipped.push({ name: info.InstanceType, reason: built.reason });
    else if (built.instanceType.offerings.length === 0) skipped.push({ name: info.InstanceType, reason: `not offered in ${options.region}${options.zones ? ` zones ${options.zones.join(', ')}` : ''}` });
    else instanceTypes.push(built.instanceType);
  }
  return { instanceTypes, skipped };
}

/**
 * What a NodeClaim on this type can promise, as Karpenter's instance-type requirements:
 * its labels, zone and capacity type In the available offerings, and DoesNotExist for
 * every AWS instance label the type lacks (so "instance-gpu-count Exists" rules it out).
 */
export function instanceTypeRequirements(instanceType: InstanceType): Requirements {
  const available = instanceType.offerings.filter((offering) => offering.available);
  const result: Record<string, ReturnType<typeof inValues>> = { ...requirementsFromLabels(instanceType.labels) };
  result[LabelKey.zone] = inValues(LabelKey.zone, available.map((offering) => offering.zone));
  result[LabelKey.capacityType] = inValues(LabelKey.capacityType, available.map((offering) => offering.capacityType));
  for (const key of awsInstanceTypeLabelKeys) {
    if (instanceType.labels[key] === undefined) result[key] = doesNotExist(key);
  }
  if (instanceType.labels[LabelKey.windowsBuild] === undefined) result[LabelKey.windowsBuild] = doesNotExist(LabelKey.windowsBuild);
  return result;
}
