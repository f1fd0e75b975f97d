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
  getExternalWorkflowHandle,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from './activity-options';
import { declareVersioningBehavior } from './versioning';
import type { NodeClaimCloudActivities } from '../activities/nodeclaim/cloud';
import type { NodeClaimKubeActivities } from '../activities/nodeclaim/kube';
import {
  LifecycleStateSchema,
  NodeClaimWorkflowInputSchema,
  PERMANENT_FAILURES,
  decide,
  durationToMs,
  signalNames,
  type Action,
  type ActivityFailureInfo,
  type FailureType,
  type LifecycleSettings,
  type LifecycleState,
  type NodeClaimResult,
  type NodeClaimStatusView,
  type NodeClaimWorkflowConfig,
  type NodeClaimWorkflowInput,
  type Observation,
  type OfferingRef,
  type Phase,
  provisionerWorkflowId,
} from '../core/lifecycle';
import { offeringsUnavailableSignal, type OfferingsUnavailableOptions } from './provisioner';
import { nodeClaimWorkflowV1, type NodeClaimResumeState } from './legacy/nodeclaim-v1';
import { AutoNodeCluster, AutoNodePhase, AutoNodePool, CapacityType, InstanceType, Zone } from './search-attributes';

export const statusQuery = defineQuery<NodeClaimStatusView>('status');
export const disruptUpdate = defineUpdate<{ accepted: true; phase: Phase }, [{ reason: string }]>('disrupt');
export const nodeClaimChangedSignal = defineSignal(signalNames.nodeClaimChanged);
export const nodeChangedSignal = defineSignal(signalNames.nodeChanged);
export const csrCreatedSignal = defineSignal<[string]>(signalNames.csrCreated);

/** Carried across continue-as-new: the state as data, plus when each phase began (visibility). */
export interface NodeClaimCarryOver {
  state: LifecycleState;
  timings: Partial<Record<Phase, string>>;
}

/**
 * Runs started before the lifecycle became data replay through the frozen v1 code (their
 * histories lack this marker); every new run records it and is driven by `decide`.
 */
const LIFECYCLE_AS_DATA = 'lifecycle-as-data';
/**
 * A launch that succeeded after the fleet refused some offerings tells the provisioner
 * (one more command). Runs recorded before it never send that signal on replay.
 */
const PARTIAL_ICE_MEMORY = 'partial-ice-memory';
/**
 * Worker versioning (ADR 0009): a run is pinned to the build that started it. Once the
 * deployment's current build is another one, the run continues as new at its next wait,
 * carrying its state, and the new run starts on the current build. An old build so drains
 * within one wait (resync; steadyResync for a steady node) instead of within a node's life.
 * Unversioned workers never see the flag: their runs take this path never.
 */
const UPGRADE_ON_NEW_BUILD = 'upgrade-on-new-build';

/**
 * One NodeClaim's life: launch → approve the kubelet's client CSR → register → approve its
 * serving CSR → initialize → steady → drain → terminate. The NodeClaim object is the truth
 * users see; this workflow is the process that moves it. It is a short driver around the
 * pure `decide` (core/lifecycle/decide.ts): observe, decide, run the step, repeat — and
 * continue as new before any wait once the history is long, so no wait, however long,
 * grows the history without bound.
 */
export async function nodeClaimWorkflow(rawInput: NodeClaimWorkflowInput, resume?: NodeClaimCarryOver | NodeClaimResumeState): Promise<NodeClaimResult> {
  if (!patched(LIFECYCLE_AS_DATA)) return nodeClaimWorkflowV1(rawInput, resume && !('state' in resume) ? resume : undefined);
  const input = NodeClaimWorkflowInputSchema.parse(rawInput);
  const carried = carryOver(resume);
  return new LifecycleDriver(rawInput, input, carried).run();
}

// ADR 0009: a claim lives as long as its node (weeks); each run is pinned to the build that
// started it and moves to the current build by continuing as new (UPGRADE_ON_NEW_BUILD).
declareVersioningBehavior('PINNED', nodeClaimWorkflow);

/** A v1 run continues as new from steady state only; anything else walks again from Pending (idempotent). */
function carryOver(resume: NodeClaimCarryOver | NodeClaimResumeState | undefined): NodeClaimCarryOver {
  if (!resume) return { state: { phase: 'Pending' }, timings: {} };
  if ('state' in resume) return { state: LifecycleStateSchema.parse(resume.state), timings: resume.timings };
  if (resume.phase === 'Initialized' && resume.instance && resume.nodeName) {
    const claim = { ...(resume.nodePool ? { nodePool: resume.nodePool } : {}), ...(resume.expireAt !== undefined ? { expireAt: resume.expireAt } : {}) };
    return { state: { phase: 'Initialized', claim, instance: resume.instance, nodeName: resume.nodeName }, timings: resume.timings };
  }
  return { state: { phase: 'Pending' }, timings: resume.timings };
}

function activitiesFor(input: NodeClaimWorkflowConfig) {
  const { control, cloud } = input.taskQueues;
  // Kubernetes calls: quick, retried with backoff until they succeed (the API server may be
  // briefly away; the work is idempotent). EC2 calls go to their own, rate-limited queue.
  const kubeRetry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [...PERMANENT_FAILURES.kube] };
  const cloudRetry = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [...PERMANENT_FAILURES.cloud] };
  return {
    kube: proxyActivities<NodeClaimKubeActivities>({ taskQueue: control, startToCloseTimeout: '1 minute', heartbeatTimeout: ACTIVITY_HEARTBEAT, retry: kubeRetry }),
    cloud: proxyActivities<NodeClaimCloudActivities>({ taskQueue: cloud, startToCloseTimeout: '2 minutes', heartbeatTimeout: ACTIVITY_HEARTBEAT, retry: cloudRetry }),
    // the launch as a whole may take at most the launch timeout, retries included
    launch: proxyActivities<NodeClaimCloudActivities>({ taskQueue: cloud, startToCloseTimeout: input.timeouts.launchAttempt, heartbeatTimeout: input.timeouts.launchHeartbeat, scheduleToCloseTimeout: input.timeouts.launch, retry: cloudRetry }),
  };
}

/** Signals and updates that arrived since the last wait, coalesced. */
interface Inbox {
  event: boolean;
  csr: boolean;
  disrupt?: string;
}

class LifecycleDriver {
  private state: LifecycleState;
  private readonly timings: Partial<Record<Phase, string>>;
  private readonly inbox: Inbox = { event: false, csr: false };
  private lastError: string | undefined;
  private readonly settings: LifecycleSettings;
  private readonly activities: ReturnType<typeof activitiesFor>;

  constructor(
    private readonly rawInput: NodeClaimWorkflowInput,
    private readonly input: NodeClaimWorkflowConfig,
    carried: NodeClaimCarryOver,
  ) {
    this.state = carried.state;
    this.timings = carried.timings;
    this.activities = activitiesFor(input);
    const t = input.timeouts;
    this.settings = {
      uid: input.nodeClaim.uid,
      registrationMs: durationToMs(t.registration) ?? 15 * 60_000,
      initializationMs: durationToMs(t.initialization) ?? Number.MAX_SAFE_INTEGER,
      resyncMs: durationToMs(t.resync) ?? 15_000,
      steadyResyncMs: durationToMs(t.steadyResync) ?? 300_000,
    };
    this.registerHandlers();
  }

  private registerHandlers() {
    setHandler(statusQuery, () => ({
      phase: this.state.phase,
      nodeClaim: this.input.nodeClaim.name,
      timings: this.timings,
      ...('instance' in this.state && this.state.instance ? { instance: this.state.instance } : {}),
      ...('nodeName' in this.state && this.state.nodeName ? { nodeName: this.state.nodeName } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
      ...('end' in this.state ? { ending: this.state.end } : {}),
    }));
    setHandler(nodeClaimChangedSignal, () => void (this.inbox.event = true));
    setHandler(nodeChangedSignal, () => void (this.inbox.event = true));
    setHandler(csrCreatedSignal, () => {
      this.inbox.csr = true;
      this.inbox.event = true;
    });
    setHandler(
      disruptUpdate,
      ({ reason }) => {
        this.inbox.disrupt ??= reason;
        return { accepted: true as const, phase: this.state.phase };
      },
      {
        validator: ({ reason }) => {
          if (!reason || reason.trim() === '') throw new Error('disrupt needs a reason (it is shown on the NodeClaim and in Events)');
          if (this.state.phase === 'Draining' || this.state.phase === 'Terminating' || this.state.phase === 'Terminated') {
            throw new Error(`NodeClaim ${this.input.nodeClaim.name} is already ${this.state.phase}`);
          }
        },
      },
    );
  }

  async run(): Promise<NodeClaimResult> {
    this.showPhase();
    let observation: Observation = { kind: 'started' };
    let shielded = false;
    for (;;) {
      const step = decide(this.state, observation, Date.now(), this.settings);
      const phaseChanged = step.state.phase !== this.state.phase;
      this.state = step.state;
      if (step.lastError !== undefined) this.lastError = step.lastError ?? undefined;
      if (phaseChanged) this.showPhase();
      const action = step.action;
      switch (action.kind) {
        case 'finish':
          if (this.state.phase !== 'Terminated') throw new Error(`finish outside Terminated (${this.state.phase})`);
          if (this.state.end.kind === 'insufficientCapacity') await this.tellProvisioner(this.state.end.offerings);
          return { nodeClaim: this.input.nodeClaim.name, end: this.state.end, ...(this.state.instance ? { instance: this.state.instance } : {}) };
        case 'fail':
          throw ApplicationFailure.nonRetryable(action.message, 'LifecycleFailed' satisfies FailureType);
        case 'restart':
          return await continueAsNew<typeof nodeClaimWorkflow>({ ...this.rawInput, nodeClaim: { name: this.input.nodeClaim.name, uid: action.uid } });
        case 'wait': {
          const upgrade = this.newBuildIsCurrent();
          if (upgrade || this.historyIsLong()) {
            await condition(allHandlersFinished);
            const next = upgrade ? makeContinueAsNewFunc<typeof nodeClaimWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' }) : continueAsNew<typeof nodeClaimWorkflow>;
            return await next(this.rawInput, { state: this.state, timings: this.timings });
          }
          break;
        }
        default:
          break;
      }
      try {
        observation = shielded ? await CancellationScope.nonCancellable(() => this.perform(action)) : await this.perform(action);
      } catch (err) {
        if (isCancellation(err) && !shielded) {
          // Teardown (AutoNode disabled, cluster deleted): still never leak the instance, so
          // the rest of the life runs shielded from the cancellation.
          shielded = true;
          observation = { kind: 'cancelled' };
          continue;
        }
        const failure = failureInfo(err);
        if (!failure) throw err;
        observation = { kind: 'failed', action: action.kind, failure };
      }
    }
  }

  /**
   * The provisioner holds these offerings unavailable and re-plans the claim's pods (its
   * doorbell rings too). A cluster without a provisioner (a claim made by hand) has no one
   * to tell: that is fine.
   */
  private async tellProvisioner(offerings: OfferingRef[], options?: OfferingsUnavailableOptions): Promise<void> {
    const provisioner = getExternalWorkflowHandle(provisionerWorkflowId(this.input.cluster.name));
    try {
      // the ICE ending sends the one-argument signal it always sent
      await (options ? provisioner.signal(offeringsUnavailableSignal, offerings, options) : provisioner.signal(offeringsUnavailableSignal, offerings));
    } catch (err) {
      if (isCancellation(err)) throw err;
    }
  }

  /**
   * The claim launched, but the fleet found these offerings out of capacity first: the
   * provisioner remembers them without re-planning (this claim's pods have their node).
   * Shielded from cancellation: a teardown arriving now must still see the instance
   * launched (the next step observes the cancellation and terminates it).
   */
  private async reportExhausted(offerings: OfferingRef[] | undefined): Promise<void> {
    if (offerings === undefined || offerings.length === 0 || !patched(PARTIAL_ICE_MEMORY)) return;
    await CancellationScope.nonCancellable(() => this.tellProvisioner(offerings, { replan: false }));
  }

  /** The worker deployment's current build is not this run's (pinned) one: move onto it (UPGRADE_ON_NEW_BUILD). */
  private newBuildIsCurrent(): boolean {
    return workflowInfo().targetWorkerDeploymentVersionChanged && patched(UPGRADE_ON_NEW_BUILD);
  }

  private historyIsLong(): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= this.input.maxHistoryEvents;
  }

  /** Runs one action: an activity, or a wait for a signal, an update or the timer. */
  private async perform(action: Action): Promise<Observation> {
    const { kube, cloud, launch } = this.activities;
    const { cluster, csrPolicy: policy } = this.input;
    const { name, uid } = this.input.nodeClaim;
    const s = this.state;
    const instance = 'instance' in s ? s.instance : undefined;
    const nodeName = 'nodeName' in s ? s.nodeName : undefined;
    switch (action.kind) {
      case 'prepare':
        return { kind: 'prepared', ...(await kube.prepareClaim({ cluster, name })) };
      case 'launch': {
        await cloud.reconcileNodeClass({ cluster, name });
        // Results recorded before PARTIAL_ICE_MEMORY are a bare instance: nothing to report.
        const { exhaustedOfferings, ...launched } = await launch.launchClaimInstance({ cluster, name });
        await this.reportExhausted(exhaustedOfferings);
        return { kind: 'launched', instance: launched };
      }
      case 'reviewRegistration':
        return { kind: 'registration', ...(await kube.reviewRegistration({ cluster, name, instance: required(instance, action), policy })) };
      case 'reviewInitialization':
        return { kind: 'initialization', ...(await kube.reviewInitialization({ cluster, name, nodeName: required(nodeName, action), instance: required(instance, action), policy })) };
      case 'observe': {
        const seen = await kube.observeClaim({ cluster, name, uid, ...(nodeName ? { nodeName } : {}), ...(action.reviewCsrs && instance ? { reviewCsrsFor: { instance, policy } } : {}) });
        return { kind: 'claimSeen', ...seen };
      }
      case 'wait':
        return this.wait(action.ms);
      case 'beginDrain':
        await kube.startDrain({ cluster, name, reason: action.reason, ...(nodeName ? { nodeName } : {}) });
        return { kind: 'drainBegun' };
      case 'drain':
        return { kind: 'drained', ...(await kube.drainPods({ cluster, name, nodeName: required(nodeName, action), pastDeadline: action.pastDeadline })) };
      case 'checkVolumes':
        return { kind: 'volumes', ...(await kube.checkVolumes({ cluster, name, nodeName: required(nodeName, action) })) };
      case 'terminateInstance':
        await cloud.terminateClaimInstance({ cluster, name, providerId: action.providerId });
        return { kind: 'instanceTerminated' };
      case 'finalize':
        await kube.finalizeClaim({ cluster, name, uid, reason: action.reason, warning: action.abnormal, ...(nodeName ? { nodeName } : {}), ...(instance ? { providerId: instance.providerId } : {}) });
        return { kind: 'finalized' };
      case 'restart':
      case 'finish':
      case 'fail':
        throw new Error(`${action.kind} is not performed by an activity`);
    }
  }

  private async wait(ms: number): Promise<Observation> {
    const pending = () => this.inbox.event || this.inbox.disrupt !== undefined;
    const woke = await condition(pending, Math.max(ms, 1));
    const { disrupt, csr } = this.inbox;
    this.inbox.event = false;
    this.inbox.csr = false;
    this.inbox.disrupt = undefined;
    if (disrupt !== undefined) return { kind: 'disruptRequested', reason: disrupt };
    return { kind: 'woken', by: woke ? 'event' : 'timer', csr };
  }

  private showPhase() {
    const s = this.state;
    this.timings[s.phase] ??= new Date().toISOString();
    const instance = 'instance' in s ? s.instance : undefined;
    const nodePool = 'claim' in s ? s.claim.nodePool : undefined;
    upsertSearchAttributes([
      { key: AutoNodeCluster, value: this.input.cluster.name },
      { key: AutoNodePhase, value: s.phase },
      ...(nodePool ? [{ key: AutoNodePool, value: nodePool }] : []),
      ...(instance
        ? [
            { key: InstanceType, value: instance.instanceType },
            { key: CapacityType, value: instance.capacityType },
            { key: Zone, value: instance.zone },
          ]
        : []),
    ]);
    const nodeName = 'nodeName' in s ? s.nodeName : undefined;
    setCurrentDetails(`**${s.phase}** ${instance ? `${instance.instanceType} ${instance.capacityType} ${instance.zone} ${instance.instanceId}` : ''} ${nodeName ?? ''}`);
  }
}

function required<T>(value: T | undefined, action: Action): T {
  if (value === undefined) throw new Error(`${action.kind} needs a field the current phase does not carry`);
  return value;
}

/** An activity's failure as plain data for decide(); undefined for anything else (a bug: rethrown). */
function failureInfo(err: unknown): ActivityFailureInfo | undefined {
  if (!(err instanceof ActivityFailure)) return undefined;
  const cause = err.cause;
  // Retries stopped by the schedule-to-close deadline end with the last attempt's failure
  // and retry state TIMEOUT: that is the launch timeout, whatever the last attempt said.
  const timedOut = cause instanceof TimeoutFailure || err.retryState === 'TIMEOUT';
  if (cause instanceof ApplicationFailure) {
    return { ...(cause.type ? { type: cause.type } : {}), message: cause.message, nonRetryable: cause.nonRetryable === true, timedOut, details: cause.details?.[0] };
  }
  if (timedOut) return { message: cause?.message ?? err.message, timedOut };
  return { message: cause?.message ?? err.message };
}
