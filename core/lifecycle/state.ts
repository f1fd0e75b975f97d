import { z } from 'zod';
import { LaunchedInstanceSchema, type Phase } from './contract';
import { EndReasonSchema } from './end';
import { ActivityFailureInfoSchema } from './failures';

/**
 * One NodeClaim's life as data. Each phase carries only what it needs; the whole state is
 * plain JSON, so it is what a run hands to the next across continue-as-new, and what a
 * pure `decide` (decide.ts) moves forward one observation at a time.
 */

/** What the claim's spec fixes for its whole life (the spec is immutable). */
export const ClaimFactsSchema = z.object({
  nodePool: z.string().optional(),
  /** epoch ms: creationTimestamp + expireAfter (absent for `Never`) */
  expireAt: z.number().optional(),
  /** spec.terminationGracePeriod in ms (absent: a drain may wait on PDBs forever) */
  terminationGraceMs: z.number().optional(),
});
export type ClaimFacts = z.infer<typeof ClaimFactsSchema>;

const instance = LaunchedInstanceSchema;

export const LifecycleStateSchema = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('Pending') }),
  z.object({ phase: z.literal('Launching'), claim: ClaimFactsSchema }),
  /** launched, waiting for the kubelet's client CSR and the Node; `registerBy` is the registration deadline */
  z.object({ phase: z.literal('Launched'), claim: ClaimFactsSchema, instance, registerBy: z.number() }),
  /** the Node exists; waiting for Ready, startup taints gone, extended resources */
  z.object({ phase: z.literal('Registered'), claim: ClaimFactsSchema, instance, nodeName: z.string(), registeredAt: z.number() }),
  z.object({ phase: z.literal('Initialized'), claim: ClaimFactsSchema, instance, nodeName: z.string() }),
  z.object({
    phase: z.literal('Draining'),
    instance,
    nodeName: z.string(),
    end: EndReasonSchema,
    stage: z.enum(['begin', 'pods', 'volumes']),
    /** epoch ms after which PDBs and do-not-disrupt no longer hold the drain; null: no deadline */
    deadline: z.number().nullable(),
    backoffMs: z.number(),
  }),
  z.object({
    phase: z.literal('Terminating'),
    instance: instance.optional(),
    nodeName: z.string().optional(),
    end: EndReasonSchema,
    stage: z.enum(['instance', 'finalize']),
  }),
  z.object({ phase: z.literal('Terminated'), end: EndReasonSchema, instance: instance.optional() }),
]);
export type LifecycleState = z.infer<typeof LifecycleStateSchema>;
export type StateOf<P extends Phase> = Extract<LifecycleState, { phase: P }>;

const ReadySchema = z.object({
  status: z.enum(['True', 'False', 'Unknown', 'Missing']),
  /** the Ready condition's lastTransitionTime (RFC 3339), when the Node has one */
  since: z.string().optional(),
});

/** What the workflow saw: the result of the last action, or an event that woke it. */
export const ObservationSchema = z.discriminatedUnion('kind', [
  /** a run begins: fresh, or resumed after continue-as-new (re-run the phase's step) */
  z.object({ kind: z.literal('started') }),
  z.object({
    kind: z.literal('prepared'),
    exists: z.boolean(),
    uid: z.string().optional(),
    deleting: z.boolean(),
    nodePool: z.string().optional(),
    /** epoch ms */
    createdAt: z.number().optional(),
    expireAfterMs: z.number().optional(),
    terminationGraceMs: z.number().optional(),
  }),
  z.object({ kind: z.literal('launched'), instance }),
  z.object({ kind: z.literal('registration'), registered: z.boolean(), nodeName: z.string().optional(), denied: z.array(z.string()), blocker: z.string().optional() }),
  z.object({ kind: z.literal('initialization'), initialized: z.boolean(), blocker: z.string().optional(), ready: ReadySchema.optional() }),
  z.object({
    kind: z.literal('claimSeen'),
    gone: z.boolean(),
    deleting: z.boolean(),
    nodeExists: z.boolean(),
    nodeDeleting: z.boolean(),
    /** epoch ms: the claim's (else its Node's) deletionTimestamp, where the grace period starts */
    deletedAt: z.number().optional(),
  }),
  /** a wait ended: its timer fired, or a signal arrived (`csr`: a CSR naming the node was created) */
  z.object({ kind: z.literal('woken'), by: z.enum(['timer', 'event']), csr: z.boolean() }),
  z.object({ kind: z.literal('disruptRequested'), reason: z.string() }),
  /** the workflow was cancelled (teardown): end the life, shielded from further cancellation */
  z.object({ kind: z.literal('cancelled') }),
  z.object({ kind: z.literal('drainBegun') }),
  z.object({ kind: z.literal('drained'), done: z.boolean(), blockers: z.string().optional() }),
  z.object({ kind: z.literal('volumes'), detached: z.boolean(), attachments: z.array(z.string()) }),
  z.object({ kind: z.literal('instanceTerminated') }),
  z.object({ kind: z.literal('finalized') }),
  /** the action's activity failed for good (retries exhausted, non-retryable, or timed out) */
  z.object({ kind: z.literal('failed'), action: z.string(), failure: ActivityFailureInfoSchema }),
]);
export type Observation = z.input<typeof ObservationSchema>;

/** What the driver does next. Every action but `wait`, `restart`, `finish` and `fail` is one activity. */
export type Action =
  | { kind: 'prepare' }
  /** the claim was recreated under this name before anything launched: serve the new one */
  | { kind: 'restart'; uid: string }
  | { kind: 'launch' }
  | { kind: 'reviewRegistration' }
  | { kind: 'reviewInitialization' }
  | { kind: 'observe'; reviewCsrs: boolean }
  | { kind: 'wait'; ms: number }
  | { kind: 'beginDrain'; reason: string }
  | { kind: 'drain'; pastDeadline: boolean }
  | { kind: 'checkVolumes' }
  | { kind: 'terminateInstance'; providerId: string }
  | { kind: 'finalize'; reason: string; abnormal: boolean }
  | { kind: 'finish' }
  /** a step that must succeed failed for good: the workflow fails, visibly */
  | { kind: 'fail'; message: string };
export type ActionKind = Action['kind'];

export interface Step {
  state: LifecycleState;
  action: Action;
  /** shown by the status query: a string sets it, null clears it, undefined leaves it */
  lastError?: string | null;
}

/** The lifecycle's timing rules, in ms, fixed per workflow run. */
export interface LifecycleSettings {
  /** the NodeClaim's uid this life serves */
  uid: string;
  registrationMs: number;
  initializationMs: number;
  resyncMs: number;
  steadyResyncMs: number;
}
