import { z } from 'zod';
import { kubeletSchema } from './kubelet';
import { nodeClassRefSchema, nodeClassRefV1Beta1WireSchema, nodeClassRefV1WireSchema } from './nodeclassref';
import { DEFAULT_EXPIRE_AFTER } from './nodepool';
import {
  conditionSchema,
  durationOrNeverSchema,
  durationSchema,
  objectMetaSchema,
  resourceListSchema,
  taintSchema,
} from './primitives';
import { requirementsSchema } from './requirements';

// karpenter.sh NodeClaim (karpenter.md §1.2). Its spec is immutable: a different node
// is a different NodeClaim.

const IMMUTABLE_SPEC = [{ message: 'spec is immutable', rule: 'self == oldSelf' }];

export const nodeClaimStatusSchema = z.object({
  nodeName: z.string().optional(),
  providerID: z.string().optional(),
  imageID: z.string().optional(),
  capacity: resourceListSchema.optional(),
  allocatable: resourceListSchema.optional(),
  conditions: z.array(conditionSchema).optional(),
  lastPodEventTime: z.string().optional(),
});

const nodeClaimSpecShape = {
  taints: z.array(taintSchema).optional(),
  startupTaints: z.array(taintSchema).optional(),
  requirements: requirementsSchema,
  resources: z.strictObject({ requests: resourceListSchema.optional() }).optional(),
  terminationGracePeriod: durationSchema.optional(),
};

export const NodeClaimSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodeClaim'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    ...nodeClaimSpecShape,
    nodeClassRef: nodeClassRefSchema,
    expireAfter: durationOrNeverSchema.default(DEFAULT_EXPIRE_AFTER),
  }),
  status: nodeClaimStatusSchema.optional(),
});
/** The internal model of a NodeClaim: karpenter.sh/v1 with every default applied. */
export type NodeClaim = z.output<typeof NodeClaimSchema>;

export const NodeClaimV1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodeClaim'),
  metadata: objectMetaSchema,
  spec: z
    .strictObject({
      ...nodeClaimSpecShape,
      nodeClassRef: nodeClassRefV1WireSchema,
      expireAfter: durationOrNeverSchema.default(DEFAULT_EXPIRE_AFTER),
      kubelet: kubeletSchema.optional(),
    })
    .meta({ 'x-kubernetes-validations': IMMUTABLE_SPEC }),
  status: nodeClaimStatusSchema.optional(),
});
export type NodeClaimV1Wire = z.output<typeof NodeClaimV1WireSchema>;

export const NodeClaimV1Beta1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1beta1'),
  kind: z.literal('NodeClaim'),
  metadata: objectMetaSchema,
  spec: z
    .strictObject({
      ...nodeClaimSpecShape,
      nodeClassRef: nodeClassRefV1Beta1WireSchema,
      expireAfter: durationOrNeverSchema.optional(),
      kubelet: kubeletSchema.optional(),
    })
    .meta({ 'x-kubernetes-validations': IMMUTABLE_SPEC }),
  status: nodeClaimStatusSchema.optional(),
});
export type NodeClaimV1Beta1Wire = z.output<typeof NodeClaimV1Beta1WireSchema>;
