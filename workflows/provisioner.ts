import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { declareVersioningBehavior } from './versioning';
import type { ProvisionerActivities } from '../activities/provisioner/activity';
import { batchResult, batchToCreate, type BatchResult } from '../core/provisioning/batch';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type OfferingRef, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

/** The watcher's doorbell: pods are pending. It carries nothing; the batch reads the pods itself. */
export const podsPendingSignal = defineSignal('podsPending');
export interface OfferingsUnavailableOptions {
  /** default true: the reporting claim was deleted, its pods need a new plan */
  replan?: boolean;
}
/**
 * A launch found these offerings out of capacity: hold them unavailable, and plan again —
 * unless `replan: false`: a claim that launched on another offering (a partial fleet error)
 * reports what it saw, but its pods have their node coming. The options argument is
 * optional so callers and histories of the one-argument signal keep its meaning.
 */
export const offeringsUnavailableSignal = defineSignal<[OfferingRef[], OfferingsUnavailableOptions?]>('offeringsUnavailable');
/**
 * Teardown: plan nothing more, ever, and stay running — so the watcher's doorbell
 * (signal-with-start) finds this workflow and cannot start a fresh provisioner. A batch
 * whose plan is not yet recorded is dropped; one being created finishes first. The
 * `status` query shows `stopped` once nothing more will be created.
 */
export const stopProvisioningSignal = defineSignal<[string]>('stop');

export interface UnavailableOffering extends OfferingRef {
  /** epoch ms */
  until: number;
}

export interface ProvisionerStatus {
  cluster: string;
  /** pods waiting when the last batch read the cluster */
  pendingPods: number;
  batches: number;
  batching: boolean;
  lastBatch?: BatchResult & { startedAt: string; durationMs: number };
  unavailableOfferings: { instanceType: string; zone: string; capacityType: string; until: string }[];
  /** why this provisioner creates nothing more (set once it has parked) */
  stopped?: string;
}
export const provisionerStatusQuery = defineQuery<ProvisionerStatus>('status');

export interface ProvisionerWorkflowInput {
  cluster: ClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** Karpenter's BATCH_IDLE_DURATION: a batch closes after this long without a new pending pod */
  batchIdle?: string;
  /** Karpenter's BATCH_MAX_DURATION: and at the latest this long after it opened */
  batchMax?: string;
  /** how long an offering that hit insufficient capacity is held unavailable (Karpenter: 3m) */
  unavailableFor?: string;
  /** re-plan on a timer while pods stayed pending (a missed doorbell costs latency, not pods) */
  resync?: string;
  /** a packing worker silent this long is taken for dead and its batch step retried elsewhere */
  heartbeatTimeout?: string;
  /** carried across continue-as-new */
  carried?: { unavailable: UnavailableOffering[]; batches: number; lastBatch?: ProvisionerStatus['lastBatch']; rang: boolean; openBatch?: string; stopped?: string };
}

// A killed packing worker is noticed by its missed heartbeats (the activities beat at least
// every 5 s, also while solving), and the batch goes on on another worker.
const activities = (queue: string, heartbeatTimeout: string) =>
  proxyActivities<ProvisionerActivities>({
    taskQueue: queue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });

/**
 * One per cluster, so provisioning decisions are serialized: wait for the doorbell, batch
 * (1 s idle / 10 s max), then one packing activity plans and creates the NodeClaims. The
 * batch id is chosen before the activity runs and kept in state, so a worker killed in
 * the middle of a batch resumes that batch (its claims carry the id) instead of planning
 * anew. Offerings that ran out of capacity are held unavailable for 3 minutes, durably.
 */
export async function provisionerWorkflow(input: ProvisionerWorkflowInput): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
  // Histories from before `plan-then-create` recorded a one-minute heartbeat timeout: commands must match on replay.
  const planThenCreate = patched('plan-then-create');
  const { provisionBatch, planBatch, createClaims } = activities(taskQueues.packing, planThenCreate ? (input.heartbeatTimeout ?? '20s') : '1 minute');
  const idleMs = durationToMs(input.batchIdle ?? '1s') ?? 1_000;
  const maxMs = durationToMs(input.batchMax ?? '10s') ?? 10_000;
  const unavailableMs = durationToMs(input.unavailableFor ?? '3m') ?? 180_000;
  const resyncMs = durationToMs(input.resync ?? '1m') ?? 60_000;

  let unavailable: UnavailableOffering[] = input.carried?.unavailable ?? [];
  let batches = input.carried?.batches ?? 0;
  let lastBatch = input.carried?.lastBatch;
  let rang = input.carried?.rang ?? true; // a (re)started provisioner looks once
  let openBatch = input.carried?.openBatch;
  let batching = false;
  let stopping = input.carried?.stopped;
  let stopped: string | undefined;

  setHandler(podsPendingSignal, () => void (rang = true));
  setHandler(stopProvisioningSignal, (reason) => void (stopping ??= reason));
  setHandler(offeringsUnavailableSignal, (offerings, options) => {
    const until = Date.now() + unavailableMs;
    for (const o of offerings) {
      unavailable = unavailable.filter((u) => !(u.instanceType === o.instanceType && u.zone === o.zone && u.capacityType === o.capacityType));
      unavailable.push({ ...o, until });
    }
    if (options?.replan !== false) rang = true;
  });
  setHandler(provisionerStatusQuery, () => ({
    cluster: cluster.name,
    pendingPods: lastBatch?.pending ?? 0,
    batches,
    batching,
    ...(lastBatch ? { lastBatch } : {}),
    unavailableOfferings: unavailable.filter((u) => u.until > Date.now()).map((u) => ({ instanceType: u.instanceType, zone: u.zone, capacityType: u.capacityType, until: new Date(u.until).toISOString() })),
    ...(stopped !== undefined ? { stopped } : {}),
  }));
  /**
   * Parks the workflow for good: it must stay running (see stopProvisioningSignal). Doorbells
   * still arrive and grow the history, so a parked run continues as new, parked.
   */
  const park = async (reason: string): Promise<never> => {
    stopped = reason;
    batching = false;
    upsertSearchAttributes([{ key: AutoNodePhase, value: 'Stopped' }]);
    await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000);
    await condition(allHandlersFinished);
    return continueAsNew<typeof provisionerWorkflow>({ ...input, carried: { unavailable, batches, ...(lastBatch ? { lastBatch } : {}), rang: false, stopped: reason } });
  };
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Provisioning' },
  ]);

  for (;;) {
    if (openBatch === undefined) {
      // Wait for the doorbell (or, while pods stayed pending, the resync timer).
      // Pods the last batch could not place wait for the next doorbell, not a timer: no retry storm.
      const stillPending = (lastBatch?.pending ?? 0) > (lastBatch?.unschedulable ?? 0);
      if (stopping !== undefined) await park(stopping);
      if (!rang) {
        if (stillPending) await condition(() => rang || stopping !== undefined, resyncMs);
        else await condition(() => rang || stopping !== undefined);
        if (stopping !== undefined) await park(stopping);
      }
      // Batch: close after `idle` without a new doorbell, or `max` after opening.
      batching = true;
      const opened = Date.now();
      for (;;) {
        rang = false;
        const left = opened + maxMs - Date.now();
        if (left <= 0) break;
        if (!(await condition(() => rang || stopping !== undefined, Math.min(idleMs, left)))) break;
        if (stopping !== undefined) await park(stopping);
      }
      batching = false;
      openBatch = uuid4();
    }
    // a batch not planned yet (or resumed after a crash) is dropped when stopping
    if (stopping !== undefined) await park(stopping);
    const now = Date.now();
    unavailable = unavailable.filter((u) => u.until > now);
    const startedAt = new Date(now).toISOString();
    const batch = {
      cluster,
      taskQueues,
      batchId: openBatch,
      unavailable: unavailable.map(({ instanceType, zone, capacityType }) => ({ instanceType, zone, capacityType: capacityType === 'spot' ? ('spot' as const) : ('on-demand' as const) })),
    };
    let result: BatchResult;
    if (planThenCreate) {
      // The plan is recorded in history before anything is created: a worker killed while
      // creating is replaced by one that creates exactly these claims, by name.
      const planned = await planBatch(batch);
      if (stopping !== undefined) await park(stopping);
      const made = planned.claims.length > 0 || planned.poolStatus.length > 0 ? await createClaims({ cluster, taskQueues, ...batchToCreate(planned) }) : { created: [], resumed: [], refused: [] };
      result = batchResult(planned, made);
    } else {
      result = await provisionBatch(batch);
    }
    openBatch = undefined;
    batches++;
    lastBatch = { ...result, startedAt, durationMs: Date.now() - now };
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > 2_000) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof provisionerWorkflow>({ ...input, carried: { unavailable, batches, ...(lastBatch ? { lastBatch } : {}), rang, ...(stopping !== undefined ? { stopped: stopping } : {}) } });
    }
  }
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (patched() and the committed histories
// keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', provisionerWorkflow);
