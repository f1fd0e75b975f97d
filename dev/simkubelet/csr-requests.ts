/**
 * Submitting a CSR and waiting for its certificate, as the kubelet's certificate manager
 * does (with whatever identity the CertificatesV1Api was built from).
 */
import { type CertificatesV1Api, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { csrState } from '../../activities/kube/csr-parse';
import { apiStatus, isConflict } from '../../activities/kube/errors';
import { sameRequest } from './pki';

/** An API server that is restarting or overloaded: no answer at all, 429, or 5xx. The certificate manager waits it out. */
const isUnavailable = (err: unknown): boolean => {
  const status = apiStatus(err);
  return status === undefined ? !(err instanceof Error && err.name === 'AbortError') : status === 429 || status >= 500;
};

export interface CsrSubmission {
  signerName: string;
  requestPem: string;
  usages: string[];
  /**
   * The bootstrap client CSR's fixed name (bootstrapCsrName). With it the create is retried
   * while the API server is unavailable, and an existing CSR of that name carrying this
   * request is taken as ours: a create the server stored but whose answer was lost, or a
   * request made before the kubelet restarted. Without it the CSR gets a generated name (the
   * certificate manager's serving CSRs): one attempt, never reused.
   */
  name?: string;
  signal?: AbortSignal;
  /** how long to wait between creates while the API server is unavailable (default 1 s) */
  retryMs?: number;
}

/** The CSR was denied or the signer failed it: a real kubelet would start over. */
export class CsrRejectedError extends Error {
  readonly kind = 'CsrRejected' as const;
  constructor(
    readonly csrName: string,
    readonly phase: 'denied' | 'failed',
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`CSR ${csrName} ${phase}: ${reason}: ${detail}`);
  }
  override get name(): string {
    return 'CsrRejectedError';
  }
}

export async function submitCsr(certificates: CertificatesV1Api, submission: CsrSubmission): Promise<string> {
  const body: V1CertificateSigningRequest = {
    metadata: submission.name ? { name: submission.name } : { generateName: 'csr-' },
    spec: {
      request: Buffer.from(submission.requestPem, 'utf8').toString('base64'),
      signerName: submission.signerName,
      usages: submission.usages,
    },
  };
  for (;;) {
    submission.signal?.throwIfAborted();
    try {
      const created = await certificates.createCertificateSigningRequest({ body });
      const name = created.metadata?.name;
      if (!name) throw new Error('the API server created a CSR without a name');
      return name;
    } catch (err) {
      if (!submission.name) throw err;
      if (isConflict(err)) return ensureOurs(certificates, submission.name, submission);
      if (!isUnavailable(err)) throw err;
      await sleep(submission.retryMs ?? 1_000, submission.signal);
    }
  }
}

/** The CSR already named `name` must be this request (same key, subject, signer and usages), or the kubelet cannot go on. */
async function ensureOurs(certificates: CertificatesV1Api, name: string, submission: CsrSubmission): Promise<string> {
  const existing = await certificates.readCertificateSigningRequest({ name });
  const existingPem = Buffer.from(existing.spec.request, 'base64').toString('utf8');
  const compatible =
    existing.spec.signerName === submission.signerName &&
    JSON.stringify(existing.spec.usages ?? []) === JSON.stringify(submission.usages) &&
    sameRequest(existingPem, submission.requestPem);
  if (!compatible) throw new Error(`CSR ${name} already exists and is not this kubelet's request (another key, subject, signer or usages)`);
  return name;
}

export interface WaitOptions {
  signal?: AbortSignal;
  pollMs?: number;
}

/** Polls until the CSR carries a certificate; throws CsrRejectedError when it never will. */
export async function waitForCertificate(certificates: CertificatesV1Api, name: string, options: WaitOptions = {}): Promise<string> {
  const pollMs = options.pollMs ?? 200;
  for (;;) {
    options.signal?.throwIfAborted();
    // the same CSR is waited for across an API server outage: submitting another while this
    // one is pending would make two (which autonode rightly refuses to choose between)
    const csr = await certificates.readCertificateSigningRequest({ name }).catch((err: unknown) => {
      if (isUnavailable(err)) return undefined;
      throw err;
    });
    if (csr === undefined) {
      await sleep(Math.max(pollMs, 1_000), options.signal);
      continue;
    }
    const state = csrState(csr);
    switch (state.phase) {
      case 'denied':
      case 'failed':
        throw new CsrRejectedError(name, state.phase, state.reason, state.message);
      case 'approved':
        if (state.issued && csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
        break;
      case 'pending':
        break;
    }
    await sleep(pollMs, options.signal);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
