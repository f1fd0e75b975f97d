import { TERMINATION_FINALIZER, durationToMs, type ClusterRef, type CsrPolicyConfig, type LaunchedInstance } from '../../core/lifecycle';
import pLimit from 'p-limit';
import { AWAITING_BATCH_REASON, BATCH_GATE_MAX_MS, atBatchGate, batchGated, siblingsNotAtGate } from '../../core/provisioning/batch-gate';
import { DAEMONSET_GATE_ANNOTATION, DAEMONSET_GATE_LAG_MAX_MS, DAEMONSET_GATE_MAX_MS, gateHeldMs, gateHolds } from '../../core/provisioning/daemonset-gate';
import { BATCH_LABEL } from '../../core/provisioning/nodeclaims';
import { type ClusterResolver } from '../cluster';
import { failWith } from '../failures';
import { someNames } from './names';
import { attachedVolumes, drainPass } from '../kube/drain';
import { createEventRecorder } from '../kube/events';
import { NodeClaimStore, type StoredNodeClaim } from '../kube/nodeclaims';
import { daemonSetsForNode, daemonSetsInFlightTo, daemonSetsNotOnNode } from '../kube/daemonset-gate';
import { nominatePlannedPods } from '../kube/nominations';
import { DISRUPTED_TAINT, INITIALIZED_LABEL, NODEPOOL_LABEL, NodeStore, REGISTERED_LABEL, type NodeView } from '../kube/nodes';
import { activityLog } from '../log';
import { type AutonodeMetrics } from '../metrics';

/** Port: CSR review for one node (activities/kube/csr.ts implements it). */
export type ReviewNodeCsrs = (
  cluster: ClusterRef,
  input: { nodeName: string; instance: LaunchedInstance; registered: boolean; policy: CsrPolicyConfig; nodeClaim: string },
) => Promise<{ approved: string[]; denied: { name: string; check: string }[]; failed: { name: string; forbidden: boolean }[] }>;

export interface NodeClaimKubeDeps {
  resolve: ClusterResolver;
  reviewNodeCsrs: ReviewNodeCsrs;
  now?: () => Date;
  /** where terminated claims are counted */
  metrics?: AutonodeMetrics;
  /** how long one initialization review waits for a gated node's DaemonSet pods (default 5 s) */
  daemonSetGatePollMs?: number;
}

/** How long a waiting claim's read of its batch serves the other waiting claims of the process. */
const BATCH_READ_TTL_MS = 5_000;
const gateBlocker = (batch: string, coming: readonly string[]) =>
  `node cordoned until the other nodes of batch ${batch} are up (at most ${BATCH_GATE_MAX_MS / 1000} s): waiting for ${someNames(coming)}`;

export const nodeClaimRef = (claim: StoredNodeClaim) => ({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: claim.metadata.name, uid: claim.metadata.uid });


/** The claim's facts as prepare reports them: durations already in ms, times as epoch ms. */
export interface PreparedClaim {
  exists: boolean;
  uid?: string;
  deleting: boolean;
  nodePool?: string;
  createdAt?: number;
  expireAfterMs?: number;
  terminationGraceMs?: number;
}

export interface ClaimRef {
  cluster: ClusterRef;
  name: string;
}

/**
 * The NodeClaim lifecycle's Kubernetes activities (task queue `autonode-control`). Each
 * takes one object and is idempotent by the NodeClaim's name: the workflow may run any of
 * them again after a crash or a retry. A claim that vanished mid-step is a non-retryable
 * `NodeClaimGone` failure, which ends the life.
 */
export function createNodeClaimKubeActivities(deps: NodeClaimKubeDeps) {
  const now = deps.now ?? (() => new Date());
  const gatePollMs = deps.daemonSetGatePollMs ?? 5_000;
  const connect = async (cluster: ClusterRef) => {
    const c = await deps.resolve(cluster);
    return { guest: c.guest, claims: new NodeClaimStore(c.guest), nodes: new NodeStore(c.guest), event: createEventRecorder(c.guest.core) };
  };
  const batchReads = new Map<string, { at: number; claims: Promise<StoredNodeClaim[]> }>();
  const batchSiblings = (claims: NodeClaimStore, cluster: ClusterRef, batch: string, options: { fresh: boolean }): Promise<StoredNodeClaim[]> => {
    const key = `${cluster.name}/${batch}`;
    const cached = batchReads.get(key);
    const at = now().getTime();
    if (!options.fresh && cached !== undefined && at - cached.at < BATCH_READ_TTL_MS) return cached.claims;
    for (const [k, read] of batchReads) if (at - read.at >= BATCH_READ_TTL_MS) batchReads.delete(k);
    const read = { at, claims: claims.listLabelled(BATCH_LABEL, batch) };
    batchReads.set(key, read);
    read.claims.catch(() => batchReads.delete(key));
    return read.claims;
  };
  /**
   * The batch gate (core/provisioning/batch-gate.ts) for a node otherwise ready to open:
   * why it stays cordoned (the claim marked as waiting), or no blocker to open it now, with
   * the claim as last written (a status patch moves its resourceVersion) and whether its own
   * planned pods were nominated here (initialization then does not read them again). When
   * no sibling is still on its way, the waiting siblings' pods are nominated and their nodes
   * opened here with this one, all nominations first, then every cordon lifted at once: a pod
   * kube-scheduler tries while its own node is still cordoned binds into another node's slack
   * (or loses its nomination), so the window between the first node opening and the last is
   * kept as short as the API server allows (a few milliseconds; not zero: no write opens
   * several nodes at once).
   */
  const batchGate = async (cluster: ClusterRef, given: StoredNodeClaim, nodeName: string, heldMs: number): Promise<{ blocker?: string; claim: StoredNodeClaim; nominated: boolean }> => {
    let claim = given;
    const { guest, claims, nodes, event } = await connect(cluster);
    const batch = claim.metadata.labels?.[BATCH_LABEL] ?? '';
    const self = claim.metadata.name;
    const waitingBefore = atBatchGate(claim);
    // A claim already waiting reads its batch through a short-lived per-process cache: a
    // 200-claim batch reviewing every resync would otherwise list the batch ~13 times a
    // second. A stale view is safe here: a sibling seen at the gate stays there until it
    // opens (opening again is a no-op), and the last one up always reads afresh.
    let siblings = batch === '' ? [] : await batchSiblings(claims, cluster, batch, { fresh: !waitingBefore });
    let coming = siblingsNotAtGate(siblings, self);
    if (coming.length > 0 && heldMs < BATCH_GATE_MAX_MS && !waitingBefore) {
      claim = await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'Unknown', reason: AWAITING_BATCH_REASON, message: gateBlocker(batch, coming) }] }, now().toISOString());
      // Two claims arriving together could each see the other still on its way and both
      // wait. Reading again after marking itself closes that: of any two, the one whose read
      // comes last sees both marks, and opens the batch.
      siblings = await batchSiblings(claims, cluster, batch, { fresh: true });
      coming = siblingsNotAtGate(siblings, self);
    }
    if (coming.length > 0 && heldMs < BATCH_GATE_MAX_MS) return { blocker: gateBlocker(batch, coming), claim, nominated: false };
    if (coming.length > 0) {
      activityLog('warn', 'batch gate: node opened without its batch', { cluster: cluster.name, nodeclaim: claim.metadata.name, node: nodeName, batch, waitedFor: coming.length });
      await event({ involvedObject: nodeClaimRef(claim), type: 'Warning', reason: 'BatchNodesNotUp', message: `Node ${nodeName} opened after ${BATCH_GATE_MAX_MS / 1000} s without the other nodes of batch ${batch}: ${someNames(coming)} not up` });
      return { claim, nominated: false };
    }
    const waiting = siblings.filter((s) => s.metadata.name !== claim.metadata.name && s.metadata.deletionTimestamp === undefined && atBatchGate(s));
    const limit = pLimit(8);
    const nominations = await Promise.all([...waiting.map((s) => limit(() => nominatePlannedPods(guest, s, s.status?.nodeName ?? ''))), nominatePlannedPods(guest, claim, nodeName)]);
    if (nominations.some((n) => n.forbidden)) activityLog('warn', 'planned pods not nominated: forbidden to patch pods/status', { cluster: cluster.name, nodeclaim: claim.metadata.name, node: nodeName });
    await Promise.all([...waiting.map((s) => s.status?.nodeName ?? ''), nodeName].map((name) => nodes.liftDaemonSetGate(name)));
    if (waiting.length > 0) {
      activityLog('info', 'batch gate: nodes opened together', { cluster: cluster.name, nodeclaim: claim.metadata.name, batch, nodes: waiting.length + 1 });
      await event({ involvedObject: nodeClaimRef(claim), type: 'Normal', reason: 'BatchNodesOpened', message: `Opened ${waiting.length + 1} nodes of batch ${batch} together, their planned pods nominated first` });
    }
    return { claim, nominated: true };
  };
  const mustGet = async (claims: NodeClaimStore, name: string) => {
    const claim = await claims.get(name);
    if (!claim) throw failWith.permanent('NodeClaimGone', `NodeClaim ${name} no longer exists`);
    return claim;
  };

  return {
    /** Reads the claim and, unless it is being deleted, makes sure our finalizer holds it. */
    async prepareClaim({ cluster, name }: ClaimRef): Promise<PreparedClaim> {
      const { claims } = await connect(cluster);
      let claim = await claims.get(name);
      if (!claim) return { exists: false, deleting: false };
      if (!claim.metadata.deletionTimestamp) claim = await claims.ensureFinalizer(claim, TERMINATION_FINALIZER);
      const created = claim.metadata.creationTimestamp ? Date.parse(claim.metadata.creationTimestamp) : NaN;
      const expireAfterMs = claim.spec.expireAfter ? durationToMs(claim.spec.expireAfter) : undefined;
      const terminationGraceMs = claim.spec.terminationGracePeriod ? durationToMs(claim.spec.terminationGracePeriod) : undefined;
      const pool = claim.metadata.labels?.[NODEPOOL_LABEL];
      return {
        exists: true,
        uid: claim.metadata.uid,
        deleting: claim.metadata.deletionTimestamp !== undefined,
        ...(pool ? { nodePool: pool } : {}),
        ...(Number.isNaN(created) ? {} : { createdAt: created }),
        ...(expireAfterMs !== undefined ? { expireAfterMs } : {}),
        ...(terminationGraceMs !== undefined ? { terminationGraceMs } : {}),
      };
    },

    /**
     * Is the claim (and its Node) still there and not being deleted? When asked, reviews the
     * node's CSRs first (a kubelet renewing its serving certificate in steady state).
     */
    async observeClaim(input: ClaimRef & { uid: string; nodeName?: string; reviewCsrsFor?: { instance: LaunchedInstance; policy: CsrPolicyConfig } }) {
      const { claims, nodes } = await connect(input.cluster);
      if (input.reviewCsrsFor) {
        await deps.reviewNodeCsrs(input.cluster, { nodeName: input.reviewCsrsFor.instance.privateDnsName, instance: input.reviewCsrsFor.instance, registered: true, policy: input.reviewCsrsFor.policy, nodeClaim: input.name });
      }
      const claim = await claims.get(input.name);
      // a claim recreated under the same name is not ours: ours is gone
      const mine = claim !== undefined && claim.metadata.uid === input.uid;
      const nodeName = input.nodeName ?? claim?.status?.nodeName;
      const node = nodeName ? await nodes.get(nodeName) : undefined;
      const deletedAt = Date.parse(String((mine ? claim.metadata.deletionTimestamp : undefined) ?? node?.deletionTimestamp ?? ''));
      return {
        gone: !mine,
        deleting: mine && claim.metadata.deletionTimestamp !== undefined,
        nodeExists: node !== undefined,
        nodeDeleting: node?.deleting ?? false,
        ...(Number.isNaN(deletedAt) ? {} : { deletedAt }),
      };
    },

    /**
     * Reviews the CSRs naming this node, then looks for the Node by providerID. When it is
     * there, it is synced with the claim (labels, taints, finalizer, owner) and the claim
     * is Registered.
     */
    async reviewRegistration(input: ClaimRef & { instance: LaunchedInstance; policy: CsrPolicyConfig }): Promise<{ registered: boolean; nodeName?: string; denied: string[]; blocker?: string }> {
      const { guest, claims, nodes, event } = await connect(input.cluster);
      const claim = await mustGet(claims, input.name);
      const { node, named } = await nodes.findRegistered(input.instance.providerId, input.instance.privateDnsName);
      const csrs = await deps.reviewNodeCsrs(input.cluster, {
        nodeName: input.instance.privateDnsName,
        instance: input.instance,
        registered: node !== undefined,
        policy: input.policy,
        nodeClaim: input.name,
      });
      const denied = csrs.denied.map((d) => `${d.name} (${d.check})`);
      if (!node) {
        const blocker = nameTakenBy(named, input.instance);
        if (blocker) await event({ involvedObject: nodeClaimRef(claim), type: 'Warning', reason: 'NodeNameTaken', message: blocker });
        return { registered: false, denied, ...(blocker ? { blocker } : {}) };
      }
      // The last moment before the node takes pods: its planned pods are nominated to it
      // first (activities/kube/nominations.ts), once — a retry after the taint is gone must
      // not renominate pods kube-scheduler has since placed or cleared.
      // A node its DaemonSet pods belong on is cordoned for them as it registers
      // (core/provisioning/daemonset-gate.ts); initialization lifts the gate.
      let daemonSetGate: string | undefined;
      if (node.labels[REGISTERED_LABEL] !== 'true') {
        const nominations = await nominatePlannedPods(guest, claim, node.name);
        if (nominations.nominated.length > 0 || nominations.forbidden) {
          activityLog(nominations.forbidden ? 'warn' : 'info', nominations.forbidden ? 'planned pods not nominated: forbidden to patch pods/status' : 'planned pods nominated', {
            cluster: input.cluster.name, nodeclaim: input.name, node: node.name, nominated: nominations.nominated.length, skipped: nominations.skipped.length,
          });
        }
        const daemonSets = await daemonSetsForNode(guest, { ...node.labels, ...claim.metadata.labels }, claim.spec.taints ?? []);
        // the same cordon holds a node of a batch whose nodes open together (batch-gate.ts)
        if (daemonSets.length > 0 || batchGated(claim)) daemonSetGate = now().toISOString();
      }
      await nodes.syncRegistered(claim, node.name, daemonSetGate !== undefined ? { daemonSetGate } : {});
      if (claim.status?.nodeName !== node.name || !claim.status?.conditions?.some((c) => c.type === 'Registered' && c.status === 'True')) {
        await claims.patchStatus(claim, { nodeName: node.name, conditions: [{ type: 'Registered', status: 'True', reason: 'Registered', message: `Node ${node.name}` }] }, now().toISOString());
        await event({ involvedObject: nodeClaimRef(claim), type: 'Normal', reason: 'Registered', message: `Status condition transitioned, Type: Registered, Status: True, Node: ${node.name}` });
      }
      return { registered: true, nodeName: node.name, denied };
    },

    /**
     * Initialized = Ready, startup and ephemeral taints gone, requested extended resources
     * present. Reviews the node's CSRs first: the serving CSR arrives after registration.
     */
    async reviewInitialization(input: ClaimRef & { nodeName: string; instance?: LaunchedInstance; policy: CsrPolicyConfig }) {
      const { guest, claims, nodes, event } = await connect(input.cluster);
      let claim = await mustGet(claims, input.name);
      if (input.instance) {
        await deps.reviewNodeCsrs(input.cluster, { nodeName: input.instance.privateDnsName, instance: input.instance, registered: true, policy: input.policy, nodeClaim: input.name });
      }
      const node = await nodes.get(input.nodeName);
      if (!node) return { initialized: false, blocker: `Node ${input.nodeName} not found`, ready: { status: 'Missing' as const } };
      const blocker = nodes.initializationBlocker(claim, node);
      if (blocker) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'Unknown', reason: 'AwaitingInitialization', message: blocker }] }, now().toISOString());
        return { initialized: false, blocker, ready: node.readyCondition };
      }
      // A node registered before it was Ready (a real kubelet's usual order) failed every
      // pod while not-ready, and each failure cleared a nomination: the planned pods still
      // Pending are nominated again as the node becomes usable. Those already bound, or
      // nominated here still, are left as they are.
      // The DaemonSet gate: the node stays cordoned until its DaemonSet pods are bound (or,
      // past DAEMONSET_GATE_MAX_MS, judged not to fit); the planned pods are nominated before
      // it opens.
      const gateHeld = gateHeldMs(node.annotations[DAEMONSET_GATE_ANNOTATION], now().getTime());
      let unplaced: string[] = [];
      let heldMs = 0;
      if (gateHeld !== undefined) {
        // DaemonSet pods usually bind within a second of the node: waited for here a little,
        // rather than a whole resync of the lifecycle (nothing wakes it when a pod binds)
        const expected = await daemonSetsForNode(guest, node.labels, claim.spec.taints ?? []);
        const pollUntil = Date.now() + Math.min(gatePollMs, Math.max(0, DAEMONSET_GATE_MAX_MS - gateHeld));
        unplaced = await daemonSetsNotOnNode(guest, expected, node.name);
        while (unplaced.length > 0 && Date.now() < pollUntil) {
          await new Promise((r) => setTimeout(r, 250));
          unplaced = await daemonSetsNotOnNode(guest, expected, node.name);
        }
        heldMs = gateHeldMs(node.annotations[DAEMONSET_GATE_ANNOTATION], now().getTime()) ?? 0;
        // past the short wait, only a pod not yet created or not yet judged holds the node
        const inFlight = unplaced.length > 0 && heldMs >= DAEMONSET_GATE_MAX_MS ? await daemonSetsInFlightTo(guest, unplaced, node.name) : unplaced;
        if (gateHolds(heldMs, unplaced, inFlight)) {
          const gateBlocker = heldMs < DAEMONSET_GATE_MAX_MS
            ? `node cordoned until its DaemonSet pods are bound: waiting for ${unplaced.join(', ')}`
            : `node cordoned until its DaemonSet pods are bound (at most ${DAEMONSET_GATE_LAG_MAX_MS / 1000} s while a pod is not yet created or scheduled): waiting for ${inFlight.join(', ')}`;
          await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'Unknown', reason: 'AwaitingDaemonSetPods', message: gateBlocker }] }, now().toISOString());
          return { initialized: false, blocker: gateBlocker, ready: node.readyCondition };
        }
      }
      let nominated = false;
      if (gateHeld !== undefined && batchGated(claim) && node.labels[INITIALIZED_LABEL] !== 'true') {
        const gate = await batchGate(input.cluster, claim, node.name, heldMs);
        if (gate.blocker !== undefined) return { initialized: false, blocker: gate.blocker, ready: node.readyCondition };
        claim = gate.claim;
        nominated = gate.nominated;
      }
      if (node.labels[INITIALIZED_LABEL] !== 'true' && !nominated) {
        const nominations = await nominatePlannedPods(guest, claim, node.name);
        if (nominations.forbidden) activityLog('warn', 'planned pods not nominated: forbidden to patch pods/status', { cluster: input.cluster.name, nodeclaim: input.name, node: node.name });
      }
      if (gateHeld !== undefined) {
        await nodes.liftDaemonSetGate(node.name);
        if (unplaced.length > 0) {
          const after = Number.isFinite(heldMs) ? `after ${Math.round(heldMs / 1000)} s` : 'at once (its gate time was unreadable)';
          await event({ involvedObject: nodeClaimRef(claim), type: 'Warning', reason: 'DaemonSetPodsNotPlaced', message: `Node ${node.name} opened to other pods ${after} without a bound pod of ${unplaced.join(', ')}` });
        }
      }
      await nodes.label(input.nodeName, { [INITIALIZED_LABEL]: 'true' });
      await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'True', reason: 'Initialized', message: '' }] }, now().toISOString());
      await event({ involvedObject: nodeClaimRef(claim), type: 'Normal', reason: 'Initialized', message: `Node ${input.nodeName} is initialized` });
      return { initialized: true, ready: node.readyCondition };
    },

    /** Marks the node disrupted (no new pods) and says why on the claim. */
    async startDrain(input: ClaimRef & { nodeName?: string; reason: string }): Promise<void> {
      const { claims, nodes, event } = await connect(input.cluster);
      const claim = await claims.get(input.name);
      // the claim says it is draining before its node is tainted: the disruption workflow takes
      // a disrupted taint on a node whose claim is not draining for a leftover, and removes it
      if (claim) await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message: input.reason }] }, now().toISOString());
      if (input.nodeName && (await nodes.get(input.nodeName))) await nodes.ensureTaint(input.nodeName, DISRUPTED_TAINT);
      if (!claim) return;
      await event({ involvedObject: nodeClaimRef(claim), type: 'Normal', reason: 'DisruptionTerminating', message: `Draining and terminating: ${input.reason}` });
    },

    /** One eviction pass. `blockers` says what holds the drain, for the status query. */
    async drainPods(input: ClaimRef & { nodeName: string; pastDeadline: boolean }): Promise<{ done: boolean; blockers?: string }> {
      const { claims, guest, nodes } = await connect(input.cluster);
      if (!(await nodes.get(input.nodeName))) return { done: true };
      const progress = await drainPass(guest, input.nodeName, { pastDeadline: input.pastDeadline });
      const claim = await claims.get(input.name);
      const blockers = [
        progress.blockedByPdb.length > 0 ? `eviction refused by a PodDisruptionBudget: ${progress.blockedByPdb.join(', ')}` : '',
        progress.doNotDisrupt.length > 0 ? `waiting for do-not-disrupt pods until the grace period ends: ${progress.doNotDisrupt.join(', ')}` : '',
      ].filter(Boolean).join('; ');
      if (claim && progress.done) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'True', reason: 'Drained', message: '' }] }, now().toISOString());
      } else if (claim && blockers) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message: blockers }] }, now().toISOString());
      }
      if (progress.done) return { done: true };
      return { done: false, blockers: blockers || `waiting for ${progress.remaining.length} pods to leave` };
    },

    async checkVolumes(input: ClaimRef & { nodeName: string }): Promise<{ detached: boolean; attachments: string[] }> {
      const { claims, guest } = await connect(input.cluster);
      const attachments = await attachedVolumes(guest, input.nodeName);
      const claim = await claims.get(input.name);
      const detached = attachments.length === 0;
      if (claim) {
        await claims.patchStatus(
          claim,
          { conditions: [{ type: 'VolumesDetached', status: detached ? 'True' : 'False', reason: detached ? 'VolumesDetached' : 'AwaitingVolumeDetachment', message: attachments.join(', ') }] },
          now().toISOString(),
        );
      }
      return { detached, attachments };
    },

    /** Deletes the Node, then releases and deletes the NodeClaim. The last step of a life. */
    async finalizeClaim(input: ClaimRef & { uid: string; nodeName?: string; providerId?: string; reason: string; warning: boolean }): Promise<void> {
      const { claims, nodes, event } = await connect(input.cluster);
      if (input.nodeName) await nodes.deleteNode(input.nodeName);
      // A kubelet that got its certificate but registered only after the claim's life began
      // to end left a Node the claim never recorded: found by the instance's providerID.
      const unrecorded = input.providerId ? await nodes.findByProviderId(input.providerId) : undefined;
      if (unrecorded && unrecorded.name !== input.nodeName) await nodes.deleteNode(unrecorded.name);
      const claim = await claims.get(input.name);
      // A claim recreated under the same name belongs to someone else's life: leave it be.
      if (!claim || claim.metadata.uid !== input.uid) return;
      await event({
        involvedObject: nodeClaimRef(claim),
        type: input.warning ? 'Warning' : 'Normal',
        reason: input.warning ? 'TerminatedUnhealthy' : 'Terminated',
        message: `NodeClaim ${input.name} terminated: ${input.reason}`,
      });
      if (!claim.metadata.deletionTimestamp) await claims.delete(input.name);
      const current = await claims.get(input.name);
      if (current) await claims.removeFinalizer(current, TERMINATION_FINALIZER);
      // Counted by the call that found the claim still ours and let it go: a retry after this
      // point finds it gone (returns above) and does not count it again.
      const nodepool = claim.metadata.labels?.[NODEPOOL_LABEL] ?? '';
      deps.metrics?.nodeClaimsTerminated.inc({ cluster: input.cluster.name, nodepool });
      activityLog('info', 'NodeClaim terminated', { cluster: input.cluster.name, nodeclaim: input.name, nodepool, reason: input.reason });
    },
  };
}

export type NodeClaimKubeActivities = ReturnType<typeof createNodeClaimKubeActivities>;

/**
 * A kubelet names its Node after the machine's host name and, finding a Node of that name
 * already there, adopts it as its own (the kubelet does not compare providerIDs). A Node
 * left from an earlier machine with this address, or any Node of that name, therefore keeps
 * this instance from ever showing up under its providerID: say so, rather than let the
 * registration time out in silence.
 */
function nameTakenBy(named: NodeView | undefined, instance: LaunchedInstance): string | undefined {
  // without a providerID yet it may well be this instance's (a cloud controller sets it later)
  if (!named?.providerID || named.providerID === instance.providerId) return undefined;
  return (
    `Node ${named.name} already exists for ${named.providerID}, not for this claim's instance ${instance.providerId}: ` +
    'its kubelet takes that Node as its own, so this instance does not show up as a Node of its own. ' +
    `If that machine is gone, delete Node ${named.name}; unless the instance registers, the claim's registration times out and the instance is replaced`
  );
}
