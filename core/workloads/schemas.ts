// The subset of core/v1, apps/v1 and batch/v1 that planning reads: pod templates,
// replica counts, Nodes. Unknown fields are ignored (z.object strips them); what is read
// is validated, never cast.
import { z } from 'zod';
import { podResourceSpecSchema } from '../scheduling/podrequests';
import { taintSchema, tolerationSchema } from '../scheduling/taints';
import { labelSelectorSchema, podAffinityTermSchema, requirementInputSchema, topologySpreadSchema } from '../packing/input';

const metadataSchema = z.object({
  name: z.string().min(1),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

const templateMetadataSchema = z.object({ labels: z.record(z.string(), z.string()).optional() }).optional();

const nodeSelectorTermSchema = z.object({ matchExpressions: z.array(requirementInputSchema).default([]) });
const podAffinitySchema = z.object({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTermSchema).default([]),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(z.object({ weight: z.number().int(), podAffinityTerm: podAffinityTermSchema })).default([]),
});

const portSchema = z.object({
  containerPort: z.number().int(),
  hostPort: z.number().int().optional(),
  protocol: z.string().optional(),
  hostIP: z.string().optional(),
});

export const podSpecSchema = podResourceSpecSchema.extend({
  containers: z.array(z.object({
    name: z.string().optional(),
    restartPolicy: z.string().optional(),
    resources: z.object({ requests: z.record(z.string(), z.union([z.string(), z.number()]).transform(String)).optional(), limits: z.record(z.string(), z.union([z.string(), z.number()]).transform(String)).optional() }).optional(),
    ports: z.array(portSchema).default([]),
  })).min(1),
  nodeName: z.string().optional(),
  nodeSelector: z.record(z.string(), z.string()).default({}),
  tolerations: z.array(tolerationSchema).default([]),
  topologySpreadConstraints: z.array(topologySpreadSchema.extend({ whenUnsatisfiable: topologySpreadSchema.shape.whenUnsatisfiable.default('DoNotSchedule') })).default([]),
  affinity: z.object({
    nodeAffinity: z.object({
      requiredDuringSchedulingIgnoredDuringExecution: z.object({ nodeSelectorTerms: z.array(nodeSelectorTermSchema) }).optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z.array(z.object({ weight: z.number().int(), preference: nodeSelectorTermSchema })).default([]),
    }).optional(),
    podAffinity: podAffinitySchema.optional(),
    podAntiAffinity: podAffinitySchema.optional(),
  }).optional(),
});
export type PodSpec = z.infer<typeof podSpecSchema>;

export const podSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Pod'),
  metadata: metadataSchema,
  spec: podSpecSchema,
  status: z.object({ phase: z.string().optional() }).optional(),
});

const templateSchema = z.object({ metadata: templateMetadataSchema, spec: podSpecSchema });

export const replicatedSchema = z.object({
  apiVersion: z.literal('apps/v1'),
  kind: z.enum(['Deployment', 'ReplicaSet', 'StatefulSet']),
  metadata: metadataSchema,
  spec: z.object({ replicas: z.number().int().nonnegative().default(1), template: templateSchema, selector: labelSelectorSchema.optional() }),
});

export const jobSchema = z.object({
  apiVersion: z.literal('batch/v1'),
  kind: z.literal('Job'),
  metadata: metadataSchema,
  spec: z.object({ parallelism: z.number().int().nonnegative().default(1), completions: z.number().int().nonnegative().default(1), template: templateSchema }),
});

export const daemonSetSchema = z.object({
  apiVersion: z.literal('apps/v1'),
  kind: z.literal('DaemonSet'),
  metadata: metadataSchema,
  spec: z.object({ template: templateSchema }),
});

export const nodeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Node'),
  metadata: metadataSchema,
  spec: z.object({ taints: z.array(taintSchema).default([]) }).default({ taints: [] }),
  status: z.object({
    allocatable: z.record(z.string(), z.union([z.string(), z.number()]).transform(String)).optional(),
    capacity: z.record(z.string(), z.union([z.string(), z.number()]).transform(String)).optional(),
  }).optional(),
});
