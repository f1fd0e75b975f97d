import { z } from 'zod';
import { labelSelectorSchema } from '../../core/packing/input';

// What the disruption round reads of pods, Nodes and PodDisruptionBudgets, parsed from the
// lists as the API server sent them (KubeClients.getJson): the typed clients' models cost
// more CPU than the round itself at a few thousand pods. Every field the API server always
// writes in this shape; a list that does not parse fails the round rather than leaving a
// pod out (a node whose pods were dropped would look empty, and be removed).

const MetaSchema = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  deletionTimestamp: z.string().optional(),
  ownerReferences: z.array(z.object({ kind: z.string() })).optional(),
});

export const RoundPodSchema = z.object({
  metadata: MetaSchema,
  spec: z.object({ nodeName: z.string().optional(), priority: z.number().optional() }).optional(),
  status: z.object({ phase: z.string().optional() }).optional(),
});
export type RoundPod = z.infer<typeof RoundPodSchema>;

export const RoundNodeSchema = z.object({
  metadata: MetaSchema,
  spec: z.object({ taints: z.array(z.object({ key: z.string() })).optional() }).optional(),
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() }).optional(),
});
export type RoundNode = z.infer<typeof RoundNodeSchema>;

export const RoundPdbSchema = z.object({
  metadata: z.object({ name: z.string(), namespace: z.string() }),
  spec: z.object({ selector: labelSelectorSchema.optional() }).optional(),
  status: z.object({ disruptionsAllowed: z.number().optional() }).optional(),
});
export type RoundPdb = z.infer<typeof RoundPdbSchema>;
