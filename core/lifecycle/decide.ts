import { assertNever } from '../assert';
import { describeEnd, isAbnormalEnd, type EndReason } from './end';
import { exhaustedOfferings, type ActivityFailureInfo } from './failures';
import { type Action, type LifecycleSettings, type LifecycleState, type Observation, type StateOf, type Step } from './state';

/**
 * The NodeClaim lifecycle, one observation at a time. Pure: the same state, observation
 * and clock give the same step, so every rule is a row of a table test.
 *
 *   Pending ─prepare─▶ Launching ─launch─▶ Launched ─CSR+Node─▶ Registered ─Ready─▶ Initialized
 *      │                  │ ICE/timeout/       │ 15m, deleted       │ not Ready 30m,      │ expired, deleted,
 *      │ deleted          │ invalid/deleted    │                    │ deleted             │ disrupted
 *      ▼                  ▼                    ▼                    ▼                     ▼
 *   Terminating ◀──────────────────────── (no Node) ── Draining ◀───────────────────────┘
 *      │  terminate the instance, finalize                │ begin → pods (PDB-aware, until
 *      ▼                                                  │ the grace deadline) → volumes
 *   Terminated                                            └──▶ Terminating
 *
 * Waiting phases re-read the world on every wake (a timer or a signal); each wait is an
 * action, so the driver can continue as new before any of them.
 */
export function decide(state: LifecycleState, observation: Observation, now: number, settings: LifecycleSettings): Step {
  if (observation.kind === 'failed') return afterFailure(state, observation.action, observation.failure, now);
  switch (state.phase) {
    case 'Pending':
      return pending(state, observation, now, settings);
    case 'Launching':
      return launching(state, observation, now, settings);
    case 'Launched':
      return launched(state, observation, now, settings);
    case 'Registered':
      return registered(state, observation, now, settings);
    case 'Initialized':
      return initialized(state, observation, now, settings);
    case 'Draining':
      return draining(state, observation, now, settings);
    case 'Terminating':
      return terminating(state, observation);
    case 'Terminated':
      return { state, action: { kind: 'finish' } };
    default:
      return assertNever(state);
  }
}

/** The step that ends a life from any phase before Draining: drain a registered node, else terminate. */
/**
 * `graceFrom` (epoch ms) is when the deletion was asked for: Karpenter's
 * terminationGracePeriod runs from the NodeClaim's deletionTimestamp, not from when the
 * workflow noticed it. Defaults to now.
 */
export function endLife(state: LifecycleState, end: EndReason, now: number, graceFrom: number = now): Step {
  switch (state.phase) {
    case 'Pending':
    case 'Launching':
      return finalizeStep({ phase: 'Terminating', end, stage: 'finalize' });
    case 'Launched':
      return terminateStep({ phase: 'Terminating', instance: state.instance, end, stage: 'instance' });
    case 'Registered':
    case 'Initialized': {
      // A node that never became healthy has nothing worth a grace period: force it.
      const deadline = end.kind === 'notReady' ? now : state.claim.terminationGraceMs === undefined ? null : Math.min(graceFrom, now) + state.claim.terminationGraceMs;
      const next: StateOf<'Draining'> = { phase: 'Draining', instance: state.instance, nodeName: state.nodeName, end, stage: 'begin', deadline, backoffMs: INITIAL_BACKOFF_MS };
      return { state: next, action: { kind: 'beginDrain', reason: describeEnd(end) } };
    }
    case 'Draining':
    case 'Terminating':
    case 'Terminated':
      // already ending: the first reason stands
      return resumeStep(state);
    default:
      return assertNever(state);
  }
}

const INITIAL_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;

function pending(state: StateOf<'Pending'>, o: Observation, now: number, s: LifecycleSettings): Step {
  switch (o.kind) {
    case 'prepared': {
      if (!o.exists) return { state: { phase: 'Terminated', end: { kind: 'deleted', by: 'nodeclaim' } }, action: { kind: 'finish' } };
      if (o.uid !== undefined && o.uid !== s.uid) return { state, action: { kind: 'restart', uid: o.uid } };
      if (o.deleting) return endLife(state, { kind: 'deleted', by: 'nodeclaim' }, now);
      const claim = {
        ...(o.nodePool !== undefined ? { nodePool: o.nodePool } : {}),
        // expireAfter counts from the claim's creation, as Karpenter's expiration does
        ...(o.expireAfterMs !== undefined ? { expireAt: (o.createdAt ?? now) + o.expireAfterMs } : {}),
        ...(o.terminationGraceMs !== undefined ? { terminationGraceMs: o.terminationGraceMs } : {}),
      };
      return { state: { phase: 'Launching', claim }, action: { kind: 'launch' } };
    }
    case 'disruptRequested':
      return endLife(state, { kind: 'disrupted', reason: o.reason }, now);
    case 'cancelled':
      return endLife(state, teardown, now);
    default:
      return { state, action: { kind: 'prepare' } };
  }
}

function launching(state: StateOf<'Launching'>, o: Observation, now: number, s: LifecycleSettings): Step {
  switch (o.kind) {
    case 'launched':
      return { state: { phase: 'Launched', claim: state.claim, instance: o.instance, registerBy: now + s.registrationMs }, action: { kind: 'reviewRegistration' }, lastError: null };
    case 'cancelled':
      // the launch was interrupted: an instance it made is collected by the cluster's GC
      return endLife(state, teardown, now);
    case 'disruptRequested':
      return endLife(state, { kind: 'disrupted', reason: o.reason }, now);
    default:
      return { state, action: { kind: 'launch' } };
  }
}

function launched(state: StateOf<'Launched'>, o: Observation, now: number, s: LifecycleSettings): Step {
  switch (o.kind) {
    case 'registration': {
      if (o.registered && o.nodeName !== undefined) {
        return { state: { phase: 'Registered', claim: state.claim, instance: state.instance, nodeName: o.nodeName, registeredAt: now }, action: { kind: 'reviewInitialization' } };
      }
      const left = state.registerBy - now;
      if (left <= 0) return endLife(state, { kind: 'registrationTimeout' }, now);
      const why = [...(o.blocker !== undefined ? [o.blocker] : []), ...(o.denied.length > 0 ? [`denied CSRs: ${o.denied.join('; ')}`] : [])];
      return { state, action: { kind: 'wait', ms: Math.min(s.resyncMs, left) }, ...(why.length > 0 ? { lastError: why.join('; ') } : {}) };
    }
    default:
      return comingUp(state, o, now, { kind: 'reviewRegistration' });
  }
}

function registered(state: StateOf<'Registered'>, o: Observation, now: number, s: LifecycleSettings): Step {
  switch (o.kind) {
    case 'initialization': {
      if (o.initialized) return steady({ phase: 'Initialized', claim: state.claim, instance: state.instance, nodeName: state.nodeName }, now, s, null);
      const ready = o.ready ?? { status: 'Missing' as const };
      if (ready.status !== 'True') {
        // Karpenter measures from the condition's last transition; a Node without one, from registration
        const since = ready.since !== undefined && !Number.isNaN(Date.parse(ready.since)) ? Date.parse(ready.since) : state.registeredAt;
        if (now - since >= s.initializationMs) {
          return endLife(state, { kind: 'notReady', status: ready.status, since: new Date(since).toISOString() }, now);
        }
      }
      return { state, action: { kind: 'wait', ms: s.resyncMs }, ...(o.blocker !== undefined ? { lastError: o.blocker } : {}) };
    }
    default:
      return comingUp(state, o, now, { kind: 'reviewInitialization' });
  }
}

/**
 * Launched and Registered wait alike: a wake re-reads the claim, a deletion, disruption or
 * cancellation ends the life, and anything else re-runs the phase's review.
 */
function comingUp(state: StateOf<'Launched' | 'Registered'>, o: Observation, now: number, review: Action): Step {
  switch (o.kind) {
    case 'claimSeen': {
      const end = claimEnding(o);
      return end ? endLife(state, end, now, o.deletedAt) : { state, action: review };
    }
    case 'woken':
      return { state, action: { kind: 'observe', reviewCsrs: false } };
    case 'disruptRequested':
      return endLife(state, { kind: 'disrupted', reason: o.reason }, now);
    case 'cancelled':
      return endLife(state, teardown, now);
    default:
      return { state, action: review };
  }
}

function initialized(state: StateOf<'Initialized'>, o: Observation, now: number, s: LifecycleSettings): Step {
  switch (o.kind) {
    case 'woken':
      // a kubelet renewing its serving certificate: review on this wake
      return { state, action: { kind: 'observe', reviewCsrs: o.csr } };
    case 'claimSeen': {
      const end = claimEnding(o) ?? (o.nodeExists ? undefined : ({ kind: 'deleted', by: 'node' } as const));
      return end ? endLife(state, end, now, o.deletedAt) : steady(state, now, s);
    }
    case 'disruptRequested':
      return endLife(state, { kind: 'disrupted', reason: o.reason }, now);
    case 'cancelled':
      return endLife(state, teardown, now);
    default:
      return steady(state, now, s);
  }
}

/** Steady state: sleep until the next re-check or the expiry, whichever is first. */
function steady(state: StateOf<'Initialized'>, now: number, s: LifecycleSettings, lastError?: null): Step {
  const untilExpiry = state.claim.expireAt === undefined ? undefined : state.claim.expireAt - now;
  if (untilExpiry !== undefined && untilExpiry <= 0) return endLife(state, { kind: 'expired' }, now);
  const ms = untilExpiry === undefined ? s.steadyResyncMs : Math.min(s.steadyResyncMs, untilExpiry);
  return { state, action: { kind: 'wait', ms }, ...(lastError === null ? { lastError: null } : {}) };
}

function draining(state: StateOf<'Draining'>, o: Observation, now: number, s: LifecycleSettings): Step {
  const pastDeadline = state.deadline !== null && now >= state.deadline;
  switch (o.kind) {
    case 'drainBegun':
      return { state: { ...state, stage: 'pods' }, action: { kind: 'drain', pastDeadline } };
    case 'drained':
      if (o.done) return { state: { ...state, stage: 'volumes', backoffMs: INITIAL_BACKOFF_MS }, action: { kind: 'checkVolumes' }, lastError: null };
      return backoff(state, now, s, o.blockers ?? 'waiting for pods to leave');
    case 'volumes':
      if (o.detached || pastDeadline) return terminateStep({ phase: 'Terminating', instance: state.instance, nodeName: state.nodeName, end: state.end, stage: 'instance' });
      return backoff(state, now, s, `waiting for volumes to detach: ${o.attachments.join(', ')}`);
    default:
      // a wake, a resumed run, a cancellation or a late request: carry on with the same stage
      return resumeStep(state, now);
  }
}

/**
 * Waits before retrying the drain stage, never past the deadline. The wait doubles from
 * 1 s up to Karpenter's 10 s eviction back-off, or up to the resync interval when that is
 * longer: a drain a PDB holds for days re-polls at the pace the operator chose.
 */
function backoff(state: StateOf<'Draining'>, now: number, s: LifecycleSettings, why: string): Step {
  const ms = state.deadline === null || state.stage === 'volumes' ? state.backoffMs : Math.max(1, Math.min(state.backoffMs, state.deadline - now));
  const cap = Math.max(MAX_BACKOFF_MS, s.resyncMs);
  return { state: { ...state, backoffMs: Math.min(state.backoffMs * 2, cap) }, action: { kind: 'wait', ms }, lastError: why };
}

function terminating(state: StateOf<'Terminating'>, o: Observation): Step {
  if (state.stage === 'instance' && o.kind === 'instanceTerminated') return finalizeStep({ ...state, stage: 'finalize' });
  if (state.stage === 'finalize' && o.kind === 'finalized') {
    return { state: { phase: 'Terminated', end: state.end, ...(state.instance ? { instance: state.instance } : {}) }, action: { kind: 'finish' } };
  }
  return resumeStep(state);
}

/** The action that (re)does the current step of a phase that is already ending. */
function resumeStep(state: StateOf<'Draining' | 'Terminating' | 'Terminated'>, now?: number): Step {
  switch (state.phase) {
    case 'Draining':
      if (state.stage === 'begin') return { state, action: { kind: 'beginDrain', reason: describeEnd(state.end) } };
      if (state.stage === 'pods') return { state, action: { kind: 'drain', pastDeadline: state.deadline !== null && now !== undefined && now >= state.deadline } };
      return { state, action: { kind: 'checkVolumes' } };
    case 'Terminating':
      return state.stage === 'instance' ? terminateStep(state) : finalizeStep(state);
    case 'Terminated':
      return { state, action: { kind: 'finish' } };
    default:
      return assertNever(state);
  }
}

function terminateStep(state: StateOf<'Terminating'>): Step {
  if (state.stage === 'instance' && state.instance) return { state, action: { kind: 'terminateInstance', providerId: state.instance.providerId } };
  return finalizeStep({ ...state, stage: 'finalize' });
}

function finalizeStep(state: StateOf<'Terminating'>): Step {
  return { state, action: { kind: 'finalize', reason: describeEnd(state.end), abnormal: isAbnormalEnd(state.end) } };
}

const teardown: EndReason = { kind: 'disrupted', reason: 'workflow cancelled (teardown)' };

function claimEnding(o: { gone: boolean; deleting: boolean; nodeDeleting: boolean }): EndReason | undefined {
  if (o.gone || o.deleting) return { kind: 'deleted', by: 'nodeclaim' };
  if (o.nodeDeleting) return { kind: 'deleted', by: 'node' };
  return undefined;
}

/**
 * An activity failed for good. A launch failure ends the claim with its reason (the
 * provisioner re-plans); a claim gone mid-step ends the life; any other permanent failure
 * before the drain ends the life too, so the instance is still terminated. A step of the
 * ending itself that cannot succeed fails the workflow: retrying it is for an operator.
 */
function afterFailure(state: LifecycleState, action: string, failure: ActivityFailureInfo, now: number): Step {
  switch (state.phase) {
    case 'Pending':
    case 'Launching':
    case 'Launched':
    case 'Registered':
    case 'Initialized': {
      const end = action === 'launch' ? launchEnd(failure) : failure.type === 'NodeClaimGone' ? ({ kind: 'deleted', by: 'nodeclaim' } as const) : { kind: 'failed' as const, step: action, reason: failure.message };
      return { ...endLife(state, end, now), lastError: describeEnd(end) };
    }
    case 'Draining':
    case 'Terminating':
    case 'Terminated':
      return { state, action: { kind: 'fail', message: `${action} failed while ending NodeClaim (${describeEnd(state.end)}): ${failure.message}` }, lastError: failure.message };
    default:
      return assertNever(state);
  }
}

/** How a failed launch ends the claim (Karpenter deletes the claim in each case). */
export function launchEnd(failure: ActivityFailureInfo): EndReason {
  if (failure.timedOut) return { kind: 'launchTimeout' };
  switch (failure.type) {
    case 'InsufficientCapacity':
      return { kind: 'insufficientCapacity', offerings: exhaustedOfferings(failure.details) };
    case 'NodeClaimGone':
      return { kind: 'deleted', by: 'nodeclaim' };
    default:
      // permanent (Invalid, InvalidRequest, Authorization, …): retrying the same launch cannot succeed
      return { kind: 'launchFailed', reason: failure.message };
  }
}
