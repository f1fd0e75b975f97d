// The EC2NodeClass block device mappings a node launches with, and which of them holds the
// kubelet's ephemeral storage. Launch and the allocatable prediction both read them
// through here, so the root volume a node gets is the one its ephemeral storage was
// computed from.
import type { EC2NodeClass } from '../api/ec2nodeclass';
import { parseQuantity, GIBIBYTE, NANOS_PER_UNIT } from '../scheduling/quantity';
import { defaultRootVolumeSize, type AmiFamily } from './kubelet';

export type BlockDeviceMapping = NonNullable<EC2NodeClass['spec']['blockDeviceMappings']>[number];

/**
 * The mappings of a node class without `blockDeviceMappings`.
 *  - AL2, AL2023: Karpenter's DefaultEBS (20Gi gp3, encrypted) at /dev/xvda
 *    (pkg/providers/amifamily/{al2,al2023}.go DefaultBlockDeviceMappings).
 *  - Bottlerocket: a 4Gi OS volume at /dev/xvda and DefaultEBS at /dev/xvdb, the data
 *    volume the kubelet uses (bottlerocket.go).
 *  - Custom: Karpenter sends none (the AMI's own mappings apply). Rejected here, because
 *    autonode's Custom is HyperShift's node class, whose default is a 120Gi gp3 encrypted
 *    root volume at /dev/xvda deleted with the instance (OpenshiftEC2NodeClass, reference
 *    §3.3) — and the allocatable prediction assumes those 120Gi (defaultRootVolumeSize).
 */
export function defaultBlockDeviceMappings(family: AmiFamily): BlockDeviceMapping[] {
  const defaultEbs = { volumeSize: '20Gi', volumeType: 'gp3', encrypted: true } as const;
  switch (family) {
    case 'AL2':
    case 'AL2023':
      return [{ deviceName: '/dev/xvda', ebs: { ...defaultEbs } }];
    case 'Bottlerocket':
      return [
        { deviceName: '/dev/xvda', ebs: { ...defaultEbs, volumeSize: '4Gi' } },
        { deviceName: '/dev/xvdb', ebs: { ...defaultEbs } },
      ];
    case 'Custom':
      return [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: defaultRootVolumeSize.Custom, volumeType: 'gp3', encrypted: true, deleteOnTermination: true } }];
    default: {
      const unexpected: never = family;
      throw new Error(`unexpected AMI family ${String(unexpected)}`);
    }
  }
}

/** The mappings a node launches with: the class's own, or its family's default. */
export function effectiveBlockDeviceMappings(mappings: readonly BlockDeviceMapping[] | undefined, family: AmiFamily): BlockDeviceMapping[] {
  return mappings !== undefined && mappings.length > 0 ? [...mappings] : defaultBlockDeviceMappings(family);
}

/**
 * The size of the volume the kubelet's ephemeral storage is on: the mapping marked
 * rootVolume, else the first; undefined (the family default) when the class has none.
 */
export function ephemeralVolumeSize(mappings: readonly BlockDeviceMapping[] | undefined): string | undefined {
  const root = mappings?.find((m) => m.rootVolume === true) ?? mappings?.[0];
  return root?.ebs?.volumeSize;
}

/** EC2 takes whole GiB: "120Gi" → 120, "100G" → 94 (rounded up, as Karpenter's volumeSize does). */
export function volumeSizeGiB(size: string): number {
  const parsed = parseQuantity(size);
  if (!parsed.ok) throw new Error(`volume size ${JSON.stringify(size)}: ${parsed.reason}`);
  const perGiB = GIBIBYTE * NANOS_PER_UNIT;
  return Number((parsed.quantity.nanos + perGiB - 1n) / perGiB);
}
