import { z } from 'zod';
import { disruptionSchema, disruptionV1Beta1WireSchema, disruptionV1WireSchema } from './disruption';
import { reportIssue } from './issues';
import { kubeletSchema } from './kubelet';
import { restrictedLabelMapCelRules, restrictedLabelReason } from './labels';
import { nodeClassRefSchema, nodeClassRefV1Beta1WireSchema, nodeClassRefV1WireSchema } from './nodeclassref';
import {
  conditionSchema,
  durationOrNeverSchema,
  durationSchema,
  labelMapSchema,
  objectMetaSchema,
  resourceListSchema,
  taintSchema,
} from './primitives';
import { requirementsSchema } from './requirements';

// karpenter.sh NodePool (karpenter.md §1.1): the canonical schema and the two wire schemas.

export const DEFAULT_EXPIRE_AFTER = '720h';

/** Template labels: syntax plus the restricted domains (shared with v1alpha5 `spec.labels`). */
export const templateLabelsSchema = labelMapSchema
  .superRefine((labels, ctx) => {
    if (Object.keys(labels).length > 100) {
      reportIssue(ctx, { message: `${Object.keys(labels).length} labels exceed the limit of 100`, fix: 'remove labels' });
    }
    for (const key of Object.keys(labels)) {
      const reason = restrictedLabelReason(key, 'templateLabel');
      if (reason) reportIssue(ctx, { path: [key], message: reason, fix: 'use a label in your own domain, e.g. "example.com/team"' });
    }
  })
  .meta({ maxProperties: 100, 'x-kubernetes-validations': restrictedLabelMapCelRules('templateLabel') });

const templateMetadataSchema = z.strictObject({
  labels: templateLabelsSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

const templateSpecShape = {
  taints: z.array(taintSchema).optional(),
  startupTaints: z.array(taintSchema).optional(),
  requirements: requirementsSchema,
  terminationGracePeriod: durationSchema.optional(),
};

export const nodePoolStatusSchema = z.object({
  resources: resourceListSchema.optional(),
  nodes: z.number().int().optional(),
  nodeClassObservedGeneration: z.number().int().optional(),
  conditions: z.array(conditionSchema).optional(),
});

const nodePoolSpecShape = {
  limits: resourceListSchema.optional(),
  weight: z.number().int().min(1).max(100).optional(),
};

export const NodePoolSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodePool'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    template: z.strictObject({
      metadata: templateMetadataSchema.optional(),
      spec: z.strictObject({
        ...templateSpecShape,
        nodeClassRef: nodeClassRefSchema,
        expireAfter: durationOrNeverSchema.default(DEFAULT_EXPIRE_AFTER),
      }),
    }),
    disruption: disruptionSchema,
    ...nodePoolSpecShape,
  }),
  status: nodePoolStatusSchema.optional(),
});
/** The internal model of a NodePool: karpenter.sh/v1 with every default applied. */
export type NodePool = z.output<typeof NodePoolSchema>;

/** karpenter.sh/v1 as served and written: v1 fields and defaults, v1beta1 fields tolerated. */
export const NodePoolV1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodePool'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    template: z.strictObject({
      metadata: templateMetadataSchema.optional(),
      spec: z.strictObject({
        ...templateSpecShape,
        nodeClassRef: nodeClassRefV1WireSchema,
        expireAfter: durationOrNeverSchema.default(DEFAULT_EXPIRE_AFTER),
        /** v1beta1's kubelet settings; v1 moved them to EC2NodeClass.spec.kubelet. */
        kubelet: kubeletSchema.optional(),
      }),
    }),
    disruption: disruptionV1WireSchema,
    ...nodePoolSpecShape,
  }),
  status: nodePoolStatusSchema.optional(),
});
export type NodePoolV1Wire = z.output<typeof NodePoolV1WireSchema>;

/** karpenter.sh/v1beta1 as served and written (seeds 000 and 002), v1 fields tolerated. */
export const NodePoolV1Beta1WireSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1beta1'),
  kind: z.literal('NodePool'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    template: z.strictObject({
      metadata: templateMetadataSchema.optional(),
      spec: z.strictObject({
        ...templateSpecShape,
        nodeClassRef: nodeClassRefV1Beta1WireSchema,
        kubelet: kubeletSchema.optional(),
        expireAfter: durationOrNeverSchema.optional(),
      }),
    }),
    disruption: disruptionV1Beta1WireSchema,
    ...nodePoolSpecShape,
  }),
  status: nodePoolStatusSchema.optional(),
});
export type NodePoolV1Beta1Wire = z.output<typeof NodePoolV1Beta1WireSchema>;
