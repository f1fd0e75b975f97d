import { defaultCsrPolicy } from '../../core/csr/csr-policy';
import { type ClusterResolver } from '../cluster';
import { createCsrActivities } from '../kube/csr';
import { createEventRecorder } from '../kube/events';
import { type ReviewNodeCsrs } from './kube';

export interface NodeCsrReviewerOptions {
  /** where a refused approval is reported (the worker's logger); stderr by default */
  reportError?: (message: string) => void;
}

/**
 * Reviews every pending CSR that names one node, against what autonode knows of the
 * instance it launched for it. Decided CSRs are skipped, so this is safe to repeat.
 *
 * A decision the API server refuses to let autonode write (403) means its RBAC or a
 * signer's policy disagrees with the code: reported loudly once per CSR and worker — an
 * error log line and a Warning Event on the NodeClaim — and then never tried again by this
 * worker. Retrying cannot fix it, and one such CSR must not hold up the others.
 */
export function createNodeCsrReviewer(resolve: ClusterResolver, options: NodeCsrReviewerOptions = {}): ReviewNodeCsrs {
  const refused = new Set<string>();
  const reportError = options.reportError ?? ((message: string) => console.error(message));
  return async (cluster, input) => {
    const { guest } = await resolve(cluster);
    const recordEvent = createEventRecorder(guest.core);
    const csrs = createCsrActivities({ guest, recordEvent });
    const review = await csrs.reviewNodeCsrs({
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
      skip: refused,
    });
    for (const failure of review.failed.filter((f) => f.forbidden && !refused.has(f.name))) {
      refused.add(failure.name);
      const message = `autonode may not write its decision on CSR ${failure.name} for node ${input.nodeName} (NodeClaim ${input.nodeClaim}): ${failure.message}. Check autonode's RBAC (k8s/guest/rbac.yaml); this CSR is left alone from now on`;
      reportError(`[autonode] ${cluster.name}: ${message}`);
      await recordEvent({
        involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: input.nodeClaim },
        type: 'Warning',
        reason: 'CSRApprovalForbidden',
        message,
      });
    }
    return {
      approved: review.approved,
      denied: review.denied,
      failed: review.failed.map((f) => ({ name: f.name, forbidden: f.forbidden })),
    };
  };
}
