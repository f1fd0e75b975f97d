// What decides a node's overhead besides the instance type: the AMI family (which kubelet
// defaults apply) and the EC2NodeClass kubelet settings that override them.
import { z } from 'zod';

export const amiFamilySchema = z.enum(['AL2', 'AL2023', 'Bottlerocket', 'Custom']);
export type AmiFamily = z.infer<typeof amiFamilySchema>;

export const kubeletProfileSchema = z.enum(['openshift-static', 'openshift-autosize']);
export type KubeletProfile = z.infer<typeof kubeletProfileSchema>;

const reservationSchema = z.record(z.string(), z.string());

/** The EC2NodeClass `spec.kubelet` fields that change capacity or allocatable. */
export const kubeletSettingsSchema = z.object({
  maxPods: z.number().int().nonnegative().optional(),
  podsPerCore: z.number().int().nonnegative().optional(),
  systemReserved: reservationSchema.optional(),
  kubeReserved: reservationSchema.optional(),
  evictionHard: reservationSchema.optional(),
  evictionSoft: reservationSchema.optional(),
});
export type KubeletSettings = z.infer<typeof kubeletSettingsSchema>;

/**
 * How a node's kubelet is configured, as a closed set:
 *  - `karpenter`: the AWS provider's model for its AMI families (reference §2.3);
 *  - `openshift`: a HyperShift node. HyperShift generates EC2NodeClasses with
 *    `amiFamily: Custom` and RHCOS userData (reference §3.4), whose kubelet is configured
 *    by OpenShift's MachineConfig, not by Karpenter's family defaults. Upstream Karpenter
 *    would guess ENI-limited pods for Custom; OVN nodes are not ENI-limited (§7), so we
 *    model OpenShift's kubelet instead.
 */
export type NodeModel =
  | { readonly kind: 'karpenter'; readonly amiFamily: Exclude<AmiFamily, 'Custom'> }
  | { readonly kind: 'openshift'; readonly profile: KubeletProfile };

/**
 * The default is the static reservation. OpenShift 4.21 turned auto-sizing on for new
 * clusters (MCO PRs #5390/#5491) and MCO #5847 extended it to HyperShift workers, but only
 * after MCO #5716 cut the memory formula back (8 GiB nodes: 2Gi -> 1Gi). The formula we can
 * cite (openshift-autosize, see openshift.ts) predates #5716; for common sizes the current
 * behaviour (1Gi, 500m below ~38 vCPUs) equals the static profile, so static is the closer
 * prediction until the post-#5716 formula is sourced.
 */
export const defaultKubeletProfile: KubeletProfile = 'openshift-static';

export function nodeModelFor(amiFamily: AmiFamily, profile: KubeletProfile = defaultKubeletProfile): NodeModel {
  return amiFamily === 'Custom' ? { kind: 'openshift', profile } : { kind: 'karpenter', amiFamily };
}

export interface KarpenterFamilyFlags {
  /** Max pods = ENI-limited count unless kubelet.maxPods is set. */
  readonly supportsEniLimitedPodDensity: boolean;
  /** kube-reserved memory uses the ENI-limited count even when maxPods is set. */
  readonly usesEniLimitedMemoryOverhead: boolean;
  readonly podsPerCoreEnabled: boolean;
  readonly evictionSoftEnabled: boolean;
}

/** karpenter-provider-aws pkg/providers/amifamily/{al2,al2023,bottlerocket}.go FeatureFlags. */
export const karpenterFamilyFlags: Readonly<Record<Exclude<AmiFamily, 'Custom'>, KarpenterFamilyFlags>> = {
  AL2: { supportsEniLimitedPodDensity: true, usesEniLimitedMemoryOverhead: true, podsPerCoreEnabled: true, evictionSoftEnabled: true },
  AL2023: { supportsEniLimitedPodDensity: true, usesEniLimitedMemoryOverhead: false, podsPerCoreEnabled: true, evictionSoftEnabled: true },
  Bottlerocket: { supportsEniLimitedPodDensity: true, usesEniLimitedMemoryOverhead: false, podsPerCoreEnabled: false, evictionSoftEnabled: false },
};

/**
 * Root (ephemeral) volume when the EC2NodeClass has no block device mappings: Karpenter's
 * family defaults are 20Gi (amifamily DefaultEBS, Bottlerocket's /dev/xvdb); HyperShift's
 * generated EC2NodeClass has a 120Gi gp3 root volume (reference §3.3).
 */
export const defaultRootVolumeSize: Readonly<Record<AmiFamily, string>> = {
  AL2: '20Gi', AL2023: '20Gi', Bottlerocket: '20Gi', Custom: '120Gi',
};
