import pLimit from 'p-limit';
import { type EventInput, type RecordEvent } from './events';

/** Events written in the background, the way client-go's broadcaster writes them. */
export interface EventSink {
  /** queues an Event; never waits for the API server */
  emit(event: EventInput): void;
  /** resolves when everything queued so far is written (or dropped) */
  drained(): Promise<void>;
}

/**
 * Per-pod Events (Nominated, FailedScheduling) are information, not state: a batch must not
 * hold its worker for the seconds thousands of them take to write. Like client-go's event
 * broadcaster, the sink is asynchronous and lossy by design: at most `maxQueued` wait, the
 * rest are dropped and counted (`onDrop`), and a write that fails is reported, not retried.
 */
export function createEventSink(record: RecordEvent, options: { concurrency?: number; maxQueued?: number; onError?: (err: unknown) => void; onDrop?: (dropped: number) => void } = {}): EventSink {
  const limit = pLimit(options.concurrency ?? 16);
  const maxQueued = options.maxQueued ?? 50_000;
  let inFlight: Promise<void>[] = [];
  let dropped = 0;
  return {
    emit(event) {
      if (limit.pendingCount + limit.activeCount >= maxQueued) {
        dropped++;
        options.onDrop?.(dropped);
        return;
      }
      const write = limit(() => record(event)).catch((err: unknown) => options.onError?.(err));
      inFlight.push(write);
      if (inFlight.length > maxQueued) inFlight = inFlight.slice(-maxQueued);
    },
    async drained() {
      const waiting = inFlight;
      inFlight = [];
      await Promise.all(waiting);
    },
  };
}
