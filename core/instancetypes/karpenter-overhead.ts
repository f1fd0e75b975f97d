// Capacity and allocatable for Karpenter's AMI families (AL2, AL2023, Bottlerocket),
// following karpenter-provider-aws pkg/providers/instancetype/types.go (pods,
// kubeReservedResources, evictionThreshold) and reference/karpenter.md §2.3:
//   allocatable = capacity − kubeReserved − systemReserved − evictionThreshold
// m5.large on AL2023 with default settings: 1930m cpu, 6903Mi memory, 29 pods.
import { fromMebibytes, fromMilliUnits, fromUnits, quantity } from '../scheduling/quantity';
import { maxResources, ResourceName, type ResourceList } from '../scheduling/resources';
import { baseCapacity, eniLimitedPods } from './capacity';
import type { InstanceTypeInfo } from './ec2-schemas';
import { karpenterFamilyFlags, type AmiFamily, type KubeletSettings } from './kubelet';
import { evictionSignal, evictionThreshold, parseReservation } from './reservations';
import { allocatableOf, type NodeResourcesOptions, type NodeResourcesResult } from './overhead';

/** types.go pods(): kubelet.maxPods, else ENI-limited (or 110), capped by podsPerCore. */
export function karpenterMaxPods(info: InstanceTypeInfo, amiFamily: Exclude<AmiFamily, 'Custom'>, kubelet: KubeletSettings): number {
  const flags = karpenterFamilyFlags[amiFamily];
  let pods = kubelet.maxPods ?? (flags.supportsEniLimitedPodDensity ? eniLimitedPods(info) : 110);
  if ((kubelet.podsPerCore ?? 0) > 0 && flags.podsPerCoreEnabled) {
    pods = Math.min((kubelet.podsPerCore ?? 0) * info.VCpuInfo.DefaultVCpus, pods);
  }
  return pods;
}

/**
 * kube-reserved CPU in millicores: 6% of the first core, 1% of the second, 0.5% of cores
 * 3–4, 0.25% above (Bottlerocket PR #1388 via types.go). Each band is truncated to whole
 * millicores in float64, exactly as Karpenter does, so 96 vCPUs give 60+10+10+230 = 310m.
 */
export function kubeReservedCpuMillis(vcpus: number): number {
  const cpu = vcpus * 1000;
  const bands = [
    { start: 0, end: 1000, percentage: 0.06 },
    { start: 1000, end: 2000, percentage: 0.01 },
    { start: 2000, end: 4000, percentage: 0.005 },
    { start: 4000, end: 2 ** 31, percentage: 0.0025 },
  ];
  let millis = 0;
  for (const band of bands) {
    if (cpu < band.start) continue;
    const width = cpu < band.end ? cpu - band.start : band.end - band.start;
    millis += Math.trunc(width * band.percentage);
  }
  return millis;
}

export function karpenterNodeResources(
  info: InstanceTypeInfo,
  amiFamily: Exclude<AmiFamily, 'Custom'>,
  options: NodeResourcesOptions,
): NodeResourcesResult {
  const kubelet = options.kubelet;
  const flags = karpenterFamilyFlags[amiFamily];
  const base = baseCapacity(info, options);
  const pods = karpenterMaxPods(info, amiFamily, kubelet);
  const capacity: ResourceList = {
    [ResourceName.cpu]: base.cpu,
    [ResourceName.memory]: base.memory,
    [ResourceName.ephemeralStorage]: base.ephemeralStorage,
    [ResourceName.pods]: fromUnits(pods),
    ...base.extended,
  };

  // kube-reserved memory = 11 MiB per pod + 255 MiB (types.go kubeReservedResources).
  const podsForMemory = flags.usesEniLimitedMemoryOverhead ? eniLimitedPods(info) : pods;
  const userKubeReserved = parseReservation('kubeReserved', kubelet.kubeReserved);
  if (!userKubeReserved.ok) return userKubeReserved;
  const kubeReserved: ResourceList = {
    [ResourceName.cpu]: fromMilliUnits(kubeReservedCpuMillis(info.VCpuInfo.DefaultVCpus)),
    [ResourceName.memory]: fromMebibytes(11 * podsForMemory + 255),
    [ResourceName.ephemeralStorage]: quantity('1Gi'),
    ...userKubeReserved.resources,
  };
  const systemReserved = parseReservation('systemReserved', kubelet.systemReserved);
  if (!systemReserved.ok) return systemReserved;

  // Eviction: 100Mi memory and 10% of the root volume, overridden per signal by the
  // larger of evictionHard and (where the family honours it) evictionSoft.
  const defaultNodefs = evictionThreshold('evictionHard', '10%', base.ephemeralStorage);
  if (!defaultNodefs.ok) return defaultNodefs;
  let override: ResourceList = {};
  const signalMaps = [
    ['evictionHard', kubelet.evictionHard] as const,
    ...(flags.evictionSoftEnabled ? [['evictionSoft', kubelet.evictionSoft] as const] : []),
  ];
  for (const [field, signals] of signalMaps) {
    if (signals === undefined) continue;
    const temp: Record<string, bigint> = {};
    const memory = signals[evictionSignal.memoryAvailable];
    if (memory !== undefined) {
      const threshold = evictionThreshold(`${field}.${evictionSignal.memoryAvailable}`, memory, base.memory);
      if (!threshold.ok) return threshold;
      temp[ResourceName.memory] = threshold.nanos;
    }
    const nodefs = signals[evictionSignal.nodefsAvailable];
    if (nodefs !== undefined) {
      const threshold = evictionThreshold(`${field}.${evictionSignal.nodefsAvailable}`, nodefs, base.ephemeralStorage);
      if (!threshold.ok) return threshold;
      temp[ResourceName.ephemeralStorage] = threshold.nanos;
    }
    override = maxResources(override, temp);
  }
  const eviction: ResourceList = {
    [ResourceName.memory]: quantity('100Mi'),
    [ResourceName.ephemeralStorage]: defaultNodefs.nanos,
    ...override,
  };

  const overhead = { kubeReserved, systemReserved: systemReserved.resources, evictionThreshold: eviction };
  return { ok: true, resources: { capacity, overhead, allocatable: allocatableOf(capacity, overhead) } };
}
