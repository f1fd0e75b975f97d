import { type ClusterRef, type CsrPolicyConfig, type LaunchedInstance } from '../../core/lifecycle';
import { type NodeClaimCloudActivities } from './cloud';
import { type NodeClaimKubeActivities } from './kube';

/**
 * The activities of the first lifecycle shape (workflows/legacy/nodeclaim-v1.ts), under
 * their old names and positional signatures, as adapters onto today's typed sets. A run
 * started before the lifecycle became data replays through the v1 code and may still
 * schedule these until it continues as new (then it is a v2 run). Remove with the v1
 * workflow code once no v1 run is open (ADR 0005).
 */
export function createLegacyNodeClaimActivities(kube: NodeClaimKubeActivities, cloud: NodeClaimCloudActivities) {
  const snapshot = async (cluster: ClusterRef, name: string) => {
    const p = await kube.prepareClaim({ cluster, name });
    return {
      exists: p.exists,
      deleting: p.deleting,
      ...(p.uid !== undefined ? { uid: p.uid } : {}),
      ...(p.nodePool !== undefined ? { nodePool: p.nodePool } : {}),
      // v1 read these as duration strings
      ...(p.expireAfterMs !== undefined ? { expireAfter: `${p.expireAfterMs}ms` } : {}),
      ...(p.terminationGraceMs !== undefined ? { terminationGracePeriod: `${p.terminationGraceMs}ms` } : {}),
    };
  };
  const control = {
    prepareNodeClaim: snapshot,
    async observeNodeClaim(cluster: ClusterRef, name: string) {
      const s = await snapshot(cluster, name);
      if (!s.exists || s.uid === undefined) return { ...s, nodeExists: false, nodeDeleting: false };
      const seen = await kube.observeClaim({ cluster, name, uid: s.uid });
      return { ...s, nodeExists: seen.nodeExists, nodeDeleting: seen.nodeDeleting };
    },
    async reconcileRegistration(cluster: ClusterRef, input: { name: string; instance: LaunchedInstance; policy: CsrPolicyConfig }) {
      const r = await kube.reviewRegistration({ cluster, ...input });
      return { ...r, approved: [] as string[], denied: r.denied.map((d) => ({ name: d, check: '' })), failed: [] as { name: string; forbidden: boolean }[] };
    },
    async reconcileInitialization(cluster: ClusterRef, name: string, nodeName: string) {
      const r = await kube.reviewInitialization({ cluster, name, nodeName, policy: { bootstrapperUsernames: [], bootstrapperGroups: [] } });
      return { initialized: r.initialized, ...(r.blocker !== undefined ? { blocker: r.blocker } : {}) };
    },
    beginDrain: (cluster: ClusterRef, name: string, nodeName: string | undefined, reason: string) => kube.startDrain({ cluster, name, reason, ...(nodeName ? { nodeName } : {}) }),
    async drainNode(cluster: ClusterRef, name: string, nodeName: string, pastDeadline: boolean) {
      const r = await kube.drainPods({ cluster, name, nodeName, pastDeadline });
      return { done: r.done, remaining: r.blockers ? [r.blockers] : [], evicted: [] as string[], blockedByPdb: [] as string[], doNotDisrupt: [] as string[], forceDeleted: [] as string[] };
    },
    checkVolumesDetached: (cluster: ClusterRef, name: string, nodeName: string) => kube.checkVolumes({ cluster, name, nodeName }),
    finalizeNodeClaim: (cluster: ClusterRef, claim: { name: string; uid: string }, nodeName: string | undefined, reason: string, warning: boolean, providerId?: string) =>
      kube.finalizeClaim({ cluster, name: claim.name, uid: claim.uid, reason, warning, ...(nodeName ? { nodeName } : {}), ...(providerId ? { providerId } : {}) }),
  };
  const cloudSide = {
    async launchInstance(cluster: ClusterRef, name: string): Promise<LaunchedInstance> {
      await cloud.reconcileNodeClass({ cluster, name });
      // v1 keeps the result as its state's instance and never reports a partial fleet error
      const { exhaustedOfferings: _exhausted, ...instance } = await cloud.launchClaimInstance({ cluster, name });
      return instance;
    },
    terminateInstance: (cluster: ClusterRef, name: string, providerId: string) => cloud.terminateClaimInstance({ cluster, name, providerId }),
  };
  return { control, cloud: cloudSide };
}

type Legacy = ReturnType<typeof createLegacyNodeClaimActivities>;
/** The v1 workflow's view of its activities (one type for both queues, as it had). */
export type LegacyNodeClaimActivities = Legacy['control'] & Legacy['cloud'];
