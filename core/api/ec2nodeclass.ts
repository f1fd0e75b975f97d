import { z } from 'zod';
import { reportIssue } from './issues';
import { kubeletSchema } from './kubelet';
import { conditionSchema, objectMetaSchema } from './primitives';
import { amiSelectorTermSchema, securityGroupSelectorTermSchema, selectorTermsSchema, subnetSelectorTermSchema } from './selectors';

// karpenter.k8s.aws EC2NodeClass (karpenter.md §2.1). Deviation from upstream: role and
// instanceProfile are both optional (at most one), because on HyperShift the instance
// profile comes from the hosted cluster, not from the manifest.

export const AMI_FAMILIES = ['AL2', 'AL2023', 'Bottlerocket', 'Custom', 'Windows2019', 'Windows2022', 'Windows2025'] as const;
export type AmiFamily = (typeof AMI_FAMILIES)[number];

const VOLUME_SIZE = /^[1-9][0-9]*(Gi|G|Ti|T)$/;

const blockDeviceMappingSchema = z.strictObject({
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
      volumeInitializationRate: z.number().int().min(100).max(300).optional(),
      volumeSize: z.string().regex(VOLUME_SIZE, { error: 'must be a size in Gi, G, Ti or T, e.g. 120Gi' }).optional(),
      volumeType: z.enum(['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3']).optional(),
    })
    .optional(),
});

const blockDeviceMappingsSchema = z
  .array(blockDeviceMappingSchema)
  .max(50)
  .superRefine((mappings, ctx) => {
    const roots = mappings.flatMap((m, index) => (m.rootVolume === true ? [index] : []));
    const second = roots[1];
    if (second !== undefined) {
      reportIssue(ctx, {
        path: [second, 'rootVolume'],
        message: `more than one block device mapping is the root volume (indexes ${roots.join(', ')})`,
        fix: 'mark exactly one mapping rootVolume: true',
      });
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        message: 'must have only one blockDeviceMappings with rootVolume',
        rule: 'self.filter(x, has(x.rootVolume) ? x.rootVolume == true : false).size() <= 1',
      },
    ],
  });

function metadataOptionsSchema(defaultHopLimit: number) {
  return z
    .strictObject({
      httpEndpoint: z.enum(['enabled', 'disabled']).default('enabled'),
      httpProtocolIPv6: z.enum(['enabled', 'disabled']).default('disabled'),
      httpPutResponseHopLimit: z.number().int().min(1).max(64).default(defaultHopLimit),
      httpTokens: z.enum(['required', 'optional']).default('required'),
    })
    .prefault({});
}

const RESTRICTED_TAG_KEYS = ['karpenter.sh/nodepool', 'karpenter.sh/nodeclaim', 'karpenter.k8s.aws/ec2nodeclass', 'eks:eks-cluster-name'];

const tagsSchema = z
  .record(z.string(), z.string())
  .superRefine((tags, ctx) => {
    for (const key of Object.keys(tags)) {
      if (key === '' || RESTRICTED_TAG_KEYS.includes(key) || key.startsWith('kubernetes.io/cluster')) {
        reportIssue(ctx, {
          path: [key],
          message: `tag key ${JSON.stringify(key)} is restricted: the provisioner sets it`,
          fix: `remove it; restricted keys are ${RESTRICTED_TAG_KEYS.join(', ')} and kubernetes.io/cluster/*`,
        });
      }
    }
  })
  .meta({
    'x-kubernetes-validations': [
      { message: "empty tag keys aren't supported", rule: "self.all(k, k != '')" },
      { message: 'tag contains a restricted tag matching kubernetes.io/cluster/', rule: "self.all(k, !k.startsWith('kubernetes.io/cluster'))" },
      ...RESTRICTED_TAG_KEYS.map((key) => ({ message: `tag contains a restricted tag matching ${key}`, rule: `self.all(k, k != '${key}')` })),
    ],
  });

/** fieldPath: the API server blames instanceProfile, as refineSpec does, not the whole spec. */
const NOT_BOTH_ROLE_AND_PROFILE = {
  message: 'must specify at most one of role or instanceProfile',
  rule: '!(has(self.role) && has(self.instanceProfile))',
  fieldPath: '.instanceProfile',
};

const amiSelectorTermsSchema = selectorTermsSchema(amiSelectorTermSchema, 'amiSelectorTerms');

/** Field order here is the order `autonode convert` prints. */
function specShape<T extends z.ZodType>(amiSelectorTerms: T, defaultHopLimit: number) {
  return {
    amiFamily: z.enum(AMI_FAMILIES).optional(),
    amiSelectorTerms,
    subnetSelectorTerms: selectorTermsSchema(subnetSelectorTermSchema, 'subnetSelectorTerms'),
    securityGroupSelectorTerms: selectorTermsSchema(securityGroupSelectorTermSchema, 'securityGroupSelectorTerms'),
    userData: z.string().optional(),
    role: z.string().min(1).optional(),
    instanceProfile: z.string().min(1).optional(),
    tags: tagsSchema.optional(),
    kubelet: kubeletSchema.optional(),
    blockDeviceMappings: blockDeviceMappingsSchema.optional(),
    instanceStorePolicy: z.enum(['RAID0']).optional(),
    detailedMonitoring: z.boolean().optional(),
    associatePublicIPAddress: z.boolean().optional(),
    context: z.string().optional(),
    metadataOptions: metadataOptionsSchema(defaultHopLimit),
  };
}

function refineSpec(spec: { role?: string | undefined; instanceProfile?: string | undefined }, ctx: z.RefinementCtx): void {
  if (spec.role !== undefined && spec.instanceProfile !== undefined) {
    reportIssue(ctx, {
      path: ['instanceProfile'],
      message: 'role and instanceProfile are mutually exclusive',
      fix: 'keep one: role (Karpenter manages the instance profile) or instanceProfile (you manage it); on HyperShift omit both',
    });
  }
}

export const ec2NodeClassStatusSchema = z.object({
  subnets: z.array(z.object({ id: z.string(), zone: z.string(), zoneID: z.string().optional() })).optional(),
  securityGroups: z.array(z.object({ id: z.string(), name: z.string().optional() })).optional(),
  amis: z
    .array(
      z.object({
        id: z.string(),
        name: z.string().optional(),
        deprecated: z.boolean().optional(),
        requirements: z.array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() })).optional(),
      }),
    )
    .optional(),
  instanceProfile: z.string().optional(),
  conditions: z.array(conditionSchema).optional(),
});

export const EC2NodeClassSchema = z.strictObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1'),
  kind: z.literal('EC2NodeClass'),
  metadata: objectMetaSchema,
  spec: z
    .strictObject({
      ...specShape(amiSelectorTermsSchema, 1),
    })
    .superRefine(refineSpec),
  status: ec2NodeClassStatusSchema.optional(),
});
/** The internal model of an EC2NodeClass: karpenter.k8s.aws/v1 with every default applied. */
export type EC2NodeClass = z.output<typeof EC2NodeClassSchema>;

/**
 * v1 as served: amiSelectorTerms may be missing because a v1beta1 object (amiFamily
 * without terms) can be stored and read back as v1; normalisation derives the alias.
 */
export const EC2NodeClassV1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1'),
  kind: z.literal('EC2NodeClass'),
  metadata: objectMetaSchema,
  spec: z
    .strictObject({
      ...specShape(amiSelectorTermsSchema.optional(), 1),
    })
    .superRefine(refineSpec)
    .meta({ 'x-kubernetes-validations': [NOT_BOTH_ROLE_AND_PROFILE] }),
  status: ec2NodeClassStatusSchema.optional(),
});
export type EC2NodeClassV1Wire = z.output<typeof EC2NodeClassV1WireSchema>;

/** v1beta1 (seed 000): the same fields; its metadata hop-limit default was 2. */
export const EC2NodeClassV1Beta1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1beta1'),
  kind: z.literal('EC2NodeClass'),
  metadata: objectMetaSchema,
  spec: z
    .strictObject({
      ...specShape(amiSelectorTermsSchema.optional(), 2),
    })
    .superRefine(refineSpec)
    .meta({ 'x-kubernetes-validations': [NOT_BOTH_ROLE_AND_PROFILE] }),
  status: ec2NodeClassStatusSchema.optional(),
});
export type EC2NodeClassV1Beta1Wire = z.output<typeof EC2NodeClassV1Beta1WireSchema>;
