/**
 * Kubelet CSR activities against the guest cluster: read a CSR, judge it with the pure
 * policy (core/nodes/csr-policy.ts), write the decision as an Approved/Denied condition and
 * an Event. Idempotent by CSR name: a CSR that already carries a decision is reported, not
 * decided again, so a retried activity never flips or duplicates one.
 */
import { type V1CertificateSigningRequest, type V1CertificateSigningRequestCondition } from '@kubernetes/client-node';
import { assertNever } from '../../core/api/assert';
import {
  evaluateCsr,
  nodeNameFromUsername,
  nodeUsername,
  type CsrDecision,
  type CsrPolicy,
  type ExpectedNode,
  type ParsedCsr,
} from '../../core/nodes/csr-policy';
import { isConflict, isNotFound } from './errors';
import { type KubeClients } from './clients';
import { csrState, isInvalidCsrError, parseCsr, type CsrState } from './csr-parse';
import { type RecordEvent } from './events';

export { parseCsr, csrState, InvalidCsrError, isInvalidCsrError, type CsrState } from './csr-parse';

export const CsrConditionReasons = { approved: 'AutoNodeApproved', denied: 'AutoNodeDenied' } as const;
export const CsrEventReasons = { approved: 'CSRApproved', denied: 'CSRDenied' } as const;

export interface ReviewNodeCsrInput {
  csrName: string;
  node: ExpectedNode;
  policy: CsrPolicy;
}

/**
 * `applied` says whether this call wrote the decision. A CSR decided before (by an earlier
 * attempt of this activity, or by someone else) comes back as `decided` with its condition;
 * one deleted meanwhile as `ignore`.
 */
export type CsrReview =
  | (CsrDecision & { applied: boolean })
  | { kind: 'decided'; state: Exclude<CsrState, { phase: 'pending' }>; byAutonode: boolean; applied: false };

export interface CsrActivityDeps {
  guest: KubeClients;
  recordEvent: RecordEvent;
  now?: () => Date;
}

const APPROVAL_ATTEMPTS = 5;

export function createCsrActivities(deps: CsrActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const certificates = deps.guest.certificates;

  async function readCsr(name: string): Promise<V1CertificateSigningRequest | undefined> {
    try {
      return await certificates.readCertificateSigningRequest({ name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  function condition(decision: Extract<CsrDecision, { kind: 'approve' | 'deny' }>): V1CertificateSigningRequestCondition {
    const at = now();
    switch (decision.kind) {
      case 'approve':
        return { type: 'Approved', status: 'True', reason: CsrConditionReasons.approved, message: decision.message, lastUpdateTime: at, lastTransitionTime: at };
      case 'deny':
        return { type: 'Denied', status: 'True', reason: CsrConditionReasons.denied, message: `${decision.check}: ${decision.message}`, lastUpdateTime: at, lastTransitionTime: at };
      default:
        return assertNever(decision);
    }
  }

  async function reviewNodeCsr(input: ReviewNodeCsrInput): Promise<CsrReview> {
    for (let attempt = 1; ; attempt++) {
      const obj = await readCsr(input.csrName);
      if (!obj) return { kind: 'ignore', why: `CSR ${input.csrName} no longer exists`, applied: false };
      const state = csrState(obj);
      if (state.phase !== 'pending') {
        const byAutonode = state.reason === CsrConditionReasons.approved || state.reason === CsrConditionReasons.denied;
        return { kind: 'decided', state, byAutonode, applied: false };
      }
      const decision = judge(obj, input);
      if (decision.kind === 'ignore') return { ...decision, applied: false };
      const body: V1CertificateSigningRequest = {
        ...obj,
        status: { ...obj.status, conditions: [...(obj.status?.conditions ?? []), condition(decision)] },
      };
      try {
        await certificates.replaceCertificateSigningRequestApproval({ name: input.csrName, body });
      } catch (err) {
        // resourceVersion moved (the signer, another approver): re-read and judge again.
        if (isConflict(err) && attempt < APPROVAL_ATTEMPTS) continue;
        throw err;
      }
      // Written after the decision: an Event must never claim an approval that did not
      // happen. The cost: if this call fails, a retry finds the CSR decided and the Event
      // is not written again (the CSR's condition still carries the same message).
      await deps.recordEvent({
        involvedObject: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', name: input.csrName, uid: obj.metadata?.uid },
        ...(decision.kind === 'approve'
          ? { type: 'Normal' as const, reason: CsrEventReasons.approved, message: decision.message }
          : { type: 'Warning' as const, reason: CsrEventReasons.denied, message: `denied ${input.csrName} for node ${input.node.nodeName}: ${decision.check}: ${decision.message}` }),
      });
      return { ...decision, applied: true };
    }
  }

  /** CSRs whose CN or requester names the node, oldest first; unreadable ones are skipped. */
  async function findCsrsForNode(nodeName: string): Promise<Array<{ csr: ParsedCsr; state: CsrState }>> {
    const list = await certificates.listCertificateSigningRequest();
    return list.items
      .flatMap((obj) => {
        const csr = tryParse(obj);
        return csr && namesNode(csr, nodeName) ? [{ csr, state: csrState(obj) }] : [];
      })
      .sort((a, b) => a.csr.createdAt - b.csr.createdAt || a.csr.name.localeCompare(b.csr.name));
  }

  return { reviewNodeCsr, findCsrsForNode };
}

export type CsrActivities = ReturnType<typeof createCsrActivities>;

/**
 * An undecodable request from the node itself is denied rather than left pending forever;
 * one from anyone else cannot be tied to the node, so it is left alone.
 */
function judge(obj: V1CertificateSigningRequest, input: ReviewNodeCsrInput): CsrDecision {
  try {
    return evaluateCsr(parseCsr(obj), input.node, input.policy);
  } catch (err) {
    if (!isInvalidCsrError(err)) throw err;
    if (obj.spec?.username === nodeUsername(input.node.nodeName)) return { kind: 'deny', check: 'request', message: err.message };
    return { kind: 'ignore', why: err.message };
  }
}

function tryParse(obj: V1CertificateSigningRequest): ParsedCsr | undefined {
  try {
    return parseCsr(obj);
  } catch (err) {
    if (isInvalidCsrError(err)) return undefined;
    throw err;
  }
}

function namesNode(csr: ParsedCsr, nodeName: string): boolean {
  const cnNode = csr.subject.commonName === undefined ? undefined : nodeNameFromUsername(csr.subject.commonName);
  return cnNode === nodeName || nodeNameFromUsername(csr.username) === nodeName;
}
