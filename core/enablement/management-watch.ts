/**
 * What the management-cluster watch does about one HostedCluster, as a pure decision.
 *
 * With the `Autoprovision` feature gate on, `spec.autoNode` is a request: the watch starts
 * (or wakes) the cluster's enablement workflow, and tells it to tear down when the field
 * goes away or the HostedCluster is being deleted. With the gate off, `spec.autoNode` alone
 * starts nothing — the watch only says so on the HostedCluster, naming the fix, so an
 * operator who set the field by hand is not left wondering. A cluster enabled through the
 * starter (`autonode enable`) runs either way; the watch then only wakes its workflow.
 */

export const FEATURE_GATE_DISABLED_REASON = 'FeatureGateDisabled';

/** One per Temporal namespace: the workers' view of the management cluster. */
export const MANAGEMENT_WATCH_WORKFLOW_ID = 'autonode/management/watch';

/** What the watch sees of a HostedCluster (no secrets, no spec beyond presence). */
export interface ObservedHostedCluster {
  namespace: string;
  name: string;
  /** spec.autoNode is present (valid or not: the enablement workflow validates and reports) */
  autoNode: boolean;
  deleting: boolean;
  /** autonode's finalizer is on it (an enablement set it and has not finished its teardown) */
  finalized: boolean;
  /** the reason of its AutoNodeEnabled condition, if any */
  enabledReason?: string;
}

export type ManagementAction =
  /** signal-with-start the enablement workflow (`hostedClusterChanged`) */
  | { kind: 'enable' }
  /** wake the running enablement workflow; never start one */
  | { kind: 'wake' }
  /** tell the running enablement workflow to tear down */
  | { kind: 'disable' }
  /** start an enablement workflow only to tear down: the HostedCluster's deletion waits on our finalizer */
  | { kind: 'finishTeardown' }
  /** write AutoNodeEnabled=False / FeatureGateDisabled */
  | { kind: 'reportGateOff'; message: string }
  /** remove the FeatureGateDisabled condition written earlier (spec.autoNode went away) */
  | { kind: 'clearGateOff' }
  | { kind: 'none' };

export function gateOffMessage(hc: { namespace: string; name: string }): string {
  return (
    'spec.autoNode is set, but the autonode workers run without the Autoprovision feature gate, so nothing acts on it: ' +
    `run the workers with --feature-gates=Autoprovision=true (or AUTONODE_FEATURE_GATES=Autoprovision=true), ` +
    `or enable this cluster explicitly with \`autonode enable ${hc.namespace}/${hc.name} --role-arn <arn>\``
  );
}

/**
 * @param running whether an enablement workflow for this HostedCluster is running now
 */
export function decideHostedCluster(hc: ObservedHostedCluster, options: { autoprovision: boolean; running: boolean }): ManagementAction {
  const { autoprovision, running } = options;
  if (hc.deleting) {
    if (running) return { kind: 'disable' };
    // Nobody would ever remove the finalizer: a teardown-only run does (with or without the gate,
    // as the finalizer is autonode's promise that deletion waits for the instances).
    return hc.finalized ? { kind: 'finishTeardown' } : { kind: 'none' };
  }
  if (!hc.autoNode) {
    if (running) return { kind: 'disable' };
    return hc.enabledReason === FEATURE_GATE_DISABLED_REASON ? { kind: 'clearGateOff' } : { kind: 'none' };
  }
  if (autoprovision) return { kind: 'enable' };
  if (running) return { kind: 'wake' };
  return hc.enabledReason === FEATURE_GATE_DISABLED_REASON ? { kind: 'none' } : { kind: 'reportGateOff', message: gateOffMessage(hc) };
}
