import { FEATURE_GATE_DISABLED_REASON, decideHostedCluster, type ObservedHostedCluster } from '../../../core/enablement/management-watch';

const aHostedCluster = (over: Partial<ObservedHostedCluster> = {}): ObservedHostedCluster => ({ namespace: 'clusters', name: 'dev', autoNode: true, deleting: false, finalized: false, ...over });

describe('what the management watch does about a HostedCluster', () => {
  it.each([
    // gate on: spec.autoNode is a request
    ['gate on, spec.autoNode set', aHostedCluster(), true, false, 'enable'],
    ['gate on, spec.autoNode set, already running', aHostedCluster(), true, true, 'enable'],
    ['gate on, spec.autoNode removed, running', aHostedCluster({ autoNode: false }), true, true, 'disable'],
    ['gate on, spec.autoNode removed, not running', aHostedCluster({ autoNode: false }), true, false, 'none'],
    ['gate on, deleting, running', aHostedCluster({ deleting: true, finalized: true }), true, true, 'disable'],
    ['gate on, deleting, not running, our finalizer on it', aHostedCluster({ deleting: true, finalized: true }), true, false, 'finishTeardown'],
    ['gate on, deleting, never enabled', aHostedCluster({ deleting: true }), true, false, 'none'],
    // gate off: spec.autoNode alone starts nothing
    ['gate off, spec.autoNode set, not running', aHostedCluster(), false, false, 'reportGateOff'],
    ['gate off, spec.autoNode set, gate-off already reported', aHostedCluster({ enabledReason: FEATURE_GATE_DISABLED_REASON }), false, false, 'none'],
    ['gate off, enabled through the starter', aHostedCluster({ enabledReason: 'AutoNodeEnabled' }), false, true, 'wake'],
    ['gate off, spec.autoNode removed, running', aHostedCluster({ autoNode: false }), false, true, 'disable'],
    ['gate off, spec.autoNode removed after the gate-off report', aHostedCluster({ autoNode: false, enabledReason: FEATURE_GATE_DISABLED_REASON }), false, false, 'clearGateOff'],
    ['gate off, deleting, our finalizer on it', aHostedCluster({ deleting: true, finalized: true }), false, false, 'finishTeardown'],
  ])('%s → %s', (_, hc, autoprovision, running, kind) => {
    expect(decideHostedCluster(hc, { autoprovision, running }).kind).toBe(kind);
  });

  it('the gate-off report names both fixes and the HostedCluster', () => {
    const action = decideHostedCluster(aHostedCluster(), { autoprovision: false, running: false });
    expect(action.kind === 'reportGateOff' ? action.message : '').toEqual(expect.stringContaining('--feature-gates=Autoprovision=true'));
    expect(action.kind === 'reportGateOff' ? action.message : '').toEqual(expect.stringContaining('autonode enable clusters/dev --role-arn'));
  });
});
