import { Context } from '@temporalio/activity';
import { type ClusterRef } from '../../core/lifecycle';
import { withCloudFailures } from '../cloud';
import { type ClusterResolver } from '../cluster';
import { NodeClaimStore } from '../kube/nodeclaims';

export interface GcSummary {
  terminated: string[];
  kept: number;
  skipped: number;
}

/**
 * Garbage collection of leaked instances for one cluster (karpenter.md §2.7): an instance
 * carrying all of autonode's tags whose NodeClaim is gone — or whose NodeClaim records a
 * different instance — is terminated. What it did is returned, and logged.
 */
export function createGcActivities(deps: { resolve: ClusterResolver }) {
  return {
    async collectGarbage(cluster: ClusterRef, options: { minAgeMs?: number } = {}): Promise<GcSummary> {
      const { guest, cloud } = await deps.resolve(cluster);
      const claims = new NodeClaimStore(guest);
      const result = await withCloudFailures(() =>
        cloud.collectLeakedInstances(async ({ nodeClaim, providerId }) => {
          const claim = await claims.get(nodeClaim);
          // a claim still launching has no providerID yet: its instance is not a leak
          return claim !== undefined && (claim.status?.providerID === undefined || claim.status.providerID === providerId);
        }, options),
      );
      const terminated = result.terminated.map((t) => t.providerId);
      if (terminated.length > 0) Context.current().log.warn(`cluster ${cluster.name}: terminated leaked instances ${terminated.join(', ')}`);
      return { terminated, kept: result.kept.length, skipped: result.skipped.length };
    },
  };
}

export type GcActivities = ReturnType<typeof createGcActivities>;
