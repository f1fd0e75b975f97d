// The lifecycle's transition table: one row per rule of core/lifecycle/decide.ts, each a
// (state, observation, clock) → (next phase, action) that a broken rule would get wrong.
import {
  LifecycleStateSchema,
  decide,
  type Action,
  type LaunchedInstance,
  type LifecycleSettings,
  type LifecycleState,
  type Observation,
  type StateOf,
} from '../../../core/lifecycle';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MIN = 60_000;
const settings: LifecycleSettings = { uid: 'uid-1', registrationMs: 15 * MIN, initializationMs: 30 * MIN, resyncMs: 15_000, steadyResyncMs: 5 * MIN };

const instance: LaunchedInstance = {
  providerId: 'aws:///us-east-1a/i-0abc',
  instanceId: 'i-0abc',
  instanceType: 'm5.large',
  zone: 'us-east-1a',
  capacityType: 'on-demand',
  imageId: 'ami-1',
  privateDnsName: 'ip-10-0-0-1.ec2.internal',
  privateIpAddresses: ['10-0-0-1'],
  launchTime: '2026-06-01T11:59:00Z',
};
const claim = { nodePool: 'default' };
const pending: StateOf<'Pending'> = { phase: 'Pending' };
const launching: StateOf<'Launching'> = { phase: 'Launching', claim };
const launched: StateOf<'Launched'> = { phase: 'Launched', claim, instance, registerBy: NOW + 10 * MIN };
const registered: StateOf<'Registered'> = { phase: 'Registered', claim, instance, nodeName: 'n1', registeredAt: NOW - MIN };
const initialized: StateOf<'Initialized'> = { phase: 'Initialized', claim, instance, nodeName: 'n1' };
const withGrace = (s: StateOf<'Initialized'>, ms: number): StateOf<'Initialized'> => ({ ...s, claim: { ...s.claim, terminationGraceMs: ms } });
const draining = (patch: Partial<StateOf<'Draining'>> = {}): StateOf<'Draining'> => ({
  phase: 'Draining', instance, nodeName: 'n1', end: { kind: 'expired' }, stage: 'pods', deadline: null, backoffMs: 1_000, ...patch,
});
const terminating = (patch: Partial<StateOf<'Terminating'>> = {}): StateOf<'Terminating'> => ({ phase: 'Terminating', instance, nodeName: 'n1', end: { kind: 'expired' }, stage: 'instance', ...patch });

const woken: Observation = { kind: 'woken', by: 'timer', csr: false };
const seen = (p: Partial<{ gone: boolean; deleting: boolean; nodeExists: boolean; nodeDeleting: boolean }> = {}): Observation => ({ kind: 'claimSeen', gone: false, deleting: false, nodeExists: true, nodeDeleting: false, ...p });
const failed = (action: string, failure: { type?: string; message?: string; timedOut?: boolean; details?: unknown }): Observation => ({ kind: 'failed', action, failure: { message: 'boom', ...failure } });

type Row = [rule: string, state: LifecycleState, observation: Observation, now: number, phase: LifecycleState['phase'], action: Partial<Action> & { kind: Action['kind'] }];

const rows: Row[] = [
  // Pending
  ['a fresh run prepares the claim', pending, { kind: 'started' }, NOW, 'Pending', { kind: 'prepare' }],
  ['a claim that is gone ends the life at once', pending, { kind: 'prepared', exists: false, deleting: false }, NOW, 'Terminated', { kind: 'finish' }],
  ['a claim recreated under the same name restarts for its uid', pending, { kind: 'prepared', exists: true, uid: 'uid-2', deleting: false }, NOW, 'Pending', { kind: 'restart', uid: 'uid-2' }],
  ['a claim already deleting is finalized without a launch', pending, { kind: 'prepared', exists: true, uid: 'uid-1', deleting: true }, NOW, 'Terminating', { kind: 'finalize', abnormal: false }],
  ['a live claim is launched', pending, { kind: 'prepared', exists: true, uid: 'uid-1', deleting: false }, NOW, 'Launching', { kind: 'launch' }],
  // Launching
  ['a launch moves to Launched and reviews registration', launching, { kind: 'launched', instance }, NOW, 'Launched', { kind: 'reviewRegistration' }],
  ['insufficient capacity ends the claim (the provisioner re-plans)', launching, failed('launch', { type: 'InsufficientCapacity', details: { offerings: [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' }] } }), NOW, 'Terminating', { kind: 'finalize', abnormal: true }],
  ['the launch timeout ends the claim', launching, failed('launch', { timedOut: true }), NOW, 'Terminating', { kind: 'finalize', reason: 'the instance was not launched within the launch timeout' }],
  ['an invalid launch ends the claim with its reason', launching, failed('launch', { type: 'Invalid', message: 'no type fits' }), NOW, 'Terminating', { kind: 'finalize', reason: 'the launch failed: no type fits' }],
  ['a claim deleted during the launch ends it', launching, failed('launch', { type: 'NodeClaimGone' }), NOW, 'Terminating', { kind: 'finalize', abnormal: false }],
  ['cancellation during the launch finalizes (GC collects a stray instance)', launching, { kind: 'cancelled' }, NOW, 'Terminating', { kind: 'finalize' }],
  // Launched
  ['not registered yet: wait one resync', launched, { kind: 'registration', registered: false, denied: [] }, NOW, 'Launched', { kind: 'wait', ms: 15_000 }],
  ['the wait never passes the registration deadline', launched, { kind: 'registration', registered: false, denied: [] }, NOW + 10 * MIN - 5_000, 'Launched', { kind: 'wait', ms: 5_000 }],
  ['the registration timeout terminates the instance (no drain)', launched, { kind: 'registration', registered: false, denied: [] }, NOW + 10 * MIN, 'Terminating', { kind: 'terminateInstance', providerId: instance.providerId }],
  ['a registered Node moves to Registered', launched, { kind: 'registration', registered: true, nodeName: 'n1', denied: [] }, NOW, 'Registered', { kind: 'reviewInitialization' }],
  ['a wake while launched re-reads the claim', launched, woken, NOW, 'Launched', { kind: 'observe', reviewCsrs: false }],
  ['a claim deleted while launched terminates the instance', launched, seen({ deleting: true }), NOW, 'Terminating', { kind: 'terminateInstance' }],
  ['a claim still there while launched: review registration again', launched, seen(), NOW, 'Launched', { kind: 'reviewRegistration' }],
  ['a disruption while launched terminates the instance', launched, { kind: 'disruptRequested', reason: 'drift' }, NOW, 'Terminating', { kind: 'terminateInstance' }],
  // Registered
  ['initialized moves to steady state', registered, { kind: 'initialization', initialized: true }, NOW, 'Initialized', { kind: 'wait', ms: 5 * MIN }],
  ['a Ready node held by a startup taint is waited for', { ...registered, registeredAt: NOW - 10 * 60 * MIN }, { kind: 'initialization', initialized: false, blocker: 'startup taint', ready: { status: 'True' } }, NOW, 'Registered', { kind: 'wait', ms: 15_000 }],
  ['not Ready for less than the initialization timeout: wait', registered, { kind: 'initialization', initialized: false, ready: { status: 'False', since: new Date(NOW - 29 * MIN).toISOString() } }, NOW, 'Registered', { kind: 'wait' }],
  ['not Ready for the initialization timeout: replaced, forcefully', registered, { kind: 'initialization', initialized: false, ready: { status: 'Unknown', since: new Date(NOW - 31 * MIN).toISOString() } }, NOW, 'Draining', { kind: 'beginDrain' }],
  ['no Ready condition at all counts from registration', { ...registered, registeredAt: NOW - 30 * MIN }, { kind: 'initialization', initialized: false, ready: { status: 'Missing' } }, NOW, 'Draining', { kind: 'beginDrain' }],
  ['a Node deleted while registering drains', registered, seen({ nodeDeleting: true }), NOW, 'Draining', { kind: 'beginDrain', reason: 'the Node was deleted' }],
  // Initialized
  ['steady state sleeps until the next re-check', initialized, woken, NOW, 'Initialized', { kind: 'observe', reviewCsrs: false }],
  ['a CSR signal reviews CSRs on the next observe', initialized, { kind: 'woken', by: 'event', csr: true }, NOW, 'Initialized', { kind: 'observe', reviewCsrs: true }],
  ['steady state never sleeps past expiry', { ...initialized, claim: { expireAt: NOW + MIN } }, seen(), NOW, 'Initialized', { kind: 'wait', ms: MIN }],
  ['expiry drains the node', { ...initialized, claim: { expireAt: NOW } }, seen(), NOW, 'Draining', { kind: 'beginDrain', reason: 'expireAfter elapsed' }],
  ['a vanished Node ends the life', initialized, seen({ nodeExists: false }), NOW, 'Draining', { kind: 'beginDrain', reason: 'the Node was deleted' }],
  ['a deleted claim drains', initialized, seen({ gone: true }), NOW, 'Draining', { kind: 'beginDrain', reason: 'the NodeClaim was deleted' }],
  ['a disruption drains with its reason', initialized, { kind: 'disruptRequested', reason: 'underutilized' }, NOW, 'Draining', { kind: 'beginDrain', reason: 'disrupted: underutilized' }],
  ['cancellation (teardown) drains', initialized, { kind: 'cancelled' }, NOW, 'Draining', { kind: 'beginDrain', reason: 'disrupted: workflow cancelled (teardown)' }],
  ['a permanent failure of a step ends the life (no leak)', initialized, failed('observe', { type: 'Invalid', message: 'bad' }), NOW, 'Draining', { kind: 'beginDrain', reason: 'observe failed: bad' }],
  // Draining
  ['the drain begins, then evicts pods', draining({ stage: 'begin' }), { kind: 'drainBegun' }, NOW, 'Draining', { kind: 'drain', pastDeadline: false }],
  ['a drain held by a PDB backs off', draining(), { kind: 'drained', done: false, blockers: 'pdb' }, NOW, 'Draining', { kind: 'wait', ms: 1_000 }],
  ['the back-off never passes the grace deadline', draining({ deadline: NOW + 300, backoffMs: 8_000 }), { kind: 'drained', done: false }, NOW, 'Draining', { kind: 'wait', ms: 300 }],
  ['past the grace deadline the drain is forced', draining({ deadline: NOW - 1 }), woken, NOW, 'Draining', { kind: 'drain', pastDeadline: true }],
  ['a drained node waits for volumes', draining(), { kind: 'drained', done: true }, NOW, 'Draining', { kind: 'checkVolumes' }],
  ['attached volumes are waited for', draining({ stage: 'volumes' }), { kind: 'volumes', detached: false, attachments: ['pv-1'] }, NOW, 'Draining', { kind: 'wait' }],
  ['past the grace deadline volumes are not waited for', draining({ stage: 'volumes', deadline: NOW - 1 }), { kind: 'volumes', detached: false, attachments: ['pv-1'] }, NOW, 'Terminating', { kind: 'terminateInstance' }],
  ['detached volumes terminate the instance', draining({ stage: 'volumes' }), { kind: 'volumes', detached: true, attachments: [] }, NOW, 'Terminating', { kind: 'terminateInstance' }],
  ['a late disruption does not restart the drain', draining(), { kind: 'disruptRequested', reason: 'x' }, NOW, 'Draining', { kind: 'drain' }],
  ['a failure while draining fails the workflow, visibly', draining(), failed('drain', { type: 'Invalid' }), NOW, 'Draining', { kind: 'fail' }],
  // Terminating
  ['a terminated instance is finalized', terminating(), { kind: 'instanceTerminated' }, NOW, 'Terminating', { kind: 'finalize', reason: 'expireAfter elapsed', abnormal: false }],
  ['finalized ends the workflow', terminating({ stage: 'finalize' }), { kind: 'finalized' }, NOW, 'Terminated', { kind: 'finish' }],
  ['a resumed run redoes its termination step', terminating(), { kind: 'started' }, NOW, 'Terminating', { kind: 'terminateInstance' }],
];

describe('the NodeClaim lifecycle, as a transition table', () => {
  it.each(rows)('%s', (_rule, state, observation, now, phase, action) => {
    const step = decide(state, observation, now, settings);
    expect(step.state.phase).toBe(phase);
    expect(step.action).toEqual(expect.objectContaining(action));
    // every state decide produces is plain data that survives continue-as-new
    expect(LifecycleStateSchema.parse(JSON.parse(JSON.stringify(step.state)))).toEqual(step.state);
  });

  it('carries the claim facts from prepare: expiry counts from the claim\'s creation', () => {
    const step = decide(pending, { kind: 'prepared', exists: true, uid: 'uid-1', deleting: false, createdAt: NOW - 10 * MIN, expireAfterMs: 60 * MIN, terminationGraceMs: 5 * MIN, nodePool: 'p' }, NOW, settings);
    expect(step.state).toEqual({ phase: 'Launching', claim: { nodePool: 'p', expireAt: NOW + 50 * MIN, terminationGraceMs: 5 * MIN } });
  });

  it('sets the drain deadline from terminationGracePeriod, and none without one', () => {
    const withDeadline = decide(withGrace(initialized, 90_000), { kind: 'disruptRequested', reason: 'r' }, NOW, settings).state;
    const without = decide(initialized, { kind: 'disruptRequested', reason: 'r' }, NOW, settings).state;
    expect(withDeadline).toEqual(expect.objectContaining({ phase: 'Draining', deadline: NOW + 90_000 }));
    expect(without).toEqual(expect.objectContaining({ phase: 'Draining', deadline: null }));
  });

  it('a deleted claim\'s grace period runs from its deletionTimestamp, not from when the workflow saw it', () => {
    const seen = { kind: 'claimSeen', gone: false, deleting: true, nodeExists: true, nodeDeleting: false } as const;
    expect(decide(withGrace(initialized, 10 * MIN), { ...seen, deletedAt: NOW - 4 * MIN }, NOW, settings).state).toEqual(expect.objectContaining({ phase: 'Draining', deadline: NOW + 6 * MIN }));
    // histories from before deletedAt was read: from now, as they always did
    expect(decide(withGrace(initialized, 10 * MIN), seen, NOW, settings).state).toEqual(expect.objectContaining({ phase: 'Draining', deadline: NOW + 10 * MIN }));
    // a clock skewed ahead never extends the grace past now + period
    expect(decide(withGrace(initialized, 10 * MIN), { ...seen, deletedAt: NOW + MIN }, NOW, settings).state).toEqual(expect.objectContaining({ deadline: NOW + 10 * MIN }));
  });

  it.each([
    ['Karpenter\'s 10 s', 5_000, [1_000, 2_000, 4_000, 8_000, 10_000, 10_000]],
    ['the resync interval when longer', 15_000, [1_000, 2_000, 4_000, 8_000, 15_000, 15_000]],
  ])('doubles the drain back-off up to %s', (_name, resyncMs, expected) => {
    let state: LifecycleState = draining();
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const step = decide(state, { kind: 'drained', done: false }, NOW, { ...settings, resyncMs });
      if (step.action.kind === 'wait') waits.push(step.action.ms);
      state = step.state;
    }
    expect(waits).toEqual(expected);
  });

  it('keeps the exhausted offerings of an insufficient-capacity launch in the ending', () => {
    const offerings = [{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' }];
    const step = decide(launching, failed('launch', { type: 'InsufficientCapacity', details: { offerings } }), NOW, settings);
    expect(step.state).toEqual(expect.objectContaining({ end: { kind: 'insufficientCapacity', offerings } }));
  });

  it('reports denied CSRs and drain blockers for the status query', () => {
    expect(decide(launched, { kind: 'registration', registered: false, denied: ['csr-1 (request)'] }, NOW, settings).lastError).toBe('denied CSRs: csr-1 (request)');
    expect(decide(draining(), { kind: 'drained', done: false, blockers: 'eviction refused by a PodDisruptionBudget: default/web' }, NOW, settings).lastError).toMatch(/PodDisruptionBudget/);
  });

  it('reports what keeps a launched instance from registering, with any denied CSRs, and keeps waiting', () => {
    const taken = 'Node ip-10-0-0-4.ec2.internal belongs to aws:///us-east-1a/i-old';
    const step = decide(launched, { kind: 'registration', registered: false, denied: ['csr-2 (oneClientCertificate)'], blocker: taken }, NOW, settings);
    expect(step.lastError).toBe(`${taken}; denied CSRs: csr-2 (oneClientCertificate)`);
    expect(step.state.phase).toBe('Launched');
    expect(step.action).toEqual({ kind: 'wait', ms: 15_000 });
    expect(decide(launched, { kind: 'registration', registered: false, denied: [] }, NOW, settings).lastError).toBeUndefined();
  });
});
