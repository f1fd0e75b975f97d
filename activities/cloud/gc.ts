/**
 * Leaked-instance garbage collection (karpenter.md §2.7): an instance launched for a
 * NodeClaim that no longer exists is terminated. Only instances carrying the cluster tag
 * AND every provisioner tag key are candidates, so the cluster's other machines (HyperShift
 * NodePools share the cluster tag) are never touched. The 30 s grace covers the window
 * between CreateFleet returning and the NodeClaim recording the instance.
 */
import { LIVE_INSTANCE_STATES, TagKeys } from './domain';
import { describeInstances, terminateInstance, toCloudInstance } from './instances';
import { formatProviderId } from './provider-id';
import { type Ec2Context } from './context';

export const GC_MIN_AGE_MS = 30_000;

export interface GcInstanceView {
  instanceId: string;
  zone: string;
  state: string;
  /** ISO-8601 */
  launchTime: string;
  tags: Record<string, string>;
}

export interface GcCandidate {
  providerId: string;
  instanceId: string;
  nodeClaim: string;
  nodePool: string;
}

export type GcSkipReason = 'not-provisioned-by-us' | 'not-live' | 'too-young';

/** Pure: which instances may be collected if their NodeClaim is gone. */
export function selectGcCandidates(
  instances: readonly GcInstanceView[],
  options: { clusterName: string; now: Date; minAgeMs?: number },
): { candidates: GcCandidate[]; skipped: { instanceId: string; reason: GcSkipReason }[] } {
  const minAgeMs = options.minAgeMs ?? GC_MIN_AGE_MS;
  const candidates: GcCandidate[] = [];
  const skipped: { instanceId: string; reason: GcSkipReason }[] = [];
  for (const instance of [...instances].sort((a, b) => a.instanceId.localeCompare(b.instanceId))) {
    const { tags } = instance;
    const nodeClaim = tags[TagKeys.nodeClaim];
    const nodePool = tags[TagKeys.nodePool];
    const ours =
      tags[TagKeys.cluster(options.clusterName)] === 'owned' && nodeClaim !== undefined && nodePool !== undefined && TagKeys.nodeClass in tags;
    if (!ours) {
      skipped.push({ instanceId: instance.instanceId, reason: 'not-provisioned-by-us' });
    } else if (!LIVE_INSTANCE_STATES.some((s) => s === instance.state)) {
      skipped.push({ instanceId: instance.instanceId, reason: 'not-live' });
    } else if (options.now.getTime() - Date.parse(instance.launchTime) <= minAgeMs) {
      skipped.push({ instanceId: instance.instanceId, reason: 'too-young' });
    } else {
      candidates.push({ providerId: formatProviderId(instance.zone, instance.instanceId), instanceId: instance.instanceId, nodeClaim, nodePool });
    }
  }
  return { candidates, skipped };
}

/** Port: does this NodeClaim still exist (by name, and owning this provider id)? */
export type NodeClaimExists = (ref: { nodeClaim: string; providerId: string }) => Promise<boolean>;

export interface GcResult {
  terminated: GcCandidate[];
  /** candidates whose NodeClaim still exists */
  kept: GcCandidate[];
  skipped: { instanceId: string; reason: GcSkipReason }[];
}

export async function collectLeakedInstances(ctx: Ec2Context, nodeClaimExists: NodeClaimExists, minAgeMs = GC_MIN_AGE_MS): Promise<GcResult> {
  const raw = await describeInstances(ctx, {
    filters: [
      { Name: `tag:${TagKeys.cluster(ctx.cluster.name)}`, Values: ['owned'] },
      { Name: 'tag-key', Values: [TagKeys.nodeClaim] },
      { Name: 'instance-state-name', Values: [...LIVE_INSTANCE_STATES] },
    ],
  });
  // The server-side filters narrow the query; selectGcCandidates re-checks every tag, so safety never rests on them.
  const views: GcInstanceView[] = raw.map((i) => ({
    instanceId: i.InstanceId,
    zone: i.Placement.AvailabilityZone,
    state: toCloudInstance(i)?.state ?? i.State.Name,
    launchTime: i.LaunchTime.toISOString(),
    tags: i.Tags,
  }));
  const { candidates, skipped } = selectGcCandidates(views, { clusterName: ctx.cluster.name, now: ctx.clock.now(), minAgeMs });
  const terminated: GcCandidate[] = [];
  const kept: GcCandidate[] = [];
  for (const candidate of candidates) {
    if (await nodeClaimExists({ nodeClaim: candidate.nodeClaim, providerId: candidate.providerId })) {
      kept.push(candidate);
      continue;
    }
    const outcome = await terminateInstance(ctx, candidate.providerId);
    if (outcome.outcome === 'terminating') terminated.push(candidate);
  }
  if (terminated.length > 0) ctx.logger.info({ terminated: terminated.map((t) => t.providerId) }, 'garbage-collected leaked instances');
  return { terminated, kept, skipped };
}
