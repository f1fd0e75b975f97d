import { z } from 'zod';
import { kubeletSchema } from './kubelet';
import { templateLabelsSchema } from './nodepool';
import { objectMetaSchema, quantitySchema, resourceListSchema, taintSchema } from './primitives';
import { requirementsSchema } from './requirements';

// karpenter.sh/v1alpha5 Provisioner (karpenter.md §5, seed 004): input only. It is never
// served by the CRDs; `normaliseDocument` converts it to a NodePool and, when it carries
// kubelet settings or an inline provider, an EC2NodeClass.

/** The inline AWS provider block of v1alpha5 (v0.31 `v1alpha1.AWS`). */
export const awsProviderSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  amiFamily: z.enum(['AL2', 'AL2023', 'Bottlerocket', 'Ubuntu', 'Custom', 'Windows2019', 'Windows2022']).optional(),
  amiSelector: z.record(z.string(), z.string()).optional(),
  subnetSelector: z.record(z.string(), z.string()).optional(),
  securityGroupSelector: z.record(z.string(), z.string()).optional(),
  instanceProfile: z.string().optional(),
  launchTemplate: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional(),
  context: z.string().optional(),
  userData: z.string().optional(),
  detailedMonitoring: z.boolean().optional(),
  metadataOptions: z
    .strictObject({
      httpEndpoint: z.enum(['enabled', 'disabled']).optional(),
      httpProtocolIPv6: z.enum(['enabled', 'disabled']).optional(),
      httpPutResponseHopLimit: z.number().int().min(1).max(64).optional(),
      httpTokens: z.enum(['required', 'optional']).optional(),
    })
    .optional(),
  blockDeviceMappings: z
    .array(
      z.strictObject({
        deviceName: z.string().optional(),
        rootVolume: z.boolean().optional(),
        ebs: z
          .strictObject({
            deleteOnTermination: z.boolean().optional(),
            encrypted: z.boolean().optional(),
            iops: z.number().int().optional(),
            kmsKeyID: z.string().optional(),
            snapshotID: z.string().optional(),
            throughput: z.number().int().optional(),
            volumeSize: quantitySchema.optional(),
            volumeType: z.enum(['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3']).optional(),
          })
          .optional(),
      }),
    )
    .optional(),
});
export type AwsProvider = z.output<typeof awsProviderSchema>;

/** v1alpha5 kubelet settings: v1.0's, plus the runtime choice that v1 dropped. */
const kubeletConfigurationSchema = kubeletSchema.safeExtend({
  containerRuntime: z.enum(['containerd', 'dockerd']).optional(),
});

export const ProvisionerSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1alpha5'),
  kind: z.literal('Provisioner'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    annotations: z.record(z.string(), z.string()).optional(),
    labels: templateLabelsSchema.optional(),
    taints: z.array(taintSchema).optional(),
    startupTaints: z.array(taintSchema).optional(),
    requirements: requirementsSchema.optional(),
    kubeletConfiguration: kubeletConfigurationSchema.optional(),
    provider: awsProviderSchema.optional(),
    providerRef: z
      .strictObject({ apiVersion: z.string().optional(), kind: z.string().optional(), name: z.string().min(1) })
      .optional(),
    ttlSecondsAfterEmpty: z.number().int().min(0).optional(),
    ttlSecondsUntilExpired: z.number().int().min(0).optional(),
    limits: z.strictObject({ resources: resourceListSchema.optional() }).optional(),
    weight: z.number().int().min(1).max(100).optional(),
    consolidation: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  }),
  status: z.unknown().optional(),
});
export type Provisioner = z.output<typeof ProvisionerSchema>;
