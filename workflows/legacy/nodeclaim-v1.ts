import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from '../activity-options';
import type { LegacyNodeClaimActivities as NodeClaimActivities } from '../../activities/nodeclaim/legacy';
import {
  NodeClaimWorkflowInputSchema,
  describeEnd,
  durationToMs,
  signalNames,
  type EndReason,
  type LaunchedInstance,
  type NodeClaimResult,
  type NodeClaimStatusView,
  type NodeClaimWorkflowInput,
  type Phase,
  type TaskQueues,
} from '../../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase, AutoNodePool, CapacityType, InstanceType, Zone } from '../search-attributes';

// Kubernetes calls: quick, retried with backoff until they succeed (the API server may be
// briefly away; the work is idempotent). EC2 calls go to their own, rate-limited queue.
const kubeRetry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: ['NodeClaimGone', 'Invalid'] };
const cloudRetry = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: ['InsufficientCapacity', 'Authorization', 'NodeClaimGone', 'Invalid', 'InvalidRequest'] };

function activitiesFor(queues: TaskQueues, launchTimeout: string, launchAttempt: string) {
  return {
    kube: proxyActivities<NodeClaimActivities>({ taskQueue: queues.control, startToCloseTimeout: '1 minute', heartbeatTimeout: ACTIVITY_HEARTBEAT, retry: kubeRetry }),
    cloud: proxyActivities<NodeClaimActivities>({ taskQueue: queues.cloud, startToCloseTimeout: '2 minutes', heartbeatTimeout: ACTIVITY_HEARTBEAT, retry: cloudRetry }),
    // the launch as a whole may take at most the launch timeout, retries included
    launch: proxyActivities<NodeClaimActivities>({ taskQueue: queues.cloud, startToCloseTimeout: launchAttempt, heartbeatTimeout: ACTIVITY_HEARTBEAT, scheduleToCloseTimeout: launchTimeout, retry: cloudRetry }),
  };
}

const statusQuery = defineQuery<NodeClaimStatusView>('status');
const disruptUpdate = defineUpdate<{ accepted: true; phase: Phase }, [{ reason: string }]>('disrupt');
const nodeClaimChangedSignal = defineSignal(signalNames.nodeClaimChanged);
const nodeChangedSignal = defineSignal(signalNames.nodeChanged);
const csrCreatedSignal = defineSignal<[string]>(signalNames.csrCreated);

/** Carried across continue-as-new: everything needed to resume, as plain JSON. */
export interface NodeClaimResumeState {
  phase: Phase;
  instance?: LaunchedInstance;
  nodeName?: string;
  nodePool?: string;
  expireAt?: number;
  timings: Partial<Record<Phase, string>>;
}

/**
 * FROZEN: the first shape of the lifecycle, kept verbatim (but for imports and names) so
 * runs started before the lifecycle became data (workflows/nodeclaim.ts, ADR 0005) replay
 * and finish. `nodeClaimWorkflow` routes a run here when its history has no
 * 'lifecycle-as-data' marker. Its steady state continues as new into the v2 shape. Do not
 * change the command sequence; delete once no v1 run is open.
 *
 * One NodeClaim's life: launch → approve the kubelet's client CSR → register → approve its
 * serving CSR → initialize → steady → drain → terminate. The NodeClaim object is the truth
 * users see; this workflow is the process that moves it, and every step it takes is an
 * idempotent activity, so a crash anywhere resumes without a second instance or a lost pod.
 * Signals only wake it early: each wait also re-reads the world on a timer.
 */
export async function nodeClaimWorkflowV1(rawInput: NodeClaimWorkflowInput, resume?: NodeClaimResumeState): Promise<NodeClaimResult> {
  const input = NodeClaimWorkflowInputSchema.parse(rawInput);
  const { cluster } = input;
  const { kube, cloud, launch } = activitiesFor(input.taskQueues, input.timeouts.launch, input.timeouts.launchAttempt);
  const name = input.nodeClaim.name;
  const resyncMs = durationToMs(input.timeouts.resync) ?? 15_000;
  const steadyResyncMs = durationToMs(input.timeouts.steadyResync) ?? 300_000;

  const state: NodeClaimResumeState = resume ?? { phase: 'Pending', timings: {} };
  let ending: EndReason | undefined;
  let lastError: string | undefined;
  let woken = false;
  let csrPending = false;

  setHandler(statusQuery, () => ({
    phase: state.phase,
    nodeClaim: name,
    timings: state.timings,
    ...(state.instance ? { instance: state.instance } : {}),
    ...(state.nodeName ? { nodeName: state.nodeName } : {}),
    ...(lastError ? { lastError } : {}),
    ...(ending ? { ending } : {}),
  }));
  setHandler(nodeClaimChangedSignal, () => void (woken = true));
  setHandler(nodeChangedSignal, () => void (woken = true));
  setHandler(csrCreatedSignal, () => {
    csrPending = true;
    woken = true;
  });
  setHandler(
    disruptUpdate,
    ({ reason }) => {
      ending ??= { kind: 'disrupted', reason };
      woken = true;
      return { accepted: true as const, phase: state.phase };
    },
    {
      validator: ({ reason }) => {
        if (!reason || reason.trim() === '') throw new Error('disrupt needs a reason (it is shown on the NodeClaim and in Events)');
        if (state.phase === 'Terminating' || state.phase === 'Terminated') throw new Error(`NodeClaim ${name} is already ${state.phase}`);
      },
    },
  );

  const setPhase = (phase: Phase) => {
    state.phase = phase;
    state.timings[phase] ??= new Date().toISOString();
    upsertSearchAttributes([
      { key: AutoNodeCluster, value: cluster.name },
      { key: AutoNodePhase, value: phase },
      ...(state.nodePool ? [{ key: AutoNodePool, value: state.nodePool }] : []),
      ...(state.instance
        ? [
            { key: InstanceType, value: state.instance.instanceType },
            { key: CapacityType, value: state.instance.capacityType },
            { key: Zone, value: state.instance.zone },
          ]
        : []),
    ]);
    setCurrentDetails(`**${phase}** ${state.instance ? `${state.instance.instanceType} ${state.instance.capacityType} ${state.instance.zone} ${state.instance.instanceId}` : ''} ${state.nodeName ?? ''}`);
  };
  /** Waits for a signal, an ending, or the timeout; true when woken rather than timed out. */
  const wait = async (ms: number) => {
    const signalled = await condition(() => woken || ending !== undefined, Math.max(ms, 1));
    woken = false;
    return signalled;
  };
  // Runs started before this patch looked for deletion only when signalled while coming
  // up; without a watcher a `kubectl delete` then went unnoticed until the node registered.
  const checkEveryResync = () => patched('check-deletion-on-every-resync');
  const checkDeletion = async () => {
    const seen = await kube.observeNodeClaim(cluster, name);
    // a claim recreated under the same name is not ours: ours is gone
    if (!seen.exists || (seen.uid !== undefined && seen.uid !== input.nodeClaim.uid)) ending ??= { kind: 'deleted', by: 'nodeclaim' };
    else if (seen.deleting) ending ??= { kind: 'deleted', by: 'nodeclaim' };
    else if (seen.nodeDeleting) ending ??= { kind: 'deleted', by: 'node' };
    else if (state.nodeName && !seen.nodeExists && state.phase === 'Initialized') ending ??= { kind: 'deleted', by: 'node' };
  };

  try {
    if (state.phase === 'Pending') {
      setPhase('Pending');
      const snap = await kube.prepareNodeClaim(cluster, name);
      if (!snap.exists) return { nodeClaim: name, end: { kind: 'deleted', by: 'nodeclaim' } };
      // Recreated under the same name before anything was launched: serve the new claim.
      if (snap.uid && snap.uid !== input.nodeClaim.uid) {
        return await continueAsNew<typeof nodeClaimWorkflowV1>({ ...rawInput, nodeClaim: { name, uid: snap.uid } });
      }
      if (snap.nodePool) state.nodePool = snap.nodePool;
      const expireMs = snap.expireAfter ? durationToMs(snap.expireAfter) : undefined;
      if (expireMs !== undefined) state.expireAt = Date.now() + expireMs;
      if (snap.deleting) ending = { kind: 'deleted', by: 'nodeclaim' };
    }

    if (!ending && (state.phase === 'Pending' || state.phase === 'Launching')) {
      setPhase('Launching');
      try {
        state.instance = await launch.launchInstance(cluster, name);
      } catch (err) {
        const end = launchFailure(err);
        if (!end) throw err;
        ending = end;
        lastError = describeEnd(end);
      }
      if (state.instance) setPhase('Launched');
    }

    if (!ending && state.phase === 'Launched' && state.instance) {
      const registrationMs = durationToMs(input.timeouts.registration) ?? 15 * 60_000;
      const deadline = Date.parse(state.timings.Launched ?? new Date().toISOString()) + registrationMs;
      while (!ending) {
        const r = await kube.reconcileRegistration(cluster, { name, instance: state.instance, policy: input.csrPolicy });
        if (r.denied.length > 0) lastError = `denied CSRs: ${r.denied.map((d) => `${d.name} (${d.check})`).join('; ')}`;
        if (r.registered && r.nodeName) {
          state.nodeName = r.nodeName;
          setPhase('Registered');
          break;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          ending = { kind: 'registrationTimeout' };
          break;
        }
        if ((await wait(Math.min(resyncMs, left))) || checkEveryResync()) await checkDeletion();
      }
    }

    if (!ending && state.phase === 'Registered' && state.nodeName && state.instance) {
      while (!ending) {
        // The serving CSR arrives after registration: keep reviewing until initialized.
        await kube.reconcileRegistration(cluster, { name, instance: state.instance, policy: input.csrPolicy });
        const init = await kube.reconcileInitialization(cluster, name, state.nodeName);
        if (init.initialized) {
          setPhase('Initialized');
          break;
        }
        lastError = init.blocker;
        if ((await wait(Math.min(resyncMs, 5_000))) || checkEveryResync()) await checkDeletion();
      }
    }

    if (!ending && state.phase === 'Initialized' && state.instance) {
      lastError = undefined;
      while (!ending) {
        const untilExpiry = state.expireAt === undefined ? steadyResyncMs : state.expireAt - Date.now();
        if (untilExpiry <= 0) {
          ending = { kind: 'expired' };
          break;
        }
        await wait(Math.min(steadyResyncMs, untilExpiry));
        if (ending) break;
        if (csrPending) {
          csrPending = false;
          await kube.reconcileRegistration(cluster, { name, instance: state.instance, policy: input.csrPolicy });
        }
        await checkDeletion();
        if (!ending && workflowInfo().continueAsNewSuggested) {
          await condition(allHandlersFinished);
          return await continueAsNew<typeof nodeClaimWorkflowV1>(rawInput, state);
        }
      }
    }

    return await terminate(ending ?? { kind: 'instanceGone' });
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancellation is teardown (AutoNode disabled, cluster deleted): still never leak the
    // instance, so the cleanup runs shielded from the cancellation.
    return await CancellationScope.nonCancellable(() => terminate({ kind: 'disrupted', reason: 'workflow cancelled (teardown)' }));
  }

  async function terminate(end: EndReason): Promise<NodeClaimResult> {
    ending = end;
    const reason = describeEnd(end);
    if (state.instance && state.nodeName && end.kind !== 'registrationTimeout') {
      setPhase('Draining');
      await kube.beginDrain(cluster, name, state.nodeName, reason);
      const snap = await kube.observeNodeClaim(cluster, name);
      const graceMs = snap.terminationGracePeriod ? durationToMs(snap.terminationGracePeriod) : undefined;
      const deadline = graceMs === undefined ? undefined : Date.now() + graceMs;
      let backoff = 1_000;
      for (;;) {
        const pastDeadline = deadline !== undefined && Date.now() >= deadline;
        const progress = await kube.drainNode(cluster, name, state.nodeName, pastDeadline);
        if (progress.done) break;
        lastError = progress.blockedByPdb.length > 0 ? `eviction blocked by PodDisruptionBudget: ${progress.blockedByPdb.join(', ')}` : progress.doNotDisrupt.length > 0 ? `waiting for do-not-disrupt pods: ${progress.doNotDisrupt.join(', ')}` : `waiting for ${progress.remaining.length} pods to leave`;
        await sleep(deadline === undefined ? backoff : Math.max(1, Math.min(backoff, deadline - Date.now())));
        backoff = Math.min(backoff * 2, 10_000);
      }
      for (backoff = 1_000; ; backoff = Math.min(backoff * 2, 10_000)) {
        const volumes = await kube.checkVolumesDetached(cluster, name, state.nodeName);
        if (volumes.detached || (deadline !== undefined && Date.now() >= deadline)) break;
        lastError = `waiting for volumes to detach: ${volumes.attachments.join(', ')}`;
        await sleep(backoff);
      }
    }
    setPhase('Terminating');
    if (state.instance) await cloud.terminateInstance(cluster, name, state.instance.providerId);
    const abnormal = end.kind === 'launchTimeout' || end.kind === 'registrationTimeout' || end.kind === 'insufficientCapacity' || end.kind === 'instanceGone' || end.kind === 'launchFailed';
    await kube.finalizeNodeClaim(cluster, { name, uid: input.nodeClaim.uid }, state.nodeName, reason, abnormal, state.instance?.providerId);
    setPhase('Terminated');
    return { nodeClaim: name, end, ...(state.instance ? { instance: state.instance } : {}) };
  }
}

/** Launch failures that end the claim's life (rather than the workflow failing). */
function launchFailure(err: unknown): EndReason | undefined {
  if (!(err instanceof ActivityFailure)) return undefined;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return { kind: 'launchTimeout' };
  if (cause instanceof ApplicationFailure) {
    if (cause.type === 'InsufficientCapacity') {
      const details = cause.details?.[0];
      const offerings =
        typeof details === 'object' && details !== null && 'offerings' in details && Array.isArray(details.offerings)
          ? details.offerings.flatMap((o: unknown) =>
              typeof o === 'object' && o !== null && 'instanceType' in o && 'zone' in o && 'capacityType' in o
                ? [{ instanceType: String(o.instanceType), zone: String(o.zone), capacityType: String(o.capacityType) }]
                : [],
            )
          : [];
      return { kind: 'insufficientCapacity', offerings };
    }
    if (cause.type === 'NodeClaimGone') return { kind: 'deleted', by: 'nodeclaim' };
    // Permanent: retrying the same launch cannot succeed. End the claim (its Event says
    // why) rather than fail the workflow and leave a claim held by its finalizer forever.
    if (cause.type === 'Invalid' || cause.type === 'InvalidRequest' || cause.type === 'Authorization') {
      return { kind: 'launchFailed', reason: cause.message };
    }
  }
  return undefined;
}
