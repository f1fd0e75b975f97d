// Instance-type labels, as the AWS provider computes them (karpenter-provider-aws
// pkg/providers/instancetype/types.go computeRequirements; reference/karpenter.md §2.2).
// Zone and capacity type vary per offering and are not part of these labels.
import { LabelKey } from '../scheduling/labels';
import type { InstanceTypeInfo } from './ec2-schemas';

/** types.go instanceTypeScheme: category, optional "-NNtb" (u-6tb1), generation. */
const instanceTypeScheme = /(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

const awsToKubeArchitectures: Readonly<Record<string, string>> = { x86_64: 'amd64', arm64: 'arm64' };

/** Karpenter's lowerKabobCase: "Radeon Pro V520" → "radeon-pro-v520". */
function lowerKebabCase(text: string): string {
  return text.replaceAll(' ', '-').toLowerCase();
}

/** The Kubernetes architecture, or undefined for ones Karpenter does not launch (i386, mac). */
export function kubeArchitecture(info: InstanceTypeInfo): string | undefined {
  for (const architecture of info.ProcessorInfo.SupportedArchitectures) {
    const kube = awsToKubeArchitectures[architecture];
    if (kube !== undefined) return kube;
  }
  return undefined;
}

/**
 * Network bandwidth in Mbit/s: the sum of the cards' baseline bandwidth. Karpenter ships
 * a generated table (zz_generated.bandwidth.go) with exactly these values (e.g. m5.large
 * 750, p4d.24xlarge 400000 = 4 × 100 Gbit) and leaves out the types whose
 * NetworkPerformance is only described in words ("Moderate", "High"); so do we.
 */
export function networkBandwidthMbps(info: InstanceTypeInfo): number | undefined {
  if (!/Gigabit/.test(info.NetworkInfo.NetworkPerformance ?? '')) return undefined;
  const cards = info.NetworkInfo.NetworkCards ?? [];
  if (cards.length === 0 || cards.some((card) => card.BaselineBandwidthInGbps === undefined)) return undefined;
  return Math.round(cards.reduce((sum, card) => sum + (card.BaselineBandwidthInGbps ?? 0), 0) * 1000);
}

/**
 * The well-known labels a node of this type carries, minus zone and capacity type.
 * A label Karpenter would leave as DoesNotExist is absent here.
 */
export function instanceTypeLabels(info: InstanceTypeInfo, options: { region: string; os?: string }): Record<string, string> {
  const name = info.InstanceType;
  const labels: Record<string, string> = {
    [LabelKey.instanceType]: name,
    [LabelKey.os]: options.os ?? 'linux',
    [LabelKey.region]: options.region,
    [LabelKey.instanceCpu]: String(info.VCpuInfo.DefaultVCpus),
    [LabelKey.instanceMemory]: String(info.MemoryInfo.SizeInMiB),
    [LabelKey.instanceEncryptionInTransitSupported]: String(info.NetworkInfo.EncryptionInTransitSupported ?? false),
  };
  const arch = kubeArchitecture(info);
  if (arch !== undefined) labels[LabelKey.arch] = arch;
  // Karpenter sets In [Hypervisor]; metal types have none, and an empty value never
  // becomes a node label (Requirements.Labels skips "").
  if (info.Hypervisor !== undefined && info.Hypervisor !== '') labels[LabelKey.instanceHypervisor] = info.Hypervisor;

  const scheme = instanceTypeScheme.exec(name);
  if (scheme?.[1] !== undefined && scheme[3] !== undefined) {
    labels[LabelKey.instanceCategory] = scheme[1];
    labels[LabelKey.instanceGeneration] = scheme[3];
  }
  const parts = name.split('.');
  if (parts.length === 2 && parts[0] !== undefined && parts[1] !== undefined) {
    labels[LabelKey.instanceFamily] = parts[0];
    labels[LabelKey.instanceSize] = parts[1];
  }
  // Karpenter reads flex from the family's name (c7i-flex, m7i-flex, …), not from an EC2
  // field, and sets it on every type: "true" or "false".
  labels[LabelKey.instanceCapabilityFlex] = String((parts[0] ?? '').includes('-flex'));
  // Karpenter offers every type as In [default, dedicated] and launches dedicated when a
  // NodePool narrows to it. autonode launches default tenancy only, so that is the one
  // value a node of ours can honestly carry: a pool asking for dedicated matches nothing
  // rather than getting a shared instance labelled dedicated.
  labels[LabelKey.instanceTenancy] = 'default';

  const storage = info.InstanceStorageInfo;
  // As Karpenter: any instance store whose NVMe support is not "unsupported" (absent counts as supported).
  if (storage?.TotalSizeInGB !== undefined && storage.NvmeSupport !== 'unsupported') {
    labels[LabelKey.instanceLocalNvme] = String(storage.TotalSizeInGB);
  }
  const bandwidth = networkBandwidthMbps(info);
  if (bandwidth !== undefined) labels[LabelKey.instanceNetworkBandwidth] = String(bandwidth);

  // GPU labels only when the type has exactly one kind of GPU.
  const gpus = info.GpuInfo?.Gpus ?? [];
  const [gpu] = gpus;
  if (gpus.length === 1 && gpu !== undefined) {
    if (gpu.Name !== undefined) labels[LabelKey.instanceGpuName] = lowerKebabCase(gpu.Name);
    if (gpu.Manufacturer !== undefined) labels[LabelKey.instanceGpuManufacturer] = lowerKebabCase(gpu.Manufacturer);
    labels[LabelKey.instanceGpuCount] = String(gpu.Count ?? 0);
    labels[LabelKey.instanceGpuMemory] = String(gpu.MemoryInfo?.SizeInMiB ?? 0);
  }

  // Accelerators: Neuron devices (Inferentia, Trainium) where EC2 reports them, else the
  // older InferenceAcceleratorInfo; again only with exactly one kind.
  const neuron = info.NeuronInfo?.NeuronDevices ?? [];
  const accelerators = info.InferenceAcceleratorInfo?.Accelerators ?? [];
  const [device] = neuron;
  const [accelerator] = accelerators;
  if (neuron.length === 1 && device !== undefined) {
    if (device.Name !== undefined) labels[LabelKey.instanceAcceleratorName] = lowerKebabCase(device.Name);
    labels[LabelKey.instanceAcceleratorManufacturer] = 'aws';
    labels[LabelKey.instanceAcceleratorCount] = String(device.Count ?? 0);
  } else if (neuron.length === 0 && accelerators.length === 1 && accelerator !== undefined) {
    if (accelerator.Name !== undefined) labels[LabelKey.instanceAcceleratorName] = lowerKebabCase(accelerator.Name);
    if (accelerator.Manufacturer !== undefined) labels[LabelKey.instanceAcceleratorManufacturer] = lowerKebabCase(accelerator.Manufacturer);
    labels[LabelKey.instanceAcceleratorCount] = String(accelerator.Count ?? 0);
  }

  if (info.ProcessorInfo.Manufacturer !== undefined) {
    labels[LabelKey.instanceCpuManufacturer] = lowerKebabCase(info.ProcessorInfo.Manufacturer);
  }
  // GHz → whole MHz so Gt/Lt can compare it. Karpenter sets it whenever EC2 reports
  // ProcessorInfo, reading a missing speed as 0 (m1.small says "0"), so do we.
  labels[LabelKey.instanceCpuSustainedClockSpeedMhz] = String(Math.round((info.ProcessorInfo.SustainedClockSpeedInGhz ?? 0) * 1000));
  const ebs = info.EbsInfo;
  if (ebs?.EbsOptimizedSupport === 'default' && ebs.EbsOptimizedInfo?.MaximumBandwidthInMbps !== undefined) {
    labels[LabelKey.instanceEbsBandwidth] = String(ebs.EbsOptimizedInfo.MaximumBandwidthInMbps);
  }
  return sortedRecord(labels);
}

export function sortedRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(record).sort()) {
    const value = record[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
