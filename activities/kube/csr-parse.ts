/**
 * CertificateSigningRequest API object → ParsedCsr (core/nodes/csr.ts). The object is
 * zod-parsed; the PKCS#10 request in spec.request is decoded with @peculiar/x509, because
 * the subject and SANs the policy judges are in the request, not in the object's fields.
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { z } from 'zod';
import { type ParsedCsr } from '../../core/nodes/csr';

x509.cryptoProvider.set(webcrypto);

/** The CSR object or its request cannot be read; retrying cannot help. */
export class InvalidCsrError extends Error {
  readonly kind = 'InvalidCsr' as const;
  readonly retryable = false;
  constructor(
    readonly csrName: string,
    message: string,
  ) {
    super(message);
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

const nameOnly = z.object({ metadata: z.object({ name: z.string() }) });

/** Takes the client's object or raw JSON (`unknown`: it is parsed either way). */
export function parseCsr(obj: unknown): ParsedCsr {
  const result = csrObjectSchema.safeParse(obj);
  if (!result.success) {
    const name = nameOnly.safeParse(obj).data?.metadata.name ?? '(unnamed)';
    throw new InvalidCsrError(name, `CertificateSigningRequest ${name} is malformed: ${z.prettifyError(result.error)}`);
  }
  const { metadata, spec } = result.data;
  const request = decodeRequest(metadata.name, spec.request);
  const subject = request.subjectName;
  const commonNames = subject.getField('CN');
  return {
    name: metadata.name,
    signerName: spec.signerName,
    username: spec.username,
    groups: spec.groups,
    usages: spec.usages,
    subject: {
      // Several CNs make the subject ambiguous; joined, they match no node name.
      commonName: commonNames.length === 0 ? undefined : commonNames.join(','),
      organizations: subject.getField('O'),
    },
    ...subjectAltNames(request),
    createdAt: metadata.creationTimestamp,
  };
}

function decodeRequest(csrName: string, base64Pem: string): x509.Pkcs10CertificateRequest {
  try {
    return new x509.Pkcs10CertificateRequest(Buffer.from(base64Pem, 'base64').toString('utf8'));
  } catch (err) {
    throw new InvalidCsrError(csrName, `CertificateSigningRequest ${csrName}: spec.request is not a PEM PKCS#10 request: ${String(err)}`);
  }
}

type Sans = Pick<ParsedCsr, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris' | 'otherNames'>;

function subjectAltNames(request: x509.Pkcs10CertificateRequest): Sans {
  const sans: Sans = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [], otherNames: [] };
  let extensions: readonly x509.Extension[];
  try {
    extensions = request.extensions;
  } catch (err) {
    // The policy denies a request it cannot fully read rather than guess what it asks for.
    sans.otherNames.push(`undecodable extension request (${String(err)})`);
    return sans;
  }
  for (const extension of extensions) {
    if (!(extension instanceof x509.SubjectAlternativeNameExtension)) continue;
    for (const name of extension.names.items) {
      switch (name.type) {
        case 'dns': sans.dnsNames.push(name.value); break;
        case 'ip': sans.ipAddresses.push(name.value); break;
        case 'email': sans.emailAddresses.push(name.value); break;
        case 'url': sans.uris.push(name.value); break;
        default: sans.otherNames.push(`${name.type} ${name.value}`);
      }
    }
  }
  return sans;
}
