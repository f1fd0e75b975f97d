/**
 * Heartbeating around a step that may outlast an activity's heartbeat timeout: one beat now,
 * then one every `everyMs` until the step settles. The workflow can then give the step
 * minutes and still learn within seconds that its worker died, and the step learns from the
 * server's answer when it has been given up on (its cancellation signal).
 */
import { Context } from '@temporalio/activity';

export const HEARTBEAT_EVERY_MS = 5_000;

export async function beating<T>(stage: string, body: () => Promise<T>, everyMs = HEARTBEAT_EVERY_MS): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat({ stage });
  const beat = setInterval(() => ctx.heartbeat({ stage }), everyMs);
  try {
    return await body();
  } finally {
    clearInterval(beat);
  }
}
