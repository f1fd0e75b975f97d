/**
 * Heartbeats: how the server learns within seconds that an activity's worker died (its
 * heartbeat timeout), instead of after the activity's whole start-to-close timeout, and how
 * an activity learns it has been given up on (its cancellation signal, from a beat's answer).
 *
 * One mechanism for every activity: `heartbeatingAll` makes each activity of a set beat every
 * few seconds for as long as it runs, with the step it is in (`stage`); `beating` names the
 * step around a part that may take long, and beats on its own when it runs outside such a set.
 */
import { Context } from '@temporalio/activity';

export const HEARTBEAT_EVERY_MS = 5_000;

/** What each running activity last said it was doing, and since when; beats carry it (the Temporal UI shows it). */
const stages = new WeakMap<Context, { stage: string; since: number; steps: { stage: string; ms: number }[] }>();

/** A running activity's beats say how long it has been in the step it is in (`for`, seconds). */
function details(ctx: Context, fallback: string): { stage: string; for?: number } {
  const at = stages.get(ctx);
  return at ? { stage: at.stage, for: Math.round((Date.now() - at.since) / 100) / 10 } : { stage: fallback };
}

/** An activity attempt that ran this long says, when it ends, how long each step took. */
export const SLOW_ACTIVITY_MS = 10_000;
/** Activities whose beats `heartbeatingAll` sends already. */
const beatenFor = new WeakSet<Context>();

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called directly, not as an activity (a unit test): nothing to beat to
  }
}

/** Records the running activity's step and beats now. */
export function heartbeatStage(stage: string): void {
  const ctx = current();
  if (!ctx) return;
  const at = Date.now();
  const was = stages.get(ctx);
  // the same step again (a claim created after another) goes on; the last 30 steps are kept
  if (was?.stage !== stage) stages.set(ctx, { stage, since: at, steps: was ? [...was.steps, { stage: was.stage, ms: at - was.since }].slice(-30) : [] });
  ctx.heartbeat(details(ctx, stage));
}

/**
 * Runs `body` as step `stage`: one beat now, then one every `everyMs` until the step settles
 * (inside `heartbeatingAll`, whose beats carry the stage, only the beat now).
 */
export async function beating<T>(stage: string, body: () => Promise<T>, everyMs = HEARTBEAT_EVERY_MS): Promise<T> {
  const ctx = current();
  if (!ctx) return body();
  heartbeatStage(stage);
  if (beatenFor.has(ctx)) return body();
  const beat = setInterval(() => ctx.heartbeat(details(ctx, stage)), everyMs);
  try {
    return await body();
  } finally {
    clearInterval(beat);
  }
}

/**
 * Each activity of `activities`, beating every `everyMs` with its last stage until it settles.
 * The workflow's proxy can then set a heartbeat timeout of seconds whatever the activity's
 * start-to-close timeout: a killed worker's attempt is retried elsewhere that soon.
 */
export function heartbeatingAll<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T, everyMs = HEARTBEAT_EVERY_MS, slowMs = SLOW_ACTIVITY_MS): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const ctx = current();
      if (!ctx) return activity(...args);
      beatenFor.add(ctx);
      const started = Date.now();
      stages.set(ctx, { stage: 'start', since: started, steps: [] });
      ctx.heartbeat(details(ctx, 'start'));
      const beat = setInterval(() => ctx.heartbeat(details(ctx, 'start')), everyMs);
      let outcome = 'failed';
      try {
        const result = await activity(...args);
        outcome = 'completed';
        return result;
      } finally {
        clearInterval(beat);
        const took = Date.now() - started;
        // where a slow attempt's time went (a retried one's too: the next attempt is a new line)
        if (took >= slowMs) ctx.log[outcome === 'failed' ? 'warn' : 'info'](`${name} attempt ${ctx.info.attempt} ${outcome} after ${(took / 1000).toFixed(1)} s`, { steps: stepsOf(ctx) });
      }
    };
  }
  return wrapped as T;
}

/** Each step of a running activity and its seconds, the one it is in last: `start 0.0 s, read 1.2 s, solve 8.0 s`. */
function stepsOf(ctx: Context): string {
  const at = stages.get(ctx);
  if (!at) return '';
  return [...at.steps, { stage: at.stage, ms: Date.now() - at.since }].map((s) => `${s.stage} ${(s.ms / 1000).toFixed(1)} s`).join(', ');
}
