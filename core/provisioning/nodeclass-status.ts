import { type Condition } from '../api';
import { setCondition, type ConditionUpdate } from '../lifecycle/conditions';

/**
 * The reason the provisioner writes on `ValidationSucceeded` when autonode's normalisation
 * rejects an EC2NodeClass the API server stored (a rule the CRD schema cannot express).
 */
export const INVALID_NODE_CLASS_REASON = 'InvalidEC2NodeClass';

/** The conditions node-class resolution (activities/cloud/node-class.ts) writes besides these two. */
const RESOLUTION_CONDITIONS = ['SubnetsReady', 'SecurityGroupsReady', 'AMIsReady'] as const;

/**
 * An EC2NodeClass's conditions after validation: `ValidationSucceeded` and the root `Ready`;
 * undefined when nothing would change (so an unchanged class costs no write).
 *
 * Two writers share these conditions: resolution (the nodeclaim lifecycle's
 * `reconcileNodeClass`: subnets, security groups, AMIs, and `ValidationSucceeded` for the
 * AMI family) and this. So an invalid class gets `ValidationSucceeded=False` with
 * {@link INVALID_NODE_CLASS_REASON}, and a valid one only has that *undone* — any other
 * reason on `ValidationSucceeded` is resolution's and is left alone. `Ready` follows
 * resolution's rule (False when any condition is False, with each one's message); after an
 * undo it is True only when resolution's conditions are all True, else Unknown until a
 * launch resolves the class. Rejected alternative: a condition type of our own (e.g.
 * `NormalisationSucceeded`) — users and Karpenter's tooling read `ValidationSucceeded`.
 */
export function nodeClassValidationConditions(current: readonly Condition[], problem: string | undefined, nowIso: string): Condition[] | undefined {
  const validation = current.find((c) => c.type === 'ValidationSucceeded');
  let update: ConditionUpdate;
  if (problem !== undefined) update = { type: 'ValidationSucceeded', status: 'False', reason: INVALID_NODE_CLASS_REASON, message: problem };
  else if (validation?.reason === INVALID_NODE_CLASS_REASON) update = { type: 'ValidationSucceeded', status: 'True', reason: 'Valid', message: '' };
  else return undefined;
  let next = setCondition(current, update, nowIso);
  next = setCondition(next, readyFrom(next), nowIso);
  return sameConditions(current, next) ? undefined : next;
}

function readyFrom(conditions: readonly Condition[]): ConditionUpdate {
  const notReady = conditions.filter((c) => c.type !== 'Ready' && c.status === 'False');
  if (notReady.length > 0) return { type: 'Ready', status: 'False', reason: 'NotReady', message: notReady.map((c) => `${c.type}: ${c.message ?? ''}`).join('; ') };
  const resolved = RESOLUTION_CONDITIONS.every((type) => conditions.some((c) => c.type === type && c.status === 'True'));
  if (resolved) return { type: 'Ready', status: 'True', reason: 'Ready', message: '' };
  return { type: 'Ready', status: 'Unknown', reason: 'AwaitingResolution', message: 'subnets, security groups and AMIs are resolved when a NodeClaim of this class launches' };
}

function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  const key = (c: Condition): string => JSON.stringify([c.type, c.status, c.reason ?? '', c.message ?? '']);
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((k, i) => k === right[i]);
}
