import { defaultCsrPolicy } from '../../core/nodes/csr-policy';
import { type ClusterResolver } from '../cluster';
import { createCsrActivities } from '../kube/csr';
import { createEventRecorder } from '../kube/events';
import { type ReviewNodeCsrs } from './activities';

/**
 * Reviews every pending CSR that names one node, against what autonode knows of the
 * instance it launched for it. Decided CSRs are skipped, so this is safe to repeat.
 */
export function createNodeCsrReviewer(resolve: ClusterResolver): ReviewNodeCsrs {
  return async (cluster, input) => {
    const { guest } = await resolve(cluster);
    const csrs = createCsrActivities({ guest, recordEvent: createEventRecorder(guest.core) });
    const approved: string[] = [];
    const denied: { name: string; check: string }[] = [];
    for (const { csr, state } of await csrs.findCsrsForNode(input.nodeName)) {
      if (state.phase !== 'pending') continue;
      const review = await csrs.reviewNodeCsr({
        csrName: csr.name,
        node: {
          nodeName: input.nodeName,
          instanceId: input.instance.instanceId,
          nodeClaimName: input.nodeClaim,
          dnsNames: [input.instance.privateDnsName],
          ipAddresses: input.instance.privateIpAddresses,
          launchedAt: Date.parse(input.instance.launchTime),
          registered: input.registered,
        },
        policy: { ...defaultCsrPolicy, bootstrapperUsernames: input.policy.bootstrapperUsernames, bootstrapperGroups: input.policy.bootstrapperGroups },
      });
      if (review.kind === 'approve' && review.applied) approved.push(csr.name);
      if (review.kind === 'deny' && review.applied) denied.push({ name: csr.name, check: review.check });
    }
    return { approved, denied };
  };
}
