import { type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { type PlannedBatch } from '../../core/provisioning';

/**
 * Every `planBatch` result with claims that a provisioner recorded in its histories — each
 * run of the workflow id, oldest first (a provisioner continues as new) — decoded from the
 * payloads, as an operator would read them in the Temporal UI.
 */
export async function recordedPlans(client: Client, workflowId: string): Promise<PlannedBatch[]> {
  const runs: { runId: string | undefined; start: number }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  if (runs.length === 0) runs.push({ runId: undefined, start: 0 }); // not yet visible: the latest run
  runs.sort((a, b) => a.start - b.start);
  const plans: PlannedBatch[] = [];
  for (const run of runs) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const activityOf = new Map<string, string>();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) activityOf.set(String(event.eventId), scheduled.activityType?.name ?? '');
      const done = event.activityTaskCompletedEventAttributes;
      const payload = done?.result?.payloads?.[0];
      if (done && payload && activityOf.get(String(done.scheduledEventId)) === 'planBatch') {
        const planned = defaultPayloadConverter.fromPayload<PlannedBatch>(payload);
        if (planned.claims.length > 0) plans.push(planned);
      }
    }
  }
  return plans;
}

export interface ActivityCall {
  type: string;
  /** the first argument, decoded */
  input: unknown;
  /** the attempt that completed (or is running); retries write no events of their own, only this number */
  attempt?: number;
  completed: boolean;
}

/** Every activity a workflow id scheduled, over all its runs, oldest first, with its input and the attempt that ran it. */
export async function activityCalls(client: Client, workflowId: string): Promise<ActivityCall[]> {
  const runs: { runId: string | undefined; start: number }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  if (runs.length === 0) runs.push({ runId: undefined, start: 0 });
  runs.sort((a, b) => a.start - b.start);
  const calls: ActivityCall[] = [];
  for (const run of runs) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const byScheduled = new Map<string, ActivityCall>();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) {
        const payload = scheduled.input?.payloads?.[0];
        const call: ActivityCall = { type: scheduled.activityType?.name ?? '', input: payload ? defaultPayloadConverter.fromPayload(payload) : undefined, completed: false };
        byScheduled.set(String(event.eventId), call);
        calls.push(call);
      }
      const started = event.activityTaskStartedEventAttributes;
      const startedCall = started ? byScheduled.get(String(started.scheduledEventId)) : undefined;
      if (started && startedCall) startedCall.attempt = started.attempt ?? undefined;
      const done = event.activityTaskCompletedEventAttributes;
      const doneCall = done ? byScheduled.get(String(done.scheduledEventId)) : undefined;
      if (doneCall) doneCall.completed = true;
    }
  }
  return calls;
}
