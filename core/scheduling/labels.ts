// Well-known, aliased and restricted node labels, per Karpenter core
// (pkg/apis/v1/labels.go) and the AWS provider (pkg/apis/v1/labels.go);
// reference/karpenter.md §1.1 and §2.2.

export const LabelKey = {
  nodePool: 'karpenter.sh/nodepool',
  capacityType: 'karpenter.sh/capacity-type',
  zone: 'topology.kubernetes.io/zone',
  region: 'topology.kubernetes.io/region',
  instanceType: 'node.kubernetes.io/instance-type',
  arch: 'kubernetes.io/arch',
  os: 'kubernetes.io/os',
  windowsBuild: 'node.kubernetes.io/windows-build',
  hostname: 'kubernetes.io/hostname',
  zoneId: 'topology.k8s.aws/zone-id',
  instanceHypervisor: 'karpenter.k8s.aws/instance-hypervisor',
  instanceEncryptionInTransitSupported: 'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  instanceCategory: 'karpenter.k8s.aws/instance-category',
  instanceCapabilityFlex: 'karpenter.k8s.aws/instance-capability-flex',
  instanceTenancy: 'karpenter.k8s.aws/instance-tenancy',
  instanceFamily: 'karpenter.k8s.aws/instance-family',
  instanceGeneration: 'karpenter.k8s.aws/instance-generation',
  instanceSize: 'karpenter.k8s.aws/instance-size',
  instanceLocalNvme: 'karpenter.k8s.aws/instance-local-nvme',
  instanceCpu: 'karpenter.k8s.aws/instance-cpu',
  instanceCpuManufacturer: 'karpenter.k8s.aws/instance-cpu-manufacturer',
  instanceCpuSustainedClockSpeedMhz: 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  instanceMemory: 'karpenter.k8s.aws/instance-memory',
  instanceEbsBandwidth: 'karpenter.k8s.aws/instance-ebs-bandwidth',
  instanceNetworkBandwidth: 'karpenter.k8s.aws/instance-network-bandwidth',
  instanceGpuName: 'karpenter.k8s.aws/instance-gpu-name',
  instanceGpuManufacturer: 'karpenter.k8s.aws/instance-gpu-manufacturer',
  instanceGpuCount: 'karpenter.k8s.aws/instance-gpu-count',
  instanceGpuMemory: 'karpenter.k8s.aws/instance-gpu-memory',
  instanceAcceleratorName: 'karpenter.k8s.aws/instance-accelerator-name',
  instanceAcceleratorManufacturer: 'karpenter.k8s.aws/instance-accelerator-manufacturer',
  instanceAcceleratorCount: 'karpenter.k8s.aws/instance-accelerator-count',
  capacityReservationId: 'karpenter.k8s.aws/capacity-reservation-id',
  capacityReservationType: 'karpenter.k8s.aws/capacity-reservation-type',
  nodeClass: 'karpenter.k8s.aws/ec2nodeclass',
} as const;

/** The AWS provider's instance-type labels; absent ones are DoesNotExist on a type. */
export const awsInstanceTypeLabelKeys: readonly string[] = [
  LabelKey.instanceHypervisor,
  LabelKey.instanceEncryptionInTransitSupported,
  LabelKey.instanceCategory,
  LabelKey.instanceCapabilityFlex,
  LabelKey.instanceTenancy,
  LabelKey.instanceFamily,
  LabelKey.instanceGeneration,
  LabelKey.instanceSize,
  LabelKey.instanceLocalNvme,
  LabelKey.instanceCpu,
  LabelKey.instanceCpuManufacturer,
  LabelKey.instanceCpuSustainedClockSpeedMhz,
  LabelKey.instanceMemory,
  LabelKey.instanceEbsBandwidth,
  LabelKey.instanceNetworkBandwidth,
  LabelKey.instanceGpuName,
  LabelKey.instanceGpuManufacturer,
  LabelKey.instanceGpuCount,
  LabelKey.instanceGpuMemory,
  LabelKey.instanceAcceleratorName,
  LabelKey.instanceAcceleratorManufacturer,
  LabelKey.instanceAcceleratorCount,
];

/** Labels a NodePool may constrain even though their domain is restricted. */
export const wellKnownLabels: ReadonlySet<string> = new Set([
  LabelKey.nodePool,
  LabelKey.zone,
  LabelKey.region,
  LabelKey.instanceType,
  LabelKey.arch,
  LabelKey.os,
  LabelKey.capacityType,
  LabelKey.windowsBuild,
  LabelKey.zoneId,
  LabelKey.capacityReservationId,
  LabelKey.capacityReservationType,
  ...awsInstanceTypeLabelKeys,
]);

/**
 * Deprecated keys Karpenter rewrites to their stable name before comparing
 * (core labels.go NormalizedLabels), so `beta.kubernetes.io/arch: arm64` in a pod's
 * nodeSelector constrains the same thing as `kubernetes.io/arch`.
 */
export const labelAliases: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': LabelKey.zone,
  'failure-domain.beta.kubernetes.io/region': LabelKey.region,
  'beta.kubernetes.io/arch': LabelKey.arch,
  'beta.kubernetes.io/os': LabelKey.os,
  'beta.kubernetes.io/instance-type': LabelKey.instanceType,
};

export function normalizeLabelKey(key: string): string {
  return labelAliases[key] ?? key;
}

/**
 * Label domains no NodePool can provide by stamping (Karpenter core labels.go
 * RestrictedLabelDomains plus the AWS provider's), with the sub-domains left open to users
 * (LabelDomainExceptions). The other providers' domains are here too: no EC2 type carries
 * their labels, so stamping one would promise what no node has.
 */
const providerLabelDomains = ['kubernetes.io', 'k8s.io', 'karpenter.sh', 'karpenter.k8s.aws', 'karpenter.azure.com', 'karpenter.k8s.azure'] as const;
const userLabelDomainExceptions = ['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'] as const;

/**
 * Whether only the cloud provider (instance type, offering) or Karpenter itself decides
 * this label, so a requirement on it is met by the node's real value and never by
 * stamping the required value onto the claim (Karpenter's IsRestrictedNodeLabel, which
 * its Requirements.Labels() skips). Keys outside these domains are custom labels: a
 * NodePool's requirement on one is a label the NodePool gives its nodes.
 */
export function isProviderDecidedLabel(key: string): boolean {
  const normalized = normalizeLabelKey(key);
  if (wellKnownLabels.has(normalized) || normalized === LabelKey.hostname) return true;
  const slash = normalized.indexOf('/');
  if (slash < 0) return false;
  const domain = normalized.slice(0, slash);
  // Plain suffixes, as upstream compares them (strings.HasSuffix).
  const within = (suffix: string): boolean => domain.endsWith(suffix);
  if (userLabelDomainExceptions.some(within)) return false;
  return providerLabelDomains.some(within);
}
