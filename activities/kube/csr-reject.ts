/**
 * Why a certificate request's bytes were refused, before any policy looks at it. Thrown by
 * the strict readers (go-pem.ts, csr-der.ts, csr-signature.ts) and turned into an
 * InvalidCsrError naming the CSR by csr-parse.ts; it never leaves activities/kube.
 */
export class RequestRejectedError extends Error {
  override get name(): string {
    return 'RequestRejectedError';
  }
}

/**
 * Refuses a request that is well-formed enough for some reader but not the one shape a
 * kubelet produces. The message says what was found; the suffix says why that is enough.
 */
export function rejectUnlikeKubelet(found: string): never {
  throw new RequestRejectedError(`${found}; a kubelet never sends that, and autonode approves only a request it reads exactly as the API server and signer do`);
}

/** Refuses a request that is simply broken. */
export function rejectMalformed(found: string): never {
  throw new RequestRejectedError(found);
}

export function isRequestRejectedError(err: unknown): err is RequestRejectedError {
  return err instanceof RequestRejectedError;
}
