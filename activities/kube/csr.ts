/**
 * Kubelet CSR activities against the guest cluster: read a CSR, judge it with the pure
 * policy (core/csr/csr-policy.ts), write the decision as an Approved/Denied condition and
 * an Event. Idempotent by CSR name: a CSR that already carries a decision is reported, not
 * decided again, so a retried activity never flips or duplicates one.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type V1CertificateSigningRequest, type V1CertificateSigningRequestCondition } from '@kubernetes/client-node';
import { assertNever } from '../../core/assert';
import {
  Signers,
  decideNodeCsrs,
  nodesNamedBy,
  type CsrCheck,
  type CsrDecision,
  type CsrPolicy,
  type ExpectedNode,
  type NodeCsr,
  type ParsedCsr,
} from '../../core/csr/csr-policy';
import { isConflict, isForbidden, isNotFound } from './errors';
import { type KubeClients } from './clients';
import { InvalidCsrError, csrState, isInvalidCsrError, parseCsr, type CsrState } from './csr-parse';
import { type RecordEvent } from './events';
import { listItems } from './lists';

export { parseCsr, csrState, InvalidCsrError, isInvalidCsrError, type CsrState } from './csr-parse';

export const CsrConditionReasons = { approved: 'AutoNodeApproved', denied: 'AutoNodeDenied' } as const;
export const CsrEventReasons = { approved: 'CSRApproved', denied: 'CSRDenied' } as const;

export interface ReviewNodeCsrsInput {
  node: ExpectedNode;
  policy: CsrPolicy;
  /** CSRs not to write a decision on (ones the API server already refused autonode) */
  skip?: ReadonlySet<string>;
}

/** One CSR's outcome: `applied` says whether this call wrote the decision. */
export type CsrReview =
  | (CsrDecision & { applied: boolean })
  | { kind: 'decided'; state: Exclude<CsrState, { phase: 'pending' }>; byAutonode: boolean; applied: false };

export interface CsrActivityDeps {
  guest: KubeClients;
  recordEvent: RecordEvent;
  now?: () => Date;
}

/** What one review of a node's CSRs did; nothing in it throws for a single bad CSR. */
export interface NodeCsrReview {
  approved: string[];
  denied: { name: string; check: CsrCheck }[];
  /**
   * CSRs whose decision could not be written. `forbidden`: the API server refused autonode
   * the approval (its RBAC or the signer's policy) — a bug to report, not to retry.
   */
  failed: { name: string; forbidden: boolean; message: string }[];
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

  /**
   * Writes one decision. A CSR's spec is immutable, so a decision made from an earlier read
   * still holds after a conflict; only its state is re-read. `applied` says whether this
   * call wrote it: a CSR decided meanwhile (by an earlier attempt, or by someone else) comes
   * back as `decided`, one deleted as `ignore`. `uid`: the CSR the decision was made for —
   * one deleted and re-created under its name since (another request, perhaps an
   * attacker's) is not the one judged, and is left to the next review.
   */
  async function applyDecision(csrName: string, nodeName: string, decision: Extract<CsrDecision, { kind: 'approve' | 'deny' }>, uid: string | undefined): Promise<CsrReview> {
    for (let attempt = 1; ; attempt++) {
      const obj = await readCsr(csrName);
      if (!obj) return { kind: 'ignore', why: `CSR ${csrName} no longer exists`, applied: false };
      if (uid !== undefined && obj.metadata?.uid !== uid) return { kind: 'ignore', why: `CSR ${csrName} was re-created since it was read`, applied: false };
      const state = csrState(obj);
      if (state.phase !== 'pending') {
        const byAutonode = state.reason === CsrConditionReasons.approved || state.reason === CsrConditionReasons.denied;
        return { kind: 'decided', state, byAutonode, applied: false };
      }
      const body: V1CertificateSigningRequest = {
        ...obj,
        status: { ...obj.status, conditions: [...(obj.status?.conditions ?? []), condition(decision)] },
      };
      try {
        await certificates.replaceCertificateSigningRequestApproval({ name: csrName, body });
      } catch (err) {
        // resourceVersion moved (the signer, another approver): re-read and try again.
        if (isConflict(err) && attempt < APPROVAL_ATTEMPTS) continue;
        throw err;
      }
      // Written after the decision: an Event must never claim an approval that did not
      // happen. The cost: if this call fails, a retry finds the CSR decided and the Event
      // is not written again (the CSR's condition still carries the same message).
      await deps.recordEvent({
        involvedObject: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', name: csrName, uid: obj.metadata?.uid },
        ...(decision.kind === 'approve'
          ? { type: 'Normal' as const, reason: CsrEventReasons.approved, message: decision.message }
          : { type: 'Warning' as const, reason: CsrEventReasons.denied, message: `denied ${csrName} for node ${nodeName}: ${decision.check}: ${decision.message}` }),
      });
      return { ...decision, applied: true };
    }
  }

  /**
   * Every CSR naming the node by CN or requester, oldest first, with its state. The list is
   * read as the API server sent it (every registration poll of every claim reads all of
   * it: the typed client's model of each CSR cost more than the parse cache saves), and
   * parsed from that same JSON the watcher's events carry.
   */
  async function listNodeCsrs(nodeName: string): Promise<Array<{ csr: ParsedCsr | InvalidCsrError; meta: CsrMeta; state: CsrState }>> {
    const items = listItems(await deps.guest.getJson(CSR_PATH));
    return items
      .flatMap((obj) => {
        const csr = tryParse(obj);
        const named = csr instanceof InvalidCsrError ? csr.namedNodes : nodesNamedBy(csr);
        return named.includes(nodeName) ? [{ csr, meta: csrMeta(obj), state: csrState(obj) }] : [];
      })
      .sort((a, b) => a.meta.createdAt - b.meta.createdAt || a.csr.name.localeCompare(b.csr.name));
  }

  /**
   * Reviews every pending CSR naming one node, together (decideNodeCsrs: at most one client
   * certificate per launch), and writes each decision on its own: one CSR that cannot be
   * written — forbidden, deleted, a flaky API server — never keeps the others from being
   * decided. Safe to repeat: decided CSRs are only read.
   */
  async function reviewNodeCsrs(input: ReviewNodeCsrsInput): Promise<NodeCsrReview> {
    const { node } = input;
    const review: NodeCsrReview = { approved: [], denied: [], failed: [] };
    const listed = await listNodeCsrs(node.nodeName);
    const uids = new Map(listed.map(({ meta }) => [meta.name, meta.uid]));
    const readable: NodeCsr[] = [];
    const pendingUnreadable: Array<{ name: string; decision: Extract<CsrDecision, { kind: 'deny' }> }> = [];
    for (const { csr, state } of listed) {
      if (csr instanceof InvalidCsrError) {
        // Unreadable, or readable in more than one way: whoever it names, the signer might
        // read it as a certificate for this node. A node of ours is never asked to guess.
        if (state.phase === 'pending' && isKubeletSigner(csr.signerName)) pendingUnreadable.push({ name: csr.csrName, decision: { kind: 'deny', check: 'request', message: csr.message } });
        continue;
      }
      const byAutonode = state.phase === 'approved' && state.reason === CsrConditionReasons.approved;
      readable.push({ csr, state: state.phase === 'pending' ? 'pending' : byAutonode ? 'approvedByAutonode' : 'decided' });
    }
    const decisions = [
      ...pendingUnreadable,
      ...decideNodeCsrs(readable, node, input.policy).map(({ csr, decision }) => ({ name: csr.name, decision })),
    ];
    for (const { name, decision } of decisions) {
      if (decision.kind === 'ignore' || input.skip?.has(name)) continue;
      try {
        const result = await applyDecision(name, node.nodeName, decision, uids.get(name));
        if (result.kind === 'approve' && result.applied) review.approved.push(name);
        if (result.kind === 'deny' && result.applied) review.denied.push({ name, check: result.check });
      } catch (err) {
        review.failed.push({ name, forbidden: isForbidden(err), message: err instanceof Error ? err.message : String(err) });
      }
    }
    return review;
  }

  return { reviewNodeCsrs, listNodeCsrs };
}

export type CsrActivities = ReturnType<typeof createCsrActivities>;

/**
 * Each CSR read once per process: every registration poll of every claim reviews the whole
 * CSR list (a request names its node only inside the PKCS#10 it carries), and parsing one —
 * strict base64, DER, the self-signature — took 1–2.5 ms. At 200 nodes and 100 claims
 * registering, that was 20–50 CPU-seconds per poll round across the workers (`npm run
 * scale`). A CSR's spec is immutable and parsing reads only its name and spec, so the
 * result is kept by uid, name and a digest of the spec: a CSR deleted and re-created under
 * the same name (another uid) or anything that reads differently is parsed afresh.
 */
const PARSED_LIMIT = 10_000;
const parsed = new Map<string, ParsedCsr | InvalidCsrError>();

/** What the cache key and the review read of a CSR's metadata, beside parseCsr's own reading and csrState. */
const CsrEnvelopeSchema = z.object({
  metadata: z.object({ name: z.string().optional(), uid: z.string().optional(), creationTimestamp: z.string().optional() }).optional(),
  spec: z.unknown(),
});

/**
 * The CSR as parseCsr reads it, or the InvalidCsrError saying why it cannot be read; from
 * the process's cache when this uid, name and spec were parsed before. The review and the
 * cluster watcher (which routes each CSR event to its node's claim) share it.
 */
export function tryParse(obj: unknown): ParsedCsr | InvalidCsrError {
  const identity = CsrEnvelopeSchema.safeParse(obj).data;
  const uid = identity?.metadata?.uid;
  const key = uid ? `${uid}/${identity?.metadata?.name ?? ''}/${createHash('sha256').update(JSON.stringify(identity?.spec ?? null)).digest('base64')}` : undefined;
  const known = key !== undefined ? parsed.get(key) : undefined;
  if (known !== undefined) return known;
  let result: ParsedCsr | InvalidCsrError;
  try {
    result = parseCsr(obj);
  } catch (err) {
    if (!isInvalidCsrError(err)) throw err;
    result = err;
  }
  if (key !== undefined) {
    // oldest first out (a Map iterates in insertion order)
    if (parsed.size >= PARSED_LIMIT) for (const old of [...parsed.keys()].slice(0, PARSED_LIMIT / 10)) parsed.delete(old);
    parsed.set(key, result);
  }
  return result;
}

function isKubeletSigner(signerName: string): boolean {
  return signerName === Signers.kubeletClient || signerName === Signers.kubeletServing;
}

const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** What the review keeps of a listed CSR beside its parse: the uid its decision is written for, and its age. */
interface CsrMeta {
  name: string;
  uid: string | undefined;
  /** ms since the epoch; 0 when the API server sent none */
  createdAt: number;
}

function csrMeta(obj: unknown): CsrMeta {
  const { name = '', uid, creationTimestamp } = CsrEnvelopeSchema.safeParse(obj).data?.metadata ?? {};
  const at = creationTimestamp === undefined ? 0 : Date.parse(creationTimestamp);
  return { name, uid, createdAt: Number.isNaN(at) ? 0 : at };
}
