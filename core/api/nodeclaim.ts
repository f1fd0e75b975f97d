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

const storedRequirementSchema = z.object({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
  minValues: z.number().int().optional(),
});
const storedTaintSchema = z.object({ key: z.string(), value: z.string().optional(), effect: z.string() });

/**
 * A NodeClaim as the API server returns it — the one schema every reader of stored
 * NodeClaims uses (the lifecycle's activities, the cluster watcher). Read leniently: the
 * CRD (generated from the strict schemas above) already validated the spec, fields this
 * code does not use must not make a read fail, and objects written as v1beta1 are stored
 * as they were written (conversion: None).
 */
export const StoredNodeClaimSchema = z.object({
  metadata: z.object({
    name: z.string(),
    uid: z.string(),
    resourceVersion: z.string(),
    generation: z.number().int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z.object({
    requirements: z.array(storedRequirementSchema).default([]),
    taints: z.array(storedTaintSchema).optional(),
    startupTaints: z.array(storedTaintSchema).optional(),
    nodeClassRef: z.object({ name: z.string(), group: z.string().optional(), kind: z.string().optional() }),
    expireAfter: z.string().optional(),
    terminationGracePeriod: z.string().optional(),
    resources: z.object({ requests: z.record(z.string(), z.union([z.string(), z.number()])).optional() }).optional(),
  }),
  status: z
    .object({
      nodeName: z.string().optional(),
      providerID: z.string().optional(),
      imageID: z.string().optional(),
      capacity: z.record(z.string(), z.string()).optional(),
      allocatable: z.record(z.string(), z.string()).optional(),
      conditions: z.array(conditionSchema).optional(),
    })
    .optional(),
});
export type StoredNodeClaim = z.infer<typeof StoredNodeClaimSchema>;
