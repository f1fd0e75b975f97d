/**
 * A kubelet's side of certificate bootstrap: an ECDSA P-256 key that never leaves the
 * process, and PKCS#10 requests for it. The kubelet does the same (certificate manager,
 * ECDSA keys since 1.19).
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createHash, webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto);

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface KubeletKey {
  keys: webcrypto.CryptoKeyPair;
  /** PKCS#8 PEM, as client-key-data wants it */
  keyPem: string;
}

export async function generateKubeletKey(): Promise<KubeletKey> {
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { keys, keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

export interface CsrSubject {
  commonName: string;
  organizations: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
}

/** A PEM PKCS#10 request signed by the key; SANs go into an extension request, as Go's do. */
export async function createCsrPem(key: KubeletKey, subject: CsrSubject): Promise<string> {
  const sans: x509.JsonGeneralName[] = [
    ...(subject.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(subject.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(subject.emailAddresses ?? []).map((value) => ({ type: 'email' as const, value })),
    ...(subject.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [subject.commonName] }, ...subject.organizations.map((o) => ({ O: [o] }))],
    keys: key.keys,
    signingAlgorithm: algorithm,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  return request.toString('pem');
}

/**
 * The name the kubelet gives its bootstrap client CSR: `node-csr-` and a digest of the
 * public key, the subject's CN and O, and the usages (digestedName in the kubelet's
 * bootstrap). A kubelet restarted while its request is pending keeps its key on disk, so it
 * asks under the same name, gets AlreadyExists, and waits for the request it already made.
 */
export async function bootstrapCsrName(key: KubeletKey, subject: CsrSubject, usages: readonly string[]): Promise<string> {
  const hash = createHash('sha512-256');
  // each field is encoded and delimited, so two different inputs never hash the same stream
  const write = (data: Uint8Array | string) => hash.update(Buffer.from(data).toString('base64url')).update('|');
  write(new Uint8Array(await webcrypto.subtle.exportKey('spki', key.keys.publicKey)));
  write(subject.commonName);
  for (const organization of subject.organizations) write(organization);
  for (const usage of usages) write(usage);
  return `node-csr-${hash.digest('base64url')}`;
}

/** Whether two PEM requests carry the same public key and subject (the kubelet's ensureCompatible). */
export function sameRequest(aPem: string, bPem: string): boolean {
  const [a, b] = [new x509.Pkcs10CertificateRequest(aPem), new x509.Pkcs10CertificateRequest(bPem)];
  return Buffer.from(a.publicKey.rawData).equals(Buffer.from(b.publicKey.rawData)) && a.subject === b.subject;
}
