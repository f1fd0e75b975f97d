/**
 * The Warning Event of a run of failed garbage-collection rounds. The watch workflow
 * decides when (once per run of failures, workflows/gc-failures.ts); this writes it in the
 * guest, on the control queue with the other Kubernetes activities.
 *
 * GC is about the whole cluster, which has no object of its own in the guest: its
 * `default` Namespace stands in, so the Event shows in `kubectl get events -n default`,
 * `kubectl describe namespace default` and the `source=karpenter` listing. Rejected: a
 * NodePool or NodeClaim as involvedObject — a leaked instance by definition has no claim,
 * and GC is not per pool.
 */
import { type ClusterRef } from '../../core/lifecycle';
import { type KubeClients } from '../kube/clients';
import { createEventRecorder, type EventObjectRef } from '../kube/events';

export const GC_FAILED_REASON = 'GarbageCollectionFailed';

export const GC_EVENT_OBJECT: EventObjectRef = { apiVersion: 'v1', kind: 'Namespace', name: 'default' };

/** Long AWS messages are cut: the status query keeps the whole one. */
const MAX_CAUSE_LENGTH = 600;

export function gcFailureEventMessage(cluster: ClusterRef, cause: string): string {
  const shown = cause.length > MAX_CAUSE_LENGTH ? `${cause.slice(0, MAX_CAUSE_LENGTH)}…` : cause;
  return `Collecting leaked instances of cluster ${cluster.name} failed: ${shown}. Every GC round retries; ` +
    `the cluster's watch workflow's status query shows the latest error and how many rounds failed in a row.`;
}

export interface GcFailureEventDeps {
  guestFor: (cluster: ClusterRef) => Promise<KubeClients>;
  now?: () => Date;
}

export function createGcFailureEventActivities(deps: GcFailureEventDeps) {
  return {
    /** Idempotent: a retry inside the recorder's window bumps the same Event's count. */
    async recordGcFailure(cluster: ClusterRef, failure: { message: string }): Promise<void> {
      const guest = await deps.guestFor(cluster);
      const recordEvent = createEventRecorder(guest.core, deps.now ? { now: deps.now } : {});
      await recordEvent({
        involvedObject: GC_EVENT_OBJECT,
        type: 'Warning',
        reason: GC_FAILED_REASON,
        message: gcFailureEventMessage(cluster, failure.message),
      });
    },
  };
}
