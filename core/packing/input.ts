// The solver's input: plain JSON data (quantities as Kubernetes strings), so it can cross
// a worker-thread or activity boundary unchanged. `packingInputSchema` parses it at that
// boundary; `solve` takes the parsed type. Pod requests arrive already effective
// (init containers, sidecars and overhead folded in by core/scheduling podRequests).
import { z } from 'zod';
import { taintSchema, tolerationSchema } from '../scheduling/taints';

const resourceStrings = z.record(z.string(), z.string());

export const requirementInputSchema = z.object({
  key: z.string().min(1),
  operator: z.string(),
  values: z.array(z.string()).optional(),
  minValues: z.number().int().positive().optional(),
});
export type RequirementInput = z.infer<typeof requirementInputSchema>;

export const labelSelectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.object({
    key: z.string(),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: z.array(z.string()).optional(),
  })).optional(),
});
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

export const topologySpreadSchema = z.object({
  topologyKey: z.string().min(1),
  maxSkew: z.number().int().positive(),
  whenUnsatisfiable: z.enum(['DoNotSchedule', 'ScheduleAnyway']),
  labelSelector: labelSelectorSchema.optional(),
  minDomains: z.number().int().positive().optional(),
  matchLabelKeys: z.array(z.string()).optional(),
  nodeAffinityPolicy: z.enum(['Honor', 'Ignore']).optional(),
  nodeTaintsPolicy: z.enum(['Honor', 'Ignore']).optional(),
});
export type TopologySpread = z.infer<typeof topologySpreadSchema>;

export const podAffinityTermSchema = z.object({
  topologyKey: z.string().min(1),
  labelSelector: labelSelectorSchema.optional(),
  namespaces: z.array(z.string()).optional(),
  /** Only `{}` (all namespaces) can be evaluated offline: namespaces' labels are unknown. */
  namespaceSelector: labelSelectorSchema.optional(),
});
export type PodAffinityTerm = z.infer<typeof podAffinityTermSchema>;

const weightedPodAffinityTermSchema = z.object({ weight: z.number().int(), podAffinityTerm: podAffinityTermSchema });
const podAffinitySchema = z.object({
  required: z.array(podAffinityTermSchema).default([]),
  preferred: z.array(weightedPodAffinityTermSchema).default([]),
});

export const hostPortSchema = z.object({
  port: z.number().int().positive(),
  protocol: z.string().default('TCP'),
  hostIP: z.string().default(''),
});
export type HostPort = z.infer<typeof hostPortSchema>;

/** A pod already running or bound somewhere: it uses resources and counts for topology. */
export const boundPodSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  labels: z.record(z.string(), z.string()).default({}),
  requests: resourceStrings.default({}),
  hostPorts: z.array(hostPortSchema).default([]),
  /** Required anti-affinity of running pods repels incoming pods (symmetry). */
  antiAffinity: z.array(podAffinityTermSchema).default([]),
});
export type BoundPod = z.infer<typeof boundPodSchema>;

export const pendingPodSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  labels: z.record(z.string(), z.string()).default({}),
  requests: resourceStrings,
  nodeSelector: z.record(z.string(), z.string()).default({}),
  /** Required node affinity: terms are ORed, expressions inside a term ANDed. */
  requiredNodeAffinity: z.array(z.array(requirementInputSchema)).default([]),
  preferredNodeAffinity: z.array(z.object({ weight: z.number().int(), requirements: z.array(requirementInputSchema) })).default([]),
  tolerations: z.array(tolerationSchema).default([]),
  topologySpread: z.array(topologySpreadSchema).default([]),
  podAffinity: podAffinitySchema.default({ required: [], preferred: [] }),
  podAntiAffinity: podAffinitySchema.default({ required: [], preferred: [] }),
  hostPorts: z.array(hostPortSchema).default([]),
});
export type PendingPod = z.infer<typeof pendingPodSchema>;

export const daemonSetSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  requests: resourceStrings,
  nodeSelector: z.record(z.string(), z.string()).default({}),
  requiredNodeAffinity: z.array(z.array(requirementInputSchema)).default([]),
  tolerations: z.array(tolerationSchema).default([]),
  hostPorts: z.array(hostPortSchema).default([]),
});
export type DaemonSetInput = z.infer<typeof daemonSetSchema>;

export const offeringSchema = z.object({
  zone: z.string(),
  capacityType: z.string(),
  price: z.number().nonnegative(),
  available: z.boolean(),
});
export type OfferingInput = z.infer<typeof offeringSchema>;

export const instanceTypeInputSchema = z.object({
  name: z.string(),
  /** Labels every node of this type carries (arch, os, family…), not zone/capacity type. */
  labels: z.record(z.string(), z.string()),
  capacity: resourceStrings,
  /** Capacity minus kube/system reserved and eviction threshold; DaemonSets not yet subtracted. */
  allocatable: resourceStrings,
  offerings: z.array(offeringSchema),
});
export type InstanceTypeInput = z.infer<typeof instanceTypeInputSchema>;

export const nodePoolInputSchema = z.object({
  name: z.string(),
  weight: z.number().int().default(0),
  requirements: z.array(requirementInputSchema).default([]),
  /** Template labels: nodes carry them, pods may select on them. */
  labels: z.record(z.string(), z.string()).default({}),
  taints: z.array(taintSchema).default([]),
  /** Removed once the node is initialised, so they never block scheduling. */
  startupTaints: z.array(taintSchema).default([]),
  limits: resourceStrings.default({}),
  /** Capacity of the pool's current nodes and claims, counted against `limits`. */
  usage: resourceStrings.default({}),
  /** The types this pool can launch (its EC2NodeClass decides allocatable). */
  instanceTypes: z.array(instanceTypeInputSchema),
});
export type NodePoolInput = z.infer<typeof nodePoolInputSchema>;

export const existingNodeSchema = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()).default({}),
  taints: z.array(taintSchema).default([]),
  allocatable: resourceStrings,
  pods: z.array(boundPodSchema).default([]),
});
export type ExistingNodeInput = z.infer<typeof existingNodeSchema>;

export const inFlightClaimSchema = z.object({
  name: z.string(),
  nodePool: z.string(),
  requirements: z.array(requirementInputSchema).default([]),
  labels: z.record(z.string(), z.string()).default({}),
  taints: z.array(taintSchema).default([]),
  /** Known once launched; otherwise the smallest compatible type of its pool is assumed. */
  allocatable: resourceStrings.optional(),
  pods: z.array(boundPodSchema).default([]),
});
export type InFlightClaimInput = z.infer<typeof inFlightClaimSchema>;

export const packingInputSchema = z.object({
  pods: z.array(pendingPodSchema),
  daemonSets: z.array(daemonSetSchema).default([]),
  existingNodes: z.array(existingNodeSchema).default([]),
  inFlightClaims: z.array(inFlightClaimSchema).default([]),
  nodePools: z.array(nodePoolInputSchema),
  /** Epoch milliseconds; the solver has no clock. Part of the input so plans are reproducible. */
  now: z.number(),
  /** Instance-type options kept per new NodeClaim (the AWS provider sends at most 60 to CreateFleet). */
  maxInstanceTypes: z.number().int().positive().default(60),
});
export type PackingInput = z.infer<typeof packingInputSchema>;
/** What callers write: defaults optional. */
export type PackingInputDraft = z.input<typeof packingInputSchema>;
