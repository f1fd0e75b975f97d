/**
 * The part of HyperShift's HostedCluster (hypershift.openshift.io/v1beta1) that autonode
 * reads and writes. Parsing is deliberately lenient about *presence*: every field autonode
 * needs is optional here, so that a missing one becomes a problem with a reason naming the
 * field (validate.ts) rather than a generic parse error. Types are still checked; unknown
 * fields are dropped (autonode never writes a HostedCluster back from this model).
 *
 * k8s/management/hostedcluster-crd.yaml is the same subset as a CRD for the local stack;
 * test/integration/hostedcluster-crd.test.ts checks the two agree on the real API server.
 */
import { z } from 'zod';
import { conditionSchema } from '../api/primitives';

export const HOSTED_CLUSTER_API = {
  group: 'hypershift.openshift.io',
  version: 'v1beta1',
  kind: 'HostedCluster',
  plural: 'hostedclusters',
} as const;

/** The conditions autonode owns on a HostedCluster (HyperShift's names). */
export const AUTONODE_CONDITION_TYPES = {
  enabled: 'AutoNodeEnabled',
  progressing: 'AutoNodeProgressing',
  degraded: 'AutoNodeDegraded',
} as const;

/**
 * The SQS queue EventBridge delivers the cluster's interruption events to (Karpenter's
 * `--interruption-queue`). HyperShift's API has no field for it (AutoNode leaves interruption
 * handling off), so autonode reads its own annotation; `autonode enable --interruption-queue`
 * sets it. Absent: no interruption handling for the cluster.
 */
export const INTERRUPTION_QUEUE_ANNOTATION = 'autonode.io/interruption-queue';

/** The OpenShift "AutoNode via Karpenter" API, as HyperShift serves it. */
export const AutoNodeSpecSchema = z.object({
  provisionerConfig: z
    .object({
      name: z.string().optional(),
      karpenter: z
        .object({
          platform: z.string().optional(),
          aws: z.object({ roleARN: z.string().optional() }).optional(),
        })
        .optional(),
    })
    .optional(),
});
export type AutoNodeSpec = z.infer<typeof AutoNodeSpecSchema>;

/**
 * status.autoNode: what AutoNode runs for the cluster (what HyperShift reports for billing).
 * nodeCount: registered Nodes autonode launched; nodeClaimCount: NodeClaims in the guest,
 * launched or not; vCPUs: the vCPUs of those Nodes' instance types, summed.
 */
export const AutoNodeStatusSchema = z.object({
  nodeCount: z.number().int().min(0).optional(),
  nodeClaimCount: z.number().int().min(0).optional(),
  vCPUs: z.number().int().min(0).optional(),
});
export type AutoNodeStatus = z.infer<typeof AutoNodeStatusSchema>;

export const HostedClusterSchema = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().optional(),
    generation: z.number().int().optional(),
    resourceVersion: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z
    .object({
      infraID: z.string().optional(),
      release: z.object({ image: z.string().optional() }).optional(),
      platform: z
        .object({
          type: z.string().optional(),
          aws: z.object({ region: z.string().optional() }).optional(),
        })
        .optional(),
      autoNode: AutoNodeSpecSchema.optional(),
    })
    .optional(),
  status: z
    .object({
      conditions: z.array(conditionSchema).optional(),
      autoNode: AutoNodeStatusSchema.optional(),
    })
    .optional(),
});
export type HostedCluster = z.infer<typeof HostedClusterSchema>;
