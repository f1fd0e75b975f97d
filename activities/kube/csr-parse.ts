/**
 * CertificateSigningRequest API object → ParsedCsr (core/csr/csr.ts). The object is
 * zod-parsed; the PKCS#10 request in spec.request is decoded the way the API server and
 * the kubelet signers decode it (Go's encoding/pem, then crypto/x509), because the
 * certificate is built from THEIR reading: go-pem.ts, der.ts, csr-der.ts and
 * csr-signature.ts read it strictly and refuse whatever two readers could see differently
 * (issue 10 item 1). A refused request is an InvalidCsrError: never approved.
 */
import { z } from 'zod';
import { type ParsedCsr } from '../../core/csr/csr';
import { readCsrDer, type CsrContents } from './csr-der';
import { nodesMentioned } from './csr-mentions';
import { isRequestRejectedError } from './csr-reject';
import { readPublicKey, verifyRequestSignature, type PublicKeyKind } from './csr-signature';
import { decodeStrictBase64, readCsrPem } from './go-pem';

/** The CSR object or its request cannot be read, or not in only one way; retrying cannot help. */
export class InvalidCsrError extends Error {
  readonly kind = 'InvalidCsr' as const;
  readonly retryable = false;
  /** spec.signerName, '' when even that is unreadable */
  readonly signerName: string;
  /**
   * Every node the CSR might be about, read as loosely as possible (requester, and any CN
   * in any block of the request): so each such node's review sees it and can deny it.
   */
  readonly namedNodes: string[];
  constructor(
    readonly csrName: string,
    message: string,
    context: { signerName?: string; namedNodes?: string[] } = {},
  ) {
    super(message);
    this.signerName = context.signerName ?? '';
    this.namedNodes = context.namedNodes ?? [];
  }
  override get name(): string {
    return 'InvalidCsrError';
  }
}

export function isInvalidCsrError(err: unknown): err is InvalidCsrError {
  return err instanceof InvalidCsrError;
}

// client-node turns date-time fields into Date; a raw JSON object carries strings.
const timestamp = z.union([z.date(), z.iso.datetime({ offset: true })]).transform((v) => new Date(v).getTime());

const conditionSchema = z.object({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

const csrObjectSchema = z.object({
  metadata: z.object({ name: z.string().min(1), creationTimestamp: timestamp, resourceVersion: z.string().optional() }),
  spec: z.object({
    request: z.string().min(1),
    signerName: z.string().min(1),
    username: z.string().default(''),
    groups: z.array(z.string()).default([]),
    usages: z.array(z.string()).default([]),
  }),
  status: z
    .object({ conditions: z.array(conditionSchema).default([]), certificate: z.string().optional() })
    .default({ conditions: [] }),
});

/** Where a CSR is in its life, from its conditions (a CSR is never both Approved and Denied). */
export type CsrState =
  | { phase: 'pending' }
  | { phase: 'approved'; issued: boolean; reason: string; message: string }
  | { phase: 'denied' | 'failed'; reason: string; message: string };

/** Takes the client's object or raw JSON (`unknown`: it is parsed either way). */
export function csrState(obj: unknown): CsrState {
  const parsed = z.object({ status: csrObjectSchema.shape.status }).parse(obj).status;
  const find = (type: string) => parsed.conditions.find((c) => c.type === type && c.status === 'True');
  const failed = find('Failed');
  if (failed) return { phase: 'failed', reason: failed.reason ?? '', message: failed.message ?? '' };
  const denied = find('Denied');
  if (denied) return { phase: 'denied', reason: denied.reason ?? '', message: denied.message ?? '' };
  const approved = find('Approved');
  if (approved) return { phase: 'approved', issued: (parsed.certificate ?? '') !== '', reason: approved.reason ?? '', message: approved.message ?? '' };
  return { phase: 'pending' };
}

// For the error of a malformed object: whatever of these fields is a string.
const maybe = z.string().optional().catch(undefined);
const looseSpec = z.object({
  metadata: z.object({ name: maybe }).optional().catch(undefined),
  spec: z.object({ signerName: maybe, username: maybe, request: maybe }).optional().catch(undefined),
});

/** Takes the client's object or raw JSON (`unknown`: it is parsed either way). */
export function parseCsr(obj: unknown): ParsedCsr {
  const result = csrObjectSchema.safeParse(obj);
  if (!result.success) {
    const loose = looseSpec.safeParse(obj).data;
    const name = loose?.metadata?.name ?? '(unnamed)';
    throw new InvalidCsrError(name, `CertificateSigningRequest ${name} is malformed: ${z.prettifyError(result.error)}`, {
      signerName: loose?.spec?.signerName,
      namedNodes: nodesMentioned({ username: loose?.spec?.username ?? '', request: loose?.spec?.request ?? '' }),
    });
  }
  const { metadata, spec } = result.data;
  const refuse = (why: string) =>
    new InvalidCsrError(metadata.name, `CertificateSigningRequest ${metadata.name}: spec.request refused: ${why}`, {
      signerName: spec.signerName,
      namedNodes: nodesMentioned(spec),
    });
  // Go marshals []byte as standard padded base64; Buffer.from(x, 'base64') would skip junk.
  const pem = decodeStrictBase64(spec.request);
  if (pem === undefined) throw refuse('it is not canonical standard base64 (as the API server writes bytes)');
  let request: CertificateRequest;
  try {
    request = decodeCertificateRequest(pem);
  } catch (err) {
    if (isRequestRejectedError(err)) throw refuse(err.message);
    throw err;
  }
  const { commonNames, organizations, dnsNames, ipAddresses, emailAddresses, uris, otherNames } = request;
  return {
    name: metadata.name,
    signerName: spec.signerName,
    username: spec.username,
    groups: spec.groups,
    usages: spec.usages,
    subject: {
      // Several CNs: Go (so the certificate) keeps the last. Joined, they match no node.
      commonName: commonNames.length === 0 ? undefined : commonNames.join(','),
      organizations,
    },
    dnsNames,
    ipAddresses,
    emailAddresses,
    uris,
    otherNames,
    createdAt: metadata.creationTimestamp,
  };
}

/** What the signer will certify, from a request it accepts and autonode can read in one way only. */
export interface CertificateRequest extends Omit<CsrContents, 'subjectPublicKeyInfo' | 'signedInfo' | 'signatureAlgorithm' | 'signature'> {
  publicKey: PublicKeyKind;
  /** the encoded SubjectPublicKeyInfo, as the certificate will carry it */
  subjectPublicKeyInfo: Uint8Array;
}

/** spec.request's bytes (PEM) → the request; RequestRejectedError when refused. */
export function decodeCertificateRequest(pem: Uint8Array): CertificateRequest {
  const { subjectPublicKeyInfo, signedInfo, signatureAlgorithm, signature, ...fields } = readCsrDer(readCsrPem(pem));
  const publicKey = readPublicKey(subjectPublicKeyInfo);
  verifyRequestSignature({ publicKey, signatureAlgorithm, signedInfo, signature });
  return { ...fields, publicKey: publicKey.kind, subjectPublicKeyInfo: subjectPublicKeyInfo.raw };
}
