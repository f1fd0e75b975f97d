import { StorageV1Api } from '@kubernetes/client-node';
import { z } from 'zod';
import { type KubeClients } from './clients';
import { isNotFound, isTooManyRequests } from './errors';

export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
const CRITICAL_PRIORITY_CLASSES = new Set(['system-cluster-critical', 'system-node-critical']);

/** Karpenter's eviction order: each tier is drained before the next is touched. */
export const DRAIN_TIERS = ['non-critical', 'non-critical-daemonset', 'critical', 'critical-daemonset'] as const;
export type DrainTier = (typeof DRAIN_TIERS)[number];

export interface DrainProgress {
  /** pods still on the node that the drain waits for (finished and mirror pods excluded) */
  remaining: string[];
  tier?: DrainTier;
  evicted: string[];
  /** eviction refused by a PodDisruptionBudget (429): retried on the next pass */
  blockedByPdb: string[];
  /** do-not-disrupt pods waiting for the grace deadline */
  doNotDisrupt: string[];
  /** deleted because the termination grace period has passed */
  forceDeleted: string[];
  done: boolean;
}

/**
 * The part of a Pod the drain reads. Every pod the API lists has a name and a namespace;
 * parsing says so once instead of asserting it at each eviction and deletion, and a pod
 * without them fails the pass (the activity retries) rather than evicting `undefined`.
 * Timestamps arrive as Dates from the client's deserializer, as strings from raw JSON.
 */
const DrainPodSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    annotations: z.record(z.string(), z.string()).nullish(),
    ownerReferences: z.array(z.object({ kind: z.string() })).nullish(),
    deletionTimestamp: z.union([z.date(), z.string()]).nullish(),
  }),
  spec: z.object({ priorityClassName: z.string().nullish() }).nullish(),
  status: z.object({ phase: z.string().nullish() }).nullish(),
});
type DrainPod = z.infer<typeof DrainPodSchema>;

const podKey = (p: DrainPod) => `${p.metadata.namespace}/${p.metadata.name}`;
const isDaemonSetPod = (p: DrainPod) => p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet') ?? false;
const isCritical = (p: DrainPod) => CRITICAL_PRIORITY_CLASSES.has(p.spec?.priorityClassName ?? '');
const isMirror = (p: DrainPod) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined;
const isFinished = (p: DrainPod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

function tierOf(p: DrainPod): DrainTier {
  if (isCritical(p)) return isDaemonSetPod(p) ? 'critical-daemonset' : 'critical';
  return isDaemonSetPod(p) ? 'non-critical-daemonset' : 'non-critical';
}

/**
 * One idempotent drain pass over a node (the workflow calls it again with backoff until
 * `done`). Pods go through the Eviction API so PodDisruptionBudgets hold; do-not-disrupt
 * pods are left alone until the deadline; past the deadline (terminationGracePeriod)
 * everything left is deleted. Only the first tier with pods is evicted in a pass.
 */
export async function drainPass(kube: KubeClients, nodeName: string, options: { pastDeadline: boolean }): Promise<DrainProgress> {
  const listed = await kube.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
  const pods = z.array(DrainPodSchema).parse(listed.items).filter((p) => !isMirror(p) && !isFinished(p));
  const progress: DrainProgress = { remaining: pods.map(podKey).sort(), evicted: [], blockedByPdb: [], doNotDisrupt: [], forceDeleted: [], done: pods.length === 0 };
  if (progress.done) return progress;

  if (options.pastDeadline) {
    for (const pod of pods) {
      try {
        await kube.core.deleteNamespacedPod({ name: pod.metadata.name, namespace: pod.metadata.namespace, gracePeriodSeconds: 0 });
        progress.forceDeleted.push(podKey(pod));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return progress;
  }

  const tier = DRAIN_TIERS.find((t) => pods.some((p) => tierOf(p) === t));
  if (tier) progress.tier = tier;
  for (const pod of pods.filter((p) => tierOf(p) === tier)) {
    if (pod.metadata.deletionTimestamp) continue; // already going
    if (pod.metadata.annotations?.[DO_NOT_DISRUPT_ANNOTATION] === 'true') {
      progress.doNotDisrupt.push(podKey(pod));
      continue;
    }
    const { name, namespace } = pod.metadata;
    try {
      await kube.core.createNamespacedPodEviction({ name, namespace, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } } });
      progress.evicted.push(podKey(pod));
    } catch (err) {
      if (isTooManyRequests(err)) progress.blockedByPdb.push(podKey(pod));
      else if (!isNotFound(err)) throw err;
    }
  }
  return progress;
}

/** VolumeAttachments still naming this node: the instance may not go before they detach. */
export async function attachedVolumes(kube: KubeClients, nodeName: string): Promise<string[]> {
  const storage = kube.make(StorageV1Api);
  const attachments = await storage.listVolumeAttachment();
  return attachments.items
    .filter((a) => a.spec.nodeName === nodeName)
    .map((a) => a.metadata?.name ?? '')
    .sort();
}
