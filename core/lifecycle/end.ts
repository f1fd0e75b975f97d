import { z } from 'zod';
import { OfferingRefSchema } from './failures';

/** Why a node's life ends: carried into Events, the status query and the result. */
export const EndReasonSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('deleted'), by: z.enum(['nodeclaim', 'node']) }),
  z.object({ kind: z.literal('disrupted'), reason: z.string() }),
  z.object({ kind: z.literal('expired') }),
  z.object({ kind: z.literal('launchTimeout') }),
  z.object({ kind: z.literal('registrationTimeout') }),
  z.object({ kind: z.literal('insufficientCapacity'), offerings: z.array(OfferingRefSchema) }),
  /** the launch can never succeed as asked (no compatible type, a missing permission): reason says why */
  z.object({ kind: z.literal('launchFailed'), reason: z.string() }),
  z.object({ kind: z.literal('instanceGone') }),
  /**
   * The registered node never became Ready: Karpenter's node-repair policy for the Ready
   * condition (False or Unknown for 30 minutes) replaces such a node; so does autonode.
   */
  z.object({ kind: z.literal('notReady'), status: z.string(), since: z.string() }),
  /** a step failed permanently (not a launch): the claim ends so nothing leaks; reason says which */
  z.object({ kind: z.literal('failed'), step: z.string(), reason: z.string() }),
]);
export type EndReason = z.infer<typeof EndReasonSchema>;

export function describeEnd(end: EndReason): string {
  switch (end.kind) {
    case 'deleted':
      return `the ${end.by === 'node' ? 'Node' : 'NodeClaim'} was deleted`;
    case 'disrupted':
      return `disrupted: ${end.reason}`;
    case 'expired':
      return 'expireAfter elapsed';
    case 'launchTimeout':
      return 'the instance was not launched within the launch timeout';
    case 'registrationTimeout':
      return 'the node did not register within the registration timeout';
    case 'insufficientCapacity':
      return `insufficient capacity for ${end.offerings.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`).join(', ') || 'every offering'}`;
    case 'instanceGone':
      return 'the instance no longer exists';
    case 'launchFailed':
      return `the launch failed: ${end.reason}`;
    case 'notReady':
      return `the Node was not Ready (Ready=${end.status} since ${end.since}) within the initialization timeout`;
    case 'failed':
      return `${end.step} failed: ${end.reason}`;
  }
}

/** Ends that mean something went wrong: the final Event is a Warning (TerminatedUnhealthy). */
export function isAbnormalEnd(end: EndReason): boolean {
  switch (end.kind) {
    case 'launchTimeout':
    case 'registrationTimeout':
    case 'insufficientCapacity':
    case 'instanceGone':
    case 'launchFailed':
    case 'notReady':
    case 'failed':
      return true;
    case 'deleted':
    case 'disrupted':
    case 'expired':
      return false;
  }
}
