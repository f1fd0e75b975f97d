// Nominations at registration (issue 14 finding 2): just before a node becomes schedulable,
// each pod the plan put on its claim gets the node as `status.nominatedNodeName`.
// kube-scheduler (v1.34) tries a pod's nominated node first and binds it there when every
// filter passes, and while filtering any other pod it counts the node's nominees as if bound
// — so the plan's pods keep their room instead of racing first come, first served.
//
// Why at registration: kube-scheduler clears a nomination on every failed attempt, and a node
// still carrying `karpenter.sh/unregistered` fails every pod. Nominated earlier, every pod
// would lose its nomination before the node could take it (docs/NOTES.md, measured).
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { PLANNED_PODS_ANNOTATION, parsePlannedPods } from '../../core/provisioning';
import { type KubeClients } from './clients';
import { isForbidden, isNotFound } from './errors';
import { type StoredNodeClaim } from './nodeclaims';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface Nominations {
  /** pods (`namespace/name`) now nominated to the node */
  nominated: string[];
  /** planned pods left alone: gone, terminating, bound, or nominated elsewhere (a preemption's) */
  skipped: string[];
  /** the identity may not patch pods/status (an older guest RBAC): nothing was nominated */
  forbidden: boolean;
}

/**
 * Nominates the claim's planned pods (PLANNED_PODS_ANNOTATION) to `nodeName`. Idempotent: a
 * pod already nominated there is counted as nominated and not patched again. A pod another
 * component nominated elsewhere keeps that nomination (kube-scheduler sets one for a
 * preemptor, whose victims are already going).
 */
export async function nominatePlannedPods(kube: KubeClients, claim: StoredNodeClaim, nodeName: string): Promise<Nominations> {
  const planned = parsePlannedPods(claim.metadata.annotations?.[PLANNED_PODS_ANNOTATION]);
  const result: Nominations = { nominated: [], skipped: [], forbidden: false };
  const limit = pLimit(16);
  await Promise.all(planned.map(({ namespace, name }) => limit(async () => {
    const key = `${namespace}/${name}`;
    if (result.forbidden) return;
    try {
      const pod = await kube.core.readNamespacedPod({ namespace, name });
      const current = pod.status?.nominatedNodeName ?? '';
      if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp !== undefined || (current !== '' && current !== nodeName)) {
        result.skipped.push(key);
        return;
      }
      if (current !== nodeName) await kube.core.patchNamespacedPodStatus({ namespace, name, body: { status: { nominatedNodeName: nodeName } } }, mergePatch);
      result.nominated.push(key);
    } catch (err) {
      if (isNotFound(err)) result.skipped.push(key);
      else if (isForbidden(err)) result.forbidden = true;
      else throw err;
    }
  })));
  result.nominated.sort();
  result.skipped.sort();
  return result;
}
