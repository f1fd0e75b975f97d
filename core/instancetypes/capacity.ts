// Node capacity from EC2 instance data (karpenter-provider-aws
// pkg/providers/instancetype/types.go computeCapacity; reference/karpenter.md §2.3).
import { fromMebibytes, fromUnits, quantity } from '../scheduling/quantity';
import { ResourceName, type ResourceList } from '../scheduling/resources';
import type { InstanceTypeInfo } from './ec2-schemas';

/**
 * Share of memory the hypervisor and kernel keep (--vm-memory-overhead-percent, default
 * 0.075, options.go). Karpenter later learns the real figure from registered nodes; an
 * offline catalog cannot, so this default is what we use.
 */
export const defaultVmMemoryOverheadPercent = 0.075;

/** Graviton reserves 64 MiB for the kernel's CMA that pods can never use (types.go memory()). */
const gravitonCmaMiB = 64;

/**
 * Memory capacity in MiB: SizeInMiB, minus CMA on arm64, minus
 * ceil(MiB × overhead). Kept in floating point exactly as Karpenter computes it (float64
 * in Go, the same IEEE arithmetic here), so the MiB figure matches bit for bit.
 */
export function memoryCapacityMiB(info: InstanceTypeInfo, vmMemoryOverheadPercent = defaultVmMemoryOverheadPercent): number {
  let mebibytes = info.MemoryInfo.SizeInMiB;
  if (info.ProcessorInfo.SupportedArchitectures[0] === 'arm64') mebibytes -= gravitonCmaMiB;
  return mebibytes - Math.ceil(mebibytes * vmMemoryOverheadPercent);
}

/**
 * ENI-limited max pods: usableENIs × (IPv4 per ENI − 1) + 2, counting only the default
 * network card, as the VPC CNI does (types.go ENILimitedPods; amazon-eks-ami
 * eni-max-pods.txt). m5.large: 3 × (10 − 1) + 2 = 29.
 */
export function eniLimitedPods(info: InstanceTypeInfo, reservedEnis = 0): number {
  const network = info.NetworkInfo;
  const defaultCardIndex = network.DefaultNetworkCardIndex ?? 0;
  const card = (network.NetworkCards ?? []).find((c) => (c.NetworkCardIndex ?? 0) === defaultCardIndex);
  const interfaces = card?.MaximumNetworkInterfaces ?? network.MaximumNetworkInterfaces ?? 0;
  const usable = Math.max(interfaces - reservedEnis, 0);
  if (usable === 0) return 0;
  return usable * (network.Ipv4AddressesPerInterface - 1) + 2;
}

function sumGpus(info: InstanceTypeInfo, manufacturer: string): number {
  return (info.GpuInfo?.Gpus ?? []).filter((gpu) => gpu.Manufacturer === manufacturer).reduce((sum, gpu) => sum + (gpu.Count ?? 0), 0);
}

/**
 * Device-plugin resources the type can offer (types.go nvidiaGPUs, amdGPUs, awsNeurons,
 * habanaGaudis, efas). Zero counts are left out: an absent resource is zero.
 * vpc.amazonaws.com/pod-eni needs the VPC resource controller's trunking table, which
 * DescribeInstanceTypes does not carry, so it is not modelled.
 */
export function extendedResources(info: InstanceTypeInfo): ResourceList {
  const neuronDevices = info.NeuronInfo?.NeuronDevices ?? [];
  const neuron = neuronDevices.length > 0
    ? neuronDevices.reduce((sum, device) => sum + (device.Count ?? 0), 0)
    : (info.InferenceAcceleratorInfo?.Accelerators ?? []).reduce((sum, accelerator) => sum + (accelerator.Count ?? 0), 0);
  const neuronCores = neuronDevices.reduce((sum, device) => sum + (device.Count ?? 0) * (device.CoreInfo?.Count ?? 0), 0);
  const counts: Record<string, number> = {
    [ResourceName.nvidiaGpu]: sumGpus(info, 'NVIDIA'),
    [ResourceName.amdGpu]: sumGpus(info, 'AMD'),
    [ResourceName.habanaGaudi]: sumGpus(info, 'Habana'),
    [ResourceName.awsNeuron]: neuron,
    [ResourceName.awsNeuronCore]: neuronCores,
    [ResourceName.efa]: info.NetworkInfo.EfaInfo?.MaximumEfaInterfaces ?? 0,
  };
  const resources: Record<string, bigint> = {};
  for (const [name, count] of Object.entries(counts)) {
    if (count > 0) resources[name] = fromUnits(count);
  }
  return resources;
}

export interface EphemeralStorageOptions {
  /** Root volume size from the EC2NodeClass block device mappings, e.g. "120Gi". */
  readonly rootVolumeSize: string;
  /** RAID0: pods' ephemeral storage lives on the instance-store NVMe disks instead. */
  readonly instanceStorePolicy?: 'RAID0' | undefined;
}

/** types.go ephemeralStorage: instance store with RAID0 (decimal GB), else the root volume. */
export function ephemeralStorageCapacity(info: InstanceTypeInfo, options: EphemeralStorageOptions): bigint {
  const instanceStoreGB = info.InstanceStorageInfo?.TotalSizeInGB;
  if (options.instanceStorePolicy === 'RAID0' && instanceStoreGB !== undefined) return quantity(`${instanceStoreGB}G`);
  return quantity(options.rootVolumeSize);
}

export interface BaseCapacity {
  readonly cpu: bigint;
  readonly memory: bigint;
  readonly ephemeralStorage: bigint;
  readonly extended: ResourceList;
}

export function baseCapacity(info: InstanceTypeInfo, options: EphemeralStorageOptions & { readonly vmMemoryOverheadPercent?: number | undefined }): BaseCapacity {
  return {
    cpu: fromUnits(info.VCpuInfo.DefaultVCpus),
    memory: fromMebibytes(memoryCapacityMiB(info, options.vmMemoryOverheadPercent)),
    ephemeralStorage: ephemeralStorageCapacity(info, options),
    extended: extendedResources(info),
  };
}
