import {
  ActivityFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from './activity-options';
import type { DisruptionActivities } from '../activities/disruption/activity';
import type { HandledInterruptions, InterruptionActivities, InterruptionQueueActivities, ReplacementJob } from '../activities/interruption/activity';
import type { ProvisionerActivities } from '../activities/provisioner/activity';
import { type UnavailableSpotOffering } from '../core/interruption/actions';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, provisionerWorkflowId, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { batchToCreate } from '../core/provisioning/batch';
import { offeringsUnavailableSignal } from './provisioner';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';
import { declareVersioningBehavior } from './versioning';

export { interruptionWorkflowId } from '../core/lifecycle';

export interface InterruptionStatus {
  cluster: string;
  queue: string;
  polls: number;
  /** messages received and deleted over the workflow's life (all runs) */
  received: number;
  deleted: number;
  /** messages by kind (`unparseable` included) */
  byKind: Record<string, number>;
  /** the last messages handled, newest last */
  recent: { at: string; messageId: string; kind: string; claims: { name: string; action: string }[]; unmatched: number }[];
  /** replacement-first of spot-interrupted claims, in progress */
  replacing: Record<string, { node: string; step: 'cordoning' | 'planning replacements' | 'launching replacements' | 'draining'; drainBy: string; replacements?: string[]; problem?: string }>;
  /** replacement-firsts finished, newest last: what was launched, and why the drain began when it did */
  replaced: { nodeClaim: string; replacements: string[]; drainedAt: string; because: string }[];
  /** the last round that failed (SQS or the API server away); its messages come back from SQS */
  lastError?: { at: string; message: string };
}

export const interruptionStatusQuery = defineQuery<InterruptionStatus>('status');

export interface InterruptionWorkflowInput {
  cluster: ClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** the SQS queue EventBridge delivers the cluster's interruption events to (Karpenter's --interruption-queue) */
  queue: string;
  /**
   * A spot warning gives two minutes: a replacement is waited for until this long before
   * they end, then the drain begins whatever the replacement's state (default 60s).
   */
  drainReserve?: string;
  /** how long a failed round waits before the next poll (default 10s) */
  errorBackoff?: string;
  carried?: Pick<InterruptionStatus, 'polls' | 'received' | 'deleted' | 'byKind' | 'recent' | 'replaced'>;
}

const RECENT = 20;

// The long poll: 20 s on SQS, heartbeating every 5 s; a dead cloud worker is noticed in 30 s.
const queueActivities = (queue: string) =>
  proxyActivities<InterruptionQueueActivities>({
    taskQueue: queue,
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
  });

const controlActivities = (queue: string) =>
  proxyActivities<InterruptionActivities & Pick<DisruptionActivities, 'replacementsState'>>({
    taskQueue: queue,
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
  });

// a drain that must begin is retried for as long as it takes (the API server may be away)
const drainActivities = (queue: string) =>
  proxyActivities<InterruptionActivities>({
    taskQueue: queue,
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
  });

// the replacement plan is a packing batch, as the disruption workflow's
const packingActivities = (queue: string) =>
  proxyActivities<ProvisionerActivities>({
    taskQueue: queue,
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
  });

const failureMessage = (err: unknown): string => (err instanceof ActivityFailure && err.cause ? err.cause.message : err instanceof Error ? err.message : String(err));

/**
 * One per cluster that names an interruption queue (`autonode/<cluster>/interruption`,
 * started by the enablement): polls the queue and acts on what EventBridge delivered
 * (core/interruption): a rebalance recommendation is an Event; a health event's scheduled
 * change and an instance stopping or terminating delete the claim (its workflow cordons,
 * drains and terminates); a spot interruption also holds its offering unavailable for the
 * provisioner, and — when the two-minute warning leaves time — launches the node's
 * replacement first and drains when it is initialized or at the deadline. Every message
 * is deleted once handled; a round that fails leaves its messages for SQS to deliver again.
 */
export async function interruptionWorkflow(input: InterruptionWorkflowInput): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
  const sqs = queueActivities(taskQueues.cloud);
  const control = controlActivities(taskQueues.control);
  const drain = drainActivities(taskQueues.control);
  const packing = packingActivities(taskQueues.packing);
  const drainReserveMs = durationToMs(input.drainReserve ?? '60s') ?? 60_000;
  const backoffMs = durationToMs(input.errorBackoff ?? '10s') ?? 10_000;
  const status: InterruptionStatus = {
    cluster: cluster.name,
    queue: input.queue,
    polls: input.carried?.polls ?? 0,
    received: input.carried?.received ?? 0,
    deleted: input.carried?.deleted ?? 0,
    byKind: { ...input.carried?.byKind },
    recent: [...(input.carried?.recent ?? [])],
    replacing: {},
    replaced: [...(input.carried?.replaced ?? [])],
  };
  setHandler(interruptionStatusQuery, () => status);
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Polling' },
  ]);
  const stamp = () => new Date().toISOString();

  /** The provisioner holds the offerings unavailable (its ICE memory, 3 minutes); no provisioner, no one to tell. */
  async function tellProvisioner(offerings: UnavailableSpotOffering[]): Promise<void> {
    try {
      // replan: false — the pods are still running; they are planned when they are drained
      await getExternalWorkflowHandle(provisionerWorkflowId(cluster.name)).signal(offeringsUnavailableSignal, offerings, { replan: false });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.info('no provisioner to tell about the interrupted offerings', { cluster: cluster.name, offerings: offerings.map((o) => `${o.instanceType}/${o.zone}`).join(',') });
    }
  }

  /**
   * Replacement first: the node takes no new pods, its replacement is planned (without the
   * interrupted offering) and launched, and its claim deleted once the replacement is
   * initialized — or at the deadline, whatever happened meanwhile: the drain must begin
   * before EC2 takes the instance.
   */
  async function replaceFirst(job: ReplacementJob): Promise<void> {
    const entry: InterruptionStatus['replacing'][string] = { node: job.node, step: 'cordoning', drainBy: new Date(job.drainBy).toISOString() };
    status.replacing[job.nodeClaim] = entry;
    let because = 'nothing to launch: its pods fit elsewhere (or it runs none)';
    try {
      // the deadline holds whatever waits inside: a busy packing queue, a slow launch
      await CancellationScope.withTimeout(Math.max(1, job.drainBy - Date.now()), async () => {
        await control.cordonInterrupted({ cluster, nodeClaim: job.nodeClaim, node: job.node, drainBy: job.drainBy });
        entry.step = 'planning replacements';
        const planned = await packing.planReplacements({ cluster, taskQueues, batchId: uuid4(), nodes: [job.node], unavailable: job.offering ? [job.offering] : [] });
        const names = planned.claims.map((c) => c.name);
        if (names.length === 0) return;
        entry.step = 'launching replacements';
        entry.replacements = names;
        because = 'the deadline came before the replacements were initialized';
        await packing.createClaims({ cluster, taskQueues, ...batchToCreate(planned) });
        for (;;) {
          const state = await control.replacementsState({ cluster, names });
          if (state.gone.length > 0) {
            because = entry.problem = `replacement(s) ${state.gone.join(', ')} failed`;
            return;
          }
          if (state.initialized.length === names.length) {
            because = 'the replacements were initialized';
            return;
          }
          await sleep('2 seconds');
        }
      });
    } catch (err) {
      // the workflow itself cancelled: nothing more to do here
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      // the deadline, or a step that failed: either way the drain must begin now, before the instance goes
      if (isCancellation(err)) because = entry.step === 'launching replacements' ? because : 'the deadline came while the replacement was being planned';
      else because = entry.problem = failureMessage(err);
    }
    entry.step = 'draining';
    await drain.drainInterrupted({ cluster, nodeClaim: job.nodeClaim, kind: job.kind });
    status.replaced = [...status.replaced, { nodeClaim: job.nodeClaim, replacements: entry.replacements ?? [], drainedAt: stamp(), because }].slice(-RECENT);
  }

  function startReplacement(job: ReplacementJob): void {
    if (status.replacing[job.nodeClaim] !== undefined) return;
    void replaceFirst(job)
      .catch((err: unknown) => {
        if (isCancellation(err)) return;
        status.lastError = { at: stamp(), message: `replacing ${job.nodeClaim}: ${failureMessage(err)}` };
      })
      .finally(() => void delete status.replacing[job.nodeClaim]);
  }

  function remember(handled: HandledInterruptions): void {
    const at = stamp();
    for (const o of handled.outcomes) status.recent.push({ at, ...o });
    status.recent = status.recent.slice(-RECENT);
  }

  for (;;) {
    let received;
    try {
      received = (await sqs.receiveInterruptionMessages({ cluster, queue: input.queue })).messages;
    } catch (err) {
      if (isCancellation(err)) throw err;
      // the queue missing, a permission missing, SQS away: say so, and poll again later
      status.lastError = { at: stamp(), message: failureMessage(err) };
      log.warn('interruption queue poll failed', { cluster: cluster.name, queue: input.queue, error: status.lastError.message });
      await sleep(backoffMs);
      continue;
    }
    status.polls++;
    if (received.length > 0) {
      status.received += received.length;
      for (const m of received) status.byKind[m.message.kind] = (status.byKind[m.message.kind] ?? 0) + 1;
      let handled: HandledInterruptions | undefined;
      try {
        handled = await control.handleInterruptionMessages({
          cluster,
          messages: received.map(({ receipt: _receipt, ...m }) => m),
          replacing: Object.keys(status.replacing),
          drainReserveMs,
        });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // not deleted: SQS delivers them again once their visibility timeout (20 s) is over
        status.lastError = { at: stamp(), message: failureMessage(err) };
        log.warn('interruption messages not handled; SQS delivers them again', { cluster: cluster.name, error: status.lastError.message });
      }
      if (handled) {
        remember(handled);
        if (handled.offerings.length > 0) await tellProvisioner(handled.offerings);
        for (const job of handled.replace) startReplacement(job);
        try {
          const done = await sqs.deleteInterruptionMessages({ cluster, queue: input.queue, messages: received.map(({ messageId, receipt }) => ({ messageId, receipt })) });
          status.deleted += done.deleted;
        } catch (err) {
          if (isCancellation(err)) throw err;
          // handled already: a message delivered again is handled again, to the same effect
          status.lastError = { at: stamp(), message: failureMessage(err) };
        }
      } else {
        await sleep(backoffMs);
      }
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > 2_000) {
      // a replacement in progress finishes here (by its deadline, two minutes at most), not in the next run
      await condition(() => Object.keys(status.replacing).length === 0);
      await condition(allHandlersFinished);
      await continueAsNew<typeof interruptionWorkflow>({
        ...input,
        carried: { polls: status.polls, received: status.received, deleted: status.deleted, byKind: status.byKind, recent: status.recent, replaced: status.replaced },
      });
    }
  }
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (a replacement in progress included:
// patched() and the committed histories keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', interruptionWorkflow);
