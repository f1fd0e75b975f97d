/**
 * The interruption workflow's activities. On the cloud queue, the SQS side: a heartbeating
 * long poll that parses what it receives (core/interruption), and the deletion of handled
 * messages. On the control queue, the guest side: messages matched to NodeClaims by
 * instance id, Karpenter's Events, and the claims' deletion (each one's workflow drains and
 * terminates, as after `kubectl delete nodeclaim`).
 *
 * Nothing here fails on a message: an unparseable one, an unknown instance or another
 * cluster's is an outcome (logged, counted) and the message is deleted like any other. An
 * activity fails only when SQS or the API server does, and then the workflow keeps the
 * messages for SQS to deliver again.
 */
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import {
  SPOT_WARNING_MS,
  TERMINATING_ON_INTERRUPTION,
  claimAction,
  eventTimeOf,
  interruptedOffering,
  matchMessage,
  noticeEvent,
  parseInterruptionMessage,
  type ClaimAction,
  type InterruptibleClaim,
  type InterruptionKind,
  type ParsedMessage,
  type UnavailableSpotOffering,
} from '../../core/interruption';
import { ClusterRefSchema, type ClusterRef } from '../../core/lifecycle';
import { type CloudClusterRef } from '../cloud/domain';
import { parseProviderId } from '../cloud/provider-id';
import { silentLogger, systemClock } from '../cloud/ports';
import { defaultRetryPolicy } from '../cloud/retry';
import { withCloudFailures } from '../cloud/temporal-failures';
import { type ClusterResolver } from '../cluster';
import { createEventRecorder, type RecordEvent } from '../kube/events';
import { NodeClaimStore, type StoredNodeClaim } from '../kube/nodeclaims';
import { DISRUPTED_TAINT, DISRUPTED_UNTIL_ANNOTATION, NODEPOOL_LABEL, NodeStore } from '../kube/nodes';
import { activityLog } from '../log';
import { type AutonodeMetrics } from '../metrics';
import { interruptionQueue, type InterruptionQueue, type SqsApi } from './sqs';

/** How long after an interruption job's drain deadline its taint still marks the node as its own. */
const INTERRUPTION_HOLD_AFTER_DRAIN_MS = 5 * 60_000;

/** A received message as the workflow carries it: parsed, with what deleting it needs. No body. */
export interface ReceivedInterruption {
  messageId: string;
  receipt: string;
  /** epoch ms: when SQS took it in, and when this poll received it */
  sentAt?: number;
  receivedAt: number;
  message: ParsedMessage;
}

/** A claim whose replacement the workflow launches before its drain. */
export interface ReplacementJob {
  nodeClaim: string;
  node: string;
  nodePool: string;
  kind: InterruptionKind;
  /** epoch ms: the drain begins then at the latest */
  drainBy: number;
  /** the offering the interruption took away: the replacement is planned without it */
  offering?: UnavailableSpotOffering;
}

export interface HandledInterruptions {
  /** per message: what was done, for the status query */
  outcomes: { messageId: string; kind: ParsedMessage['kind']; claims: { name: string; action: ClaimAction['kind'] }[]; unmatched: number }[];
  /** spot offerings to hold unavailable in the provisioner */
  offerings: UnavailableSpotOffering[];
  replace: ReplacementJob[];
}

const nodeClaimRef = (name: string) => ({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name });
const nodeRef = (name: string) => ({ apiVersion: 'v1', kind: 'Node', name });
/** the part of an unparseable message's reason kept in history and logs: enough to recognise it */
const brief = (why: string) => (why.length > 200 ? `${why.slice(0, 200)}…` : why);

export interface InterruptionQueueActivityDeps {
  /** the cluster's SQS client (its role's credentials); absent: this worker cannot poll a queue */
  sqsClientFor?: (cluster: CloudClusterRef) => SqsApi;
  metrics?: AutonodeMetrics;
  now?: () => number;
  /** how often a long poll heartbeats (default 5 s) */
  heartbeatMs?: number;
}

/** The cloud queue's side: receive (a heartbeating long poll) and delete. */
export function createInterruptionQueueActivities(deps: InterruptionQueueActivityDeps) {
  const now = deps.now ?? Date.now;
  const queues = new Map<string, InterruptionQueue>();
  const queueFor = (cluster: ClusterRef, name: string): InterruptionQueue => {
    if (!deps.sqsClientFor) throw new Error('this worker has no SQS client: it was started without an SQS endpoint or credentials (workers/main.ts builds one)');
    const key = JSON.stringify([cluster.name, cluster.region, cluster.credentialsRef, name]);
    let queue = queues.get(key);
    if (!queue) {
      const ref = { name: cluster.name, region: cluster.region, ...(cluster.credentialsRef ? { credentialsRef: cluster.credentialsRef } : {}) };
      queue = interruptionQueue(deps.sqsClientFor(ref), name, { policy: { ...defaultRetryPolicy, maxAttempts: 3 }, clock: systemClock, logger: silentLogger });
      queues.set(key, queue);
    }
    return queue;
  };

  return {
    /**
     * One long poll of the cluster's queue (up to 10 messages, 20 s), heartbeating while it
     * waits; every message parsed. Counted as received by kind (Karpenter's metric); an
     * unparseable one is logged and counted apart, and returned like the others so it is
     * deleted after the round.
     */
    async receiveInterruptionMessages(raw: { cluster: ClusterRef; queue: string }): Promise<{ messages: ReceivedInterruption[] }> {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const queueName = z.string().min(1).parse(raw.queue);
      return withCloudFailures(async () => {
        const ctx = Context.current();
        const beat = setInterval(() => ctx.heartbeat(), deps.heartbeatMs ?? 5_000);
        let received;
        try {
          received = await queueFor(cluster, queueName).receive({ abortSignal: ctx.cancellationSignal });
        } finally {
          clearInterval(beat);
        }
        const receivedAt = now();
        const messages = received.map((m): ReceivedInterruption => {
          const parsed = parseInterruptionMessage(m.body);
          const message: ParsedMessage = parsed.kind === 'unparseable' ? { kind: 'unparseable', why: brief(parsed.why) } : parsed;
          if (message.kind === 'unparseable') {
            deps.metrics?.interruptionIgnored.inc({ cluster: cluster.name, reason: 'unparseable' });
            activityLog('warn', 'interruption message unparseable; deleting it', { cluster: cluster.name, queue: queueName, messageId: m.messageId, why: message.why });
          } else {
            deps.metrics?.interruptionReceived.inc({ cluster: cluster.name, message_type: message.kind });
          }
          return { messageId: m.messageId, receipt: m.receipt, ...(m.sentAt !== undefined ? { sentAt: m.sentAt } : {}), receivedAt, message };
        });
        return { messages };
      });
    },

    /** Deletes handled messages; one that cannot be is logged and comes back (handling is idempotent). */
    async deleteInterruptionMessages(raw: { cluster: ClusterRef; queue: string; messages: { messageId: string; receipt: string }[] }): Promise<{ deleted: number; failed: number }> {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const queueName = z.string().min(1).parse(raw.queue);
      const messages = z.array(z.object({ messageId: z.string(), receipt: z.string() })).parse(raw.messages);
      return withCloudFailures(async () => {
        const { deleted, failed } = await queueFor(cluster, queueName).delete(messages);
        if (deleted.length > 0) deps.metrics?.interruptionDeleted.inc({ cluster: cluster.name }, deleted.length);
        for (const f of failed) activityLog('warn', 'interruption message not deleted; SQS delivers it again', { cluster: cluster.name, queue: queueName, messageId: f.messageId, why: f.why });
        return { deleted: deleted.length, failed: failed.length };
      });
    },
  };
}

export interface InterruptionActivityDeps {
  resolve: ClusterResolver;
  metrics?: AutonodeMetrics;
  now?: () => number;
}

const ReceivedSchema = z.array(
  z.object({
    messageId: z.string(),
    sentAt: z.number().optional(),
    receivedAt: z.number(),
    message: z.custom<ParsedMessage>((v) => typeof v === 'object' && v !== null && 'kind' in v),
  }),
);

/** The control queue's side: match, tell, and delete claims. */
export function createInterruptionActivities(deps: InterruptionActivityDeps) {
  const now = deps.now ?? Date.now;
  const connect = async (raw: unknown) => {
    const cluster = ClusterRefSchema.parse(raw);
    const { guest } = await deps.resolve(cluster);
    return { cluster, guest, claims: new NodeClaimStore(guest), nodes: new NodeStore(guest), event: createEventRecorder(guest.core) };
  };

  /**
   * Begins a claim's end (Karpenter's deleteNodeClaim): counted as disrupted, with its
   * Events, only by the call that began it — a claim already being deleted (by anyone) is
   * left as it is, so nothing is deleted, counted or told twice.
   */
  async function beginDrain(o: { cluster: ClusterRef; claims: NodeClaimStore; event: RecordEvent; claim: StoredNodeClaim; kind: InterruptionKind }): Promise<boolean> {
    if (o.claim.metadata.deletionTimestamp !== undefined) return false;
    await o.claims.delete(o.claim.metadata.name);
    const nodepool = o.claim.metadata.labels?.[NODEPOOL_LABEL] ?? '';
    deps.metrics?.nodeClaimsDisrupted.inc({ cluster: o.cluster.name, reason: o.kind, nodepool });
    activityLog('info', 'NodeClaim disrupted', { cluster: o.cluster.name, nodeclaim: o.claim.metadata.name, nodepool, reason: o.kind });
    const t = TERMINATING_ON_INTERRUPTION;
    await o.event({ involvedObject: nodeClaimRef(o.claim.metadata.name), type: t.type, reason: t.reason, message: t.nodeClaimMessage });
    if (o.claim.status?.nodeName) await o.event({ involvedObject: nodeRef(o.claim.status.nodeName), type: t.type, reason: t.reason, message: t.nodeMessage });
    return true;
  }

  return {
    /**
     * Each message against the cluster's NodeClaims (by instance id): Karpenter's Event on
     * every claim it names and on its Node, then its action — a rebalance recommendation
     * only tells; a health event, a stopping or terminating instance, or a spot warning
     * without time to spare deletes the claim now; a spot warning with time to spare comes
     * back as a replacement job for the workflow. Reads the cluster once per call.
     */
    async handleInterruptionMessages(raw: { cluster: ClusterRef; messages: Omit<ReceivedInterruption, 'receipt'>[]; replacing?: string[]; drainReserveMs?: number }): Promise<HandledInterruptions> {
      const messages = ReceivedSchema.parse(raw.messages);
      const replacing = new Set(z.array(z.string()).default([]).parse(raw.replacing));
      const drainReserveMs = z.number().min(0).max(SPOT_WARNING_MS).default(60_000).parse(raw.drainReserveMs);
      const result: HandledInterruptions = { outcomes: [], offerings: [], replace: [] };
      const actionable = messages.filter((m) => 'instanceIds' in m.message);
      if (actionable.length === 0) {
        for (const m of messages) result.outcomes.push({ messageId: m.messageId, kind: m.message.kind, claims: [], unmatched: 0 });
        return result;
      }
      const { cluster, guest, claims, event } = await connect(raw.cluster);
      const stored = await claims.list();
      const nodeList = NodeListSchema.parse(await guest.core.listNode()).items;
      const nodesByName = new Map(nodeList.map((n) => [n.metadata.name, n]));
      const byName = new Map(stored.map((c) => [c.metadata.name, c]));
      const byInstance = new Map<string, InterruptibleClaim>();
      for (const c of stored) {
        const view = interruptible(c, nodesByName);
        if (view) byInstance.set(view.instanceId, view);
      }
      const offerings = new Map<string, UnavailableSpotOffering>();
      for (const m of messages) {
        const message = m.message;
        if (!('instanceIds' in message)) {
          result.outcomes.push({ messageId: m.messageId, kind: message.kind, claims: [], unmatched: 0 });
          continue;
        }
        const eventTime = eventTimeOf(message, m.sentAt, m.receivedAt);
        const { matched, unmatched } = matchMessage(message, byInstance);
        const outcome = { messageId: m.messageId, kind: message.kind, claims: [] as { name: string; action: ClaimAction['kind'] }[], unmatched: unmatched.length };
        if (matched.length === 0) {
          deps.metrics?.interruptionIgnored.inc({ cluster: cluster.name, reason: 'no_nodeclaim' });
          activityLog('info', 'interruption message names no NodeClaim of this cluster; deleting it', { cluster: cluster.name, messageId: m.messageId, kind: message.kind, instances: message.instanceIds.join(',') });
        }
        for (const claim of matched) {
          const notice = noticeEvent(message.kind);
          await event({ involvedObject: nodeClaimRef(claim.name), ...notice });
          if (claim.nodeName) await event({ involvedObject: nodeRef(claim.nodeName), ...notice });
          const offering = interruptedOffering(message.kind, claim);
          if (offering) offerings.set(`${offering.instanceType}/${offering.zone}`, offering);
          const action = claimAction(message.kind, claim, { now: now(), eventTime, replacing, drainReserveMs });
          outcome.claims.push({ name: claim.name, action: action.kind });
          activityLog('info', 'interruption message', { cluster: cluster.name, messageId: m.messageId, kind: message.kind, nodeclaim: claim.name, action: action.kind, ...(action.kind === 'none' ? { why: action.why } : {}) });
          switch (action.kind) {
            case 'drain': {
              const current = byName.get(claim.name);
              if (current && (await beginDrain({ cluster, claims, event, claim: current, kind: message.kind }))) {
                // a later message of this round naming it finds its drain begun
                byInstance.set(claim.instanceId, { ...claim, deleting: true });
              }
              break;
            }
            case 'replaceFirst':
              result.replace.push({ nodeClaim: claim.name, node: claim.nodeName ?? '', nodePool: claim.nodePool, kind: message.kind, drainBy: action.drainBy, ...(offering ? { offering } : {}) });
              replacing.add(claim.name);
              break;
            case 'notify':
            case 'none':
              break;
          }
        }
        // Karpenter observes how long an actionable message waited, from the event's time
        deps.metrics?.interruptionQueueDuration.observe({ cluster: cluster.name }, Math.max(0, (now() - eventTime) / 1000));
        result.outcomes.push(outcome);
      }
      result.offerings = [...offerings.values()];
      return result;
    },

    /**
     * A replacement job's first step: the node takes no new pods (karpenter.sh/disrupted,
     * as a disruption command's first step), while its pods keep running until the drain.
     */
    async cordonInterrupted(raw: { cluster: ClusterRef; nodeClaim: string; node: string; drainBy: number }): Promise<void> {
      const { nodes, event } = await connect(raw.cluster);
      if (!(await nodes.get(raw.node))) return;
      // the disruption workflow leaves the node alone while this job moves it (and a while
      // after its drain deadline, for the drain to begin); past that the taint is a leftover
      await nodes.annotate(raw.node, { [DISRUPTED_UNTIL_ANNOTATION]: new Date(raw.drainBy + INTERRUPTION_HOLD_AFTER_DRAIN_MS).toISOString() });
      await nodes.ensureTaint(raw.node, { ...DISRUPTED_TAINT });
      const message = `Disrupting NodeClaim: SpotInterrupted (launching its replacement first; draining by ${new Date(raw.drainBy).toISOString()} at the latest)`;
      await event({ involvedObject: nodeClaimRef(raw.nodeClaim), type: 'Normal', reason: 'Disrupting', message });
      await event({ involvedObject: nodeRef(raw.node), type: 'Normal', reason: 'Disrupting', message });
    },

    /** A replacement job's last step: the claim is deleted (its workflow drains and terminates it), unless its drain began already. */
    async drainInterrupted(raw: { cluster: ClusterRef; nodeClaim: string; kind: InterruptionKind }): Promise<{ began: boolean }> {
      const { cluster, claims, event } = await connect(raw.cluster);
      const claim = await claims.get(raw.nodeClaim);
      if (!claim) return { began: false };
      return { began: await beginDrain({ cluster, claims, event, claim, kind: raw.kind }) };
    },
  };
}

/** What the decision reads of a Node: whether it is going, and whether something is moving its pods already. */
const NodeListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string(), deletionTimestamp: z.unknown().optional() }),
      spec: z.object({ taints: z.array(z.object({ key: z.string() })).nullish() }).nullish(),
    }),
  ),
});
type ListedNode = z.infer<typeof NodeListSchema>['items'][number];

/** A claim by its instance, with what the decision needs; none for a claim that has launched nothing yet. */
function interruptible(claim: StoredNodeClaim, nodes: ReadonlyMap<string, ListedNode>): InterruptibleClaim | undefined {
  const providerId = claim.status?.providerID;
  if (!providerId) return undefined;
  let instanceId: string;
  try {
    instanceId = parseProviderId(providerId).instanceId;
  } catch {
    // classified: not an AWS provider id (a claim someone else launched), so no interruption names it
    return undefined;
  }
  const labels = claim.metadata.labels ?? {};
  const node = claim.status?.nodeName ? nodes.get(claim.status.nodeName) : undefined;
  return {
    name: claim.metadata.name,
    instanceId,
    ...(node ? { nodeName: node.metadata.name } : {}),
    nodePool: labels[NODEPOOL_LABEL] ?? '',
    ...(labels['node.kubernetes.io/instance-type'] ? { instanceType: labels['node.kubernetes.io/instance-type'] } : {}),
    ...(labels['topology.kubernetes.io/zone'] ? { zone: labels['topology.kubernetes.io/zone'] } : {}),
    ...(labels['karpenter.sh/capacity-type'] ? { capacityType: labels['karpenter.sh/capacity-type'] } : {}),
    deleting: claim.metadata.deletionTimestamp !== undefined || (node?.metadata.deletionTimestamp ?? undefined) !== undefined,
    disrupting: node?.spec?.taints?.some((t) => t.key === DISRUPTED_TAINT.key) ?? false,
  };
}

export type InterruptionQueueActivities = ReturnType<typeof createInterruptionQueueActivities>;
export type InterruptionActivities = ReturnType<typeof createInterruptionActivities>;
