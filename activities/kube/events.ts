/**
 * Kubernetes Events as autonode writes them: core/v1 Events with source component
 * `karpenter`, so `kubectl get events -A --field-selector source=karpenter` (seed 002)
 * shows exactly what Karpenter's would. Used for CSR decisions and NodeClaim lifecycle.
 */
import { createHash } from 'node:crypto';
import { type CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { isConflict, isNotFound } from './errors';

export const EVENT_SOURCE_COMPONENT = 'karpenter';

export interface EventObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** absent for cluster-scoped objects (Node, NodeClaim, CSR): their Events go to `default` */
  namespace?: string;
  uid?: string;
}

export interface EventInput {
  involvedObject: EventObjectRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type RecordEvent = (event: EventInput) => Promise<void>;

export interface EventRecorderOptions {
  now?: () => Date;
  /**
   * Repeats of the same reason and message inside one window update one Event (count,
   * lastTimestamp) instead of creating another, like client-go's EventCorrelator does.
   */
  aggregationWindowMs?: number;
}

const DEFAULT_WINDOW_MS = 10 * 60_000;
const MAX_NAME = 253;
const UPDATE_ATTEMPTS = 5;

/**
 * The name is derived from the object, reason, message and time window, so a retried
 * activity that records the same Event again bumps its count instead of adding a twin.
 */
export function eventName(event: EventInput, at: Date, windowMs = DEFAULT_WINDOW_MS): string {
  const { involvedObject: o } = event;
  const bucket = Math.floor(at.getTime() / windowMs);
  const hash = createHash('sha256')
    .update([o.kind, o.namespace ?? '', o.name, o.uid ?? '', event.type, event.reason, event.message, String(bucket)].join('\u0000'))
    .digest('hex')
    .slice(0, 16);
  return `${o.name.slice(0, MAX_NAME - hash.length - 1)}.${hash}`;
}

export function createEventRecorder(core: CoreV1Api, options: EventRecorderOptions = {}): RecordEvent {
  const now = options.now ?? (() => new Date());
  const windowMs = options.aggregationWindowMs ?? DEFAULT_WINDOW_MS;

  return async function recordEvent(event) {
    const at = now();
    const name = eventName(event, at, windowMs);
    const namespace = event.involvedObject.namespace ?? 'default';
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: { ...event.involvedObject },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: EVENT_SOURCE_COMPONENT },
      reportingComponent: EVENT_SOURCE_COMPONENT,
      reportingInstance: EVENT_SOURCE_COMPONENT,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    try {
      await core.createNamespacedEvent({ namespace, body });
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    // A repeat inside the window: bump count. Optimistic concurrency on resourceVersion;
    // a concurrent writer makes us re-read, an Event deleted meanwhile is created afresh.
    for (let attempt = 1; ; attempt++) {
      try {
        const existing = await core.readNamespacedEvent({ name, namespace });
        await core.replaceNamespacedEvent({
          name,
          namespace,
          body: { ...existing, count: (existing.count ?? 1) + 1, lastTimestamp: at },
        });
        return;
      } catch (err) {
        if (isNotFound(err)) {
          await core.createNamespacedEvent({ namespace, body });
          return;
        }
        if (!isConflict(err) || attempt >= UPDATE_ATTEMPTS) throw err;
      }
    }
  };
}
