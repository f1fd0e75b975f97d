import {
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from './activity-options';
import { declareVersioningBehavior } from './versioning';
import { autonodeKubeconfigSecret } from '../core/hostedcluster/secrets';
import type { EnablementActivities, HostedClusterRef, Observation } from '../activities/enablement/activity';
import { TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type ConditionUpdate, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

export { enablementWorkflowId } from '../core/lifecycle';

/** The HostedCluster changed (or `autonode enable` asked): look again now. */
export const hostedClusterChangedSignal = defineSignal('hostedClusterChanged');
/** `autonode disable`: tear down (every NodeClaim, instance and autonode's guest identity), then end. */
export const disableSignal = defineSignal<[{ removeCrds?: boolean }?]>('disable');

export type EnablementPhase = 'Validating' | 'Invalid' | 'Enabling' | 'Enabled' | 'Degraded' | 'Disabling' | 'Disabled';

export interface EnablementStatus {
  hostedCluster: string;
  phase: EnablementPhase;
  /** infra ID (the cluster's workflows are `autonode/<infraID>/…`) */
  cluster?: string;
  /** each step's last outcome, in order */
  steps: { step: string; at: string; ok: boolean; detail: string }[];
  problems: { field: string; reason: string; message: string }[];
  nodeCount?: number;
  nodeClaimCount?: number;
  vCPUs?: number;
  /** teardown: what is left */
  remaining?: { nodeClaims: number; instances: number };
}
export const enablementStatusQuery = defineQuery<EnablementStatus>('status');

/**
 * What the status said when the run continued as new: the next run reports it until its
 * own first reconcile, so a cluster that is Enabled does not read `Validating` (status query,
 * AutoNodePhase search attribute) for a moment after every continue-as-new.
 */
type CarriedStatus = Pick<EnablementStatus, 'phase' | 'steps' | 'nodeCount' | 'nodeClaimCount' | 'vCPUs'>;

export interface EnablementWorkflowInput {
  hostedCluster: HostedClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** how often node classes and status are reconciled while nothing signals (default 5s) */
  resync?: string;
  /** the longest a teardown waits for instances to go before it reports itself stuck (default 30m) */
  teardownDeadline?: string;
  /** a run continues as new past this many history events (default 2,000), or when the server suggests it */
  maxHistoryEvents?: number;
  /** carried across continue-as-new */
  carried?: { cluster?: ClusterRef; tokenExpiresAt?: string; tokenRenewAfter?: string; started?: boolean; interruptionQueue?: string; status?: CarriedStatus };
}

const { observeHostedCluster, reportHostedCluster } = proxyActivities<EnablementActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: ACTIVITY_HEARTBEAT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
const setUp = proxyActivities<EnablementActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: ACTIVITY_HEARTBEAT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * One HostedCluster's AutoNode, as a durable loop: validate it, set the guest up (CRDs,
 * autonode's identity), keep every EC2NodeClass on the release's AMI and the cluster's
 * userData, run the cluster's watch (and through it the provisioner), report on the
 * HostedCluster — until it is disabled or deleted, then take everything down (every
 * NodeClaim drained and its instance terminated, the identity removed) and end.
 */
export async function enablementWorkflow(input: EnablementWorkflowInput): Promise<EnablementStatus> {
  const hostedCluster = input.hostedCluster;
  const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
  const resyncMs = durationToMs(input.resync ?? '5s') ?? 5_000;
  const teardownMs = durationToMs(input.teardownDeadline ?? '30m') ?? 1_800_000;
  let cluster: ClusterRef | undefined = input.carried?.cluster;
  let tokenExpiresAt = input.carried?.tokenExpiresAt;
  // half the token's life, as enableGuest says; results from before it said so: 12 h before expiry
  let tokenRenewAfter = input.carried?.tokenRenewAfter;
  let started = input.carried?.started ?? false;
  // the queue the cluster's interruption workflow was last started for (none: not running)
  let interruptionQueue = input.carried?.interruptionQueue;
  let changed = true;
  let disable: { removeCrds: boolean } | undefined;
  const status: EnablementStatus = { hostedCluster: `${hostedCluster.namespace}/${hostedCluster.name}`, phase: 'Validating', steps: [], problems: [], ...input.carried?.status, ...(cluster ? { cluster: cluster.name } : {}) };

  setHandler(hostedClusterChangedSignal, () => void (changed = true));
  setHandler(disableSignal, (options) => void (disable = { removeCrds: options?.removeCrds ?? false }));
  setHandler(enablementStatusQuery, () => status);

  const phase = (next: EnablementPhase) => {
    status.phase = next;
    upsertSearchAttributes([{ key: AutoNodePhase, value: next }, ...(cluster ? [{ key: AutoNodeCluster, value: cluster.name }] : [])]);
  };
  const record = (step: string, ok: boolean, detail: string) => {
    status.steps = [...status.steps.filter((s) => s.step !== step), { step, at: new Date().toISOString(), ok, detail }];
  };
  const report = (conditions: ConditionUpdate[], generation?: number, withCounts = false) =>
    reportHostedCluster({ hostedCluster, conditions, ...(generation === undefined ? {} : { generation }), ...(withCounts && cluster ? { cluster } : {}) });
  phase(status.phase);

  let lastSeen: Observation | undefined;
  for (;;) {
    const observed: Observation = await observeHostedCluster({ hostedCluster });
    lastSeen = observed;
    const leaving = disable !== undefined || observed.state === 'gone' || observed.state === 'notConfigured' || ('deleting' in observed && observed.deleting);
    if (leaving) break;

    if (observed.state === 'invalid') {
      status.problems = observed.problems;
      phase('Invalid');
      const first = observed.problems[0];
      await report([{ type: 'AutoNodeEnabled', status: 'False', reason: first?.reason ?? 'InvalidHostedCluster', message: observed.problems.map((p) => `${p.field}: ${p.message}`).join('; ') }]);
      record('validate', false, observed.problems.map((p) => p.reason).join(', '));
      changed = false;
      await condition(() => changed || disable !== undefined, resyncMs * 6);
      continue;
    }
    if (observed.state !== 'ok') continue;
    const { config } = observed;
    status.problems = [];
    record('validate', true, `infraID ${config.infraID}, ${config.region}, ${config.roleARN}`);
    const generation = config.generation;

    try {
      if (!started) phase('Enabling');
      // the guest's identity: set up once, and a new token when half its life has gone
      const renewAt = tokenRenewAfter ? Date.parse(tokenRenewAfter) : tokenExpiresAt ? Date.parse(tokenExpiresAt) - 12 * 3600_000 : 0;
      if (!cluster || cluster.name !== config.infraID || cluster.credentialsRef !== config.roleARN || Date.now() >= renewAt) {
        if (!started) await report([{ type: 'AutoNodeProgressing', status: 'True', reason: 'InstallingGuest', message: 'installing autonode CRDs and identity in the guest cluster' }], generation);
        const guest = await setUp.enableGuest({ hostedCluster });
        tokenExpiresAt = guest.tokenExpiresAt;
        tokenRenewAfter = guest.tokenRenewAfter;
        cluster = { name: config.infraID, region: config.region, credentialsRef: config.roleARN, kubeconfigSecret: guest.kubeconfigSecret };
        status.cluster = cluster.name;
        record('guest', true, `CRDs and RBAC applied; token until ${guest.tokenExpiresAt}`);
      }
      const classes = await setUp.reconcileNodeClasses({ hostedCluster, infraID: config.infraID, region: config.region, releaseImage: config.releaseImage });
      record('nodeClasses', true, `${classes.classes} EC2NodeClass(es); AMI ${Object.entries(classes.images).map(([a, id]) => `${a} ${id}`).join(', ')}${classes.created.length ? `; created ${classes.created.join(', ')}` : ''}${classes.updated.length ? `; updated ${classes.updated.join(', ')}` : ''}`);
      if (!started) {
        await setUp.startClusterWorkflows({ cluster, taskQueues });
        started = true;
        record('workflows', true, `autonode/${cluster.name}/watch running`);
      }
      // Interruption handling runs while the HostedCluster names a queue. Runs recorded
      // before it existed never see a queue in their observations, so never get here.
      if (config.interruptionQueue !== interruptionQueue && patched('interruption-queue')) {
        await setUp.syncInterruption({ cluster, taskQueues, ...(config.interruptionQueue ? { queue: config.interruptionQueue } : {}) });
        interruptionQueue = config.interruptionQueue;
        record('interruption', true, interruptionQueue ? `autonode/${cluster.name}/interruption polling SQS queue ${interruptionQueue}` : 'no interruption queue: interruption handling off');
      }
      const counts = await report(
        [
          { type: 'AutoNodeEnabled', status: 'True', reason: 'AutoNodeEnabled', message: 'autonode provisions nodes for this cluster' },
          { type: 'AutoNodeProgressing', status: 'False', reason: 'AsExpected', message: '' },
          { type: 'AutoNodeDegraded', status: 'False', reason: 'AsExpected', message: '' },
        ],
        generation,
        true,
      );
      if (counts) Object.assign(status, counts);
      phase('Enabled');
    } catch (err) {
      const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      record('reconcile', false, message);
      phase('Degraded');
      await report([{ type: 'AutoNodeDegraded', status: 'True', reason: 'ReconcileFailed', message }], generation);
    }

    changed = false;
    await condition(() => changed || disable !== undefined, resyncMs);
    const info = workflowInfo();
    if (disable === undefined && (info.continueAsNewSuggested || info.historyLength > (input.maxHistoryEvents ?? 2_000))) {
      const { phase: carriedPhase, steps, nodeCount, nodeClaimCount, vCPUs } = status;
      const carriedStatus: CarriedStatus = { phase: carriedPhase, steps, ...(nodeCount === undefined ? {} : { nodeCount }), ...(nodeClaimCount === undefined ? {} : { nodeClaimCount }), ...(vCPUs === undefined ? {} : { vCPUs }) };
      await continueAsNew<typeof enablementWorkflow>({ ...input, carried: { ...(cluster ? { cluster } : {}), ...(tokenExpiresAt ? { tokenExpiresAt } : {}), ...(tokenRenewAfter ? { tokenRenewAfter } : {}), started, ...(interruptionQueue ? { interruptionQueue } : {}), status: carriedStatus } });
    }
  }

  // A teardown-only run (the HostedCluster deleted while no enablement ran for it, its
  // finalizer still there) has set nothing up itself: its cluster is the one the spec names,
  // acting through the identity Secret an earlier run wrote — else its instances would leak.
  if (cluster === undefined && lastSeen?.state === 'ok' && patched('teardown-cluster-from-spec')) {
    const { config } = lastSeen;
    cluster = { name: config.infraID, region: config.region, credentialsRef: config.roleARN, kubeconfigSecret: autonodeKubeconfigSecret(hostedCluster) };
    status.cluster = cluster.name;
  }

  // Teardown: no new capacity, every claim drained and terminated, then autonode leaves.
  phase('Disabling');
  await report([{ type: 'AutoNodeProgressing', status: 'True', reason: 'Disabling', message: 'deleting every NodeClaim and waiting for their instances to terminate' }]);
  if (cluster) {
    await setUp.stopProvisioning({ cluster, taskQueues });
    const deadline = Date.now() + teardownMs;
    for (;;) {
      const left = await setUp.removeNodeClaims({ hostedCluster, cluster });
      status.remaining = left;
      record('teardown', left.nodeClaims === 0 && left.instances === 0, `${left.nodeClaims} NodeClaim(s), ${left.instances} instance(s) left`);
      if (left.nodeClaims === 0 && left.instances === 0) break;
      if (Date.now() > deadline) {
        await report([{ type: 'AutoNodeDegraded', status: 'True', reason: 'TeardownStuck', message: `${left.nodeClaims} NodeClaim(s) and ${left.instances} instance(s) still there after ${input.teardownDeadline ?? '30m'}` }]);
        throw ApplicationFailure.nonRetryable(`teardown of ${status.hostedCluster} stuck: ${left.nodeClaims} NodeClaim(s), ${left.instances} instance(s) left`);
      }
      await sleep('5 seconds');
    }
  }
  await setUp.disableGuest({ hostedCluster, ...(cluster ? { cluster } : {}), removeCrds: disable?.removeCrds ?? false });
  await reportHostedCluster({ hostedCluster, conditions: [{ type: 'AutoNodeEnabled', status: 'False', reason: 'Disabled', message: 'autonode is not enabled for this cluster' }], clear: true });
  record('disable', true, 'every NodeClaim and instance gone; autonode removed from the guest');
  phase('Disabled');
  return status;
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (patched() and the committed histories
// keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', enablementWorkflow);
