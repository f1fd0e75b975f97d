/**
 * Interruption messages as EventBridge delivers them to the cluster's SQS queue, parsed
 * the way Karpenter's interruption controller parses them (karpenter-provider-aws
 * `pkg/controllers/interruption/parser.go` and `messages/*`): the envelope's
 * (version, source, detail-type) picks a parser; a known kind is read from its detail;
 * anything else is a no-op. Pure and total: every body gives a `ParsedMessage`, never an
 * exception, so one bad message can never stop a queue (the poller deletes it, logs it and
 * counts it).
 *
 * Stricter than Karpenter in one way, on purpose: a known kind whose detail lacks the
 * instance id (or gives it the wrong type) is `unparseable` with the field named, where
 * Go's json.Unmarshal would have made an empty id that matches no NodeClaim. The outcome
 * is the same (deleted, nothing done); the log says why.
 */
import { z } from 'zod';

/** What Karpenter calls a message's Kind (messages/types.go): the label of its metrics. */
export const INTERRUPTION_KINDS = ['spot_interrupted', 'rebalance_recommendation', 'scheduled_change', 'instance_stopped', 'instance_terminated'] as const;
export type InterruptionKind = (typeof INTERRUPTION_KINDS)[number];

/** Karpenter's NoOpKind: a well-formed event autonode does not act on. */
export const NO_OP_KIND = 'no_op';

export type ParsedMessage =
  | {
      kind: InterruptionKind;
      /** the EventBridge event id */
      id: string;
      /** the event's time (ISO-8601), when it had one: the spot warning's two minutes count from it */
      time?: string;
      /** the instances it is about (one for EC2 events; a Health event may name several) */
      instanceIds: string[];
      /** for a state change, the state it reports (`stopping`, `terminated`, …) */
      state?: string;
    }
  | { kind: typeof NO_OP_KIND; id?: string; time?: string; why: string }
  /** not an EventBridge event autonode can read: deleted without any action */
  | { kind: 'unparseable'; why: string };

/** EventBridge's envelope (messages.Metadata). `time` is RFC 3339; a bad one fails the parse, as in Go. */
const EnvelopeSchema = z.object({
  version: z.string().optional(),
  id: z.string().optional(),
  source: z.string().optional(),
  'detail-type': z.string().optional(),
  time: z.string().optional(),
  account: z.string().optional(),
  region: z.string().optional(),
  resources: z.array(z.string()).optional(),
  detail: z.unknown().optional(),
});
type Envelope = z.infer<typeof EnvelopeSchema>;

const InstanceDetailSchema = z.object({ 'instance-id': z.string().min(1) });
const StateChangeDetailSchema = z.object({ 'instance-id': z.string().min(1), state: z.string() });
const HealthDetailSchema = z.object({
  service: z.string().optional(),
  eventTypeCategory: z.string().optional(),
  eventTypeCode: z.string().optional(),
  affectedEntities: z.array(z.object({ entityValue: z.string() })).optional(),
});

/** The instance states Karpenter reacts to (statechange/parser.go); any other state is a no-op. */
const ACTED_ON_STATES = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

type Parser = (detail: unknown, envelope: Envelope & { id: string }) => ParsedMessage;

const instanceEvent =
  (kind: InterruptionKind): Parser =>
  (detail, envelope) => {
    const parsed = InstanceDetailSchema.safeParse(detail);
    if (!parsed.success) return { kind: 'unparseable', why: `${envelope['detail-type']}: ${issues(parsed.error, 'detail')}` };
    return { kind, id: envelope.id, ...timeOf(envelope), instanceIds: [parsed.data['instance-id']] };
  };

/**
 * The parsers, keyed by (version, source, detail-type) as Karpenter keys them. Version "0"
 * is what EventBridge sends for every one of these; another version is not one we know.
 */
const PARSERS: Record<string, Parser> = {
  [key('0', 'aws.ec2', 'EC2 Spot Instance Interruption Warning')]: instanceEvent('spot_interrupted'),
  [key('0', 'aws.ec2', 'EC2 Instance Rebalance Recommendation')]: instanceEvent('rebalance_recommendation'),
  [key('0', 'aws.ec2', 'EC2 Instance State-change Notification')]: (detail, envelope) => {
    const parsed = StateChangeDetailSchema.safeParse(detail);
    if (!parsed.success) return { kind: 'unparseable', why: `${envelope['detail-type']}: ${issues(parsed.error, 'detail')}` };
    const state = parsed.data.state.toLowerCase();
    if (!ACTED_ON_STATES.has(state)) return { kind: NO_OP_KIND, id: envelope.id, ...timeOf(envelope), why: `instance state "${state}" needs no action` };
    const kind = state === 'stopping' || state === 'stopped' ? 'instance_stopped' : 'instance_terminated';
    return { kind, id: envelope.id, ...timeOf(envelope), instanceIds: [parsed.data['instance-id']], state };
  },
  [key('0', 'aws.health', 'AWS Health Event')]: (detail, envelope) => {
    const parsed = HealthDetailSchema.safeParse(detail);
    if (!parsed.success) return { kind: 'unparseable', why: `${envelope['detail-type']}: ${issues(parsed.error, 'detail')}` };
    const { service, eventTypeCategory, affectedEntities } = parsed.data;
    // scheduledchange/parser.go: only EC2's scheduled changes (maintenance, retirement)
    if (service !== 'EC2' || eventTypeCategory !== 'scheduledChange') {
      return { kind: NO_OP_KIND, id: envelope.id, ...timeOf(envelope), why: `AWS Health event of service ${service ?? '(none)'}, category ${eventTypeCategory ?? '(none)'}: only EC2 scheduledChange is acted on` };
    }
    return { kind: 'scheduled_change', id: envelope.id, ...timeOf(envelope), instanceIds: (affectedEntities ?? []).map((e) => e.entityValue) };
  },
};

/**
 * One SQS message body → what it says. An empty body is a no-op and an absent one
 * unparseable, as in Karpenter (`Parse("")` is NoOp; a nil body is an error).
 */
export function parseInterruptionMessage(body: string | undefined): ParsedMessage {
  if (body === undefined) return { kind: 'unparseable', why: 'the message has no body' };
  if (body === '') return { kind: NO_OP_KIND, why: 'empty body' };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    // classify: a body that is not JSON is a message we cannot read
    return { kind: 'unparseable', why: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const envelope = EnvelopeSchema.safeParse(json);
  if (!envelope.success) return { kind: 'unparseable', why: `not an EventBridge event: ${issues(envelope.error)}` };
  const e = envelope.data;
  if (e.time !== undefined && !isRfc3339(e.time)) return { kind: 'unparseable', why: `time "${e.time}" is not an RFC 3339 time` };
  const parser = PARSERS[key(e.version ?? '', e.source ?? '', e['detail-type'] ?? '')];
  if (!parser) {
    return { kind: NO_OP_KIND, ...(e.id !== undefined ? { id: e.id } : {}), ...timeOf(e), why: `source "${e.source ?? ''}", detail-type "${e['detail-type'] ?? ''}", version "${e.version ?? ''}" is not an interruption event` };
  }
  return parser(e.detail, { ...e, id: e.id ?? '' });
}

/**
 * RFC 3339, as Go's time.Time reads it from JSON. Date.parse alone would not do: V8 also
 * takes "day 4" or "Sat 9" as dates.
 */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
function isRfc3339(time: string): boolean {
  return RFC_3339.test(time) && !Number.isNaN(Date.parse(time));
}

function key(version: string, source: string, detailType: string): string {
  return JSON.stringify([version, source, detailType]);
}

function timeOf(e: Envelope): { time?: string } {
  return e.time === undefined ? {} : { time: new Date(Date.parse(e.time)).toISOString() };
}

function issues(error: z.ZodError, prefix?: string): string {
  return error.issues.map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(body)'}: ${i.message}`).join('; ');
}
