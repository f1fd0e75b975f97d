/**
 * What an interruption message does to the NodeClaims it names: Karpenter's
 * `actionForMessage` and `notifyForMessage` (controllers/interruption), with one addition —
 * a spot interruption whose two-minute warning leaves time launches the node's replacement
 * first and drains when it is ready (or when the time is up), instead of draining at once.
 * Pure: the activity reads the cluster, this decides, the activity and the workflow act.
 */
import { assertNever } from '../assert';
import { type InterruptionKind, type ParsedMessage } from './messages';

/** EC2 reclaims a spot instance two minutes after the warning's time. */
export const SPOT_WARNING_MS = 120_000;

/** A NodeClaim as the interruption controller sees it, by the instance it launched. */
export interface InterruptibleClaim {
  name: string;
  /** from status.providerID (`aws:///<zone>/<instance-id>`) */
  instanceId: string;
  /** its registered Node, if any */
  nodeName?: string;
  nodePool: string;
  /** the claim's labels (node.kubernetes.io/instance-type, topology.kubernetes.io/zone, karpenter.sh/capacity-type) */
  instanceType?: string;
  zone?: string;
  capacityType?: string;
  /** the claim (or its Node) is being deleted: its drain has begun */
  deleting: boolean;
  /** its Node carries karpenter.sh/disrupted: a disruption command (or an interruption) is moving its pods already */
  disrupting: boolean;
}

export type ClaimAction =
  /** rebalance recommendation: an Event, nothing else (Karpenter's NoAction) */
  | { kind: 'notify' }
  /** Karpenter's CordonAndDrain: the NodeClaim is deleted now; its workflow drains and terminates */
  | { kind: 'drain' }
  /** taint now, launch the replacement, drain when it is initialized or at `drainBy` (epoch ms), whichever is first */
  | { kind: 'replaceFirst'; drainBy: number }
  /** nothing more to do: the claim's drain already began, or this workflow is replacing it already */
  | { kind: 'none'; why: string };

export interface ActionContext {
  /** epoch ms */
  now: number;
  /** when the event happened (epoch ms): the spot warning counts from it */
  eventTime: number;
  /** claims whose replacement-first this workflow is carrying out */
  replacing: ReadonlySet<string>;
  /** the drain must begin at least this long before EC2 reclaims a spot instance */
  drainReserveMs: number;
}

/**
 * The action for one claim named by a message of `kind`. Order matters: a claim already
 * being deleted is never deleted (or replaced) twice, whatever the message.
 */
export function claimAction(kind: InterruptionKind, claim: InterruptibleClaim, context: ActionContext): ClaimAction {
  if (kind === 'rebalance_recommendation') return { kind: 'notify' };
  if (claim.deleting) return { kind: 'none', why: 'its drain has begun already' };
  switch (kind) {
    case 'spot_interrupted': {
      if (context.replacing.has(claim.name)) return { kind: 'none', why: 'its replacement is being launched already' };
      const drainBy = context.eventTime + SPOT_WARNING_MS - context.drainReserveMs;
      // a node that runs nothing yet, or whose pods a disruption command is moving already,
      // or a warning that arrived too late: drain now
      if (claim.nodeName === undefined || claim.disrupting || drainBy <= context.now) return { kind: 'drain' };
      return { kind: 'replaceFirst', drainBy };
    }
    case 'scheduled_change':
    case 'instance_stopped':
    case 'instance_terminated':
      return { kind: 'drain' };
    default:
      return assertNever(kind);
  }
}

/** Karpenter's Events for each kind (controllers/interruption/events), on the NodeClaim and its Node. */
export function noticeEvent(kind: InterruptionKind): { type: 'Normal' | 'Warning'; reason: string; message: string } {
  switch (kind) {
    case 'spot_interrupted':
      return { type: 'Warning', reason: 'SpotInterrupted', message: 'Spot interruption warning was triggered' };
    case 'rebalance_recommendation':
      return { type: 'Normal', reason: 'SpotRebalanceRecommendation', message: 'Spot rebalance recommendation was triggered' };
    case 'scheduled_change':
      return { type: 'Warning', reason: 'InstanceUnhealthy', message: 'An unhealthy warning was triggered for the instance' };
    case 'instance_stopped':
      return { type: 'Warning', reason: 'InstanceStopping', message: 'Instance is stopping' };
    case 'instance_terminated':
      return { type: 'Warning', reason: 'InstanceTerminating', message: 'Instance is terminating' };
    default:
      return assertNever(kind);
  }
}

/** The Event when an interruption begins a claim's deletion (TerminatingOnInterruption). */
export const TERMINATING_ON_INTERRUPTION = {
  type: 'Warning',
  reason: 'TerminatingOnInterruption',
  nodeClaimMessage: 'Interruption triggered termination for the NodeClaim',
  nodeMessage: 'Interruption triggered termination for the Node',
} as const;

/** An offering to hold unavailable: Karpenter marks the interrupted spot offering (instance type, zone) in its ICE cache. */
export interface UnavailableSpotOffering {
  instanceType: string;
  zone: string;
  capacityType: 'spot';
}

/** The offering a spot interruption makes unavailable, from the claim's labels; none when they are missing (Karpenter skips it too). */
export function interruptedOffering(kind: InterruptionKind, claim: InterruptibleClaim): UnavailableSpotOffering | undefined {
  if (kind !== 'spot_interrupted' || !claim.instanceType || !claim.zone) return undefined;
  return { instanceType: claim.instanceType, zone: claim.zone, capacityType: 'spot' };
}

/** What one message names, against the cluster's claims: the claims it matched, and the instances no claim of this cluster has. */
export function matchMessage(message: Extract<ParsedMessage, { instanceIds: string[] }>, claimsByInstance: ReadonlyMap<string, InterruptibleClaim>): { matched: InterruptibleClaim[]; unmatched: string[] } {
  const matched: InterruptibleClaim[] = [];
  const unmatched: string[] = [];
  for (const id of [...new Set(message.instanceIds)]) {
    const claim = claimsByInstance.get(id);
    if (claim) matched.push(claim);
    else unmatched.push(id);
  }
  return { matched, unmatched };
}

/**
 * When the event happened, for the queue-duration metric and the spot deadline: its own
 * `time`, else when SQS took it in, else when it was received.
 */
export function eventTimeOf(message: { time?: string }, sentAt: number | undefined, receivedAt: number): number {
  const parsed = message.time === undefined ? Number.NaN : Date.parse(message.time);
  if (!Number.isNaN(parsed)) return parsed;
  return sentAt ?? receivedAt;
}
