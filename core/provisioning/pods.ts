import { z } from 'zod';

// Which pods the provisioner plans for (Karpenter's `IsProvisionable`, reference §1.6):
// not bound, marked Unschedulable by kube-scheduler, not finished, not being deleted,
// not a DaemonSet or mirror pod. Read from the pod objects as the API server returns them.

const PodStatusSchema = z.object({
  metadata: z.object({
    name: z.string(),
    namespace: z.string().optional(),
    deletionTimestamp: z.unknown().optional(),
    annotations: z.record(z.string(), z.string()).nullish(),
    ownerReferences: z.array(z.object({ kind: z.string(), controller: z.boolean().nullish() })).nullish(),
  }),
  spec: z.object({ nodeName: z.string().nullish() }).optional(),
  status: z
    .object({
      phase: z.string().nullish(),
      conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string().nullish() })).nullish(),
    })
    .optional(),
});

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

export type PodDisposition =
  /** the provisioner plans capacity for it */
  | 'provisionable'
  /** bound to a node (or nominated by kube-scheduler): counts against that node's capacity */
  | 'bound'
  /** none of the provisioner's business (finished, deleting, DaemonSet, mirror, not yet judged by kube-scheduler) */
  | 'ignored';

export function podDisposition(pod: unknown): PodDisposition {
  const parsed = PodStatusSchema.safeParse(pod);
  if (!parsed.success) return 'ignored';
  const { metadata, spec, status } = parsed.data;
  if (status?.phase === 'Succeeded' || status?.phase === 'Failed') return 'ignored';
  if (spec?.nodeName) return metadata.deletionTimestamp ? 'ignored' : 'bound';
  if (metadata.deletionTimestamp) return 'ignored';
  if (metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) return 'ignored';
  if (metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet')) return 'ignored';
  const scheduled = status?.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? 'provisionable' : 'ignored';
}

export const podKey = (pod: { metadata: { namespace?: string | undefined; name: string } }) => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
