/**
 * A kubelet's side of certificate bootstrap: an ECDSA P-256 key that never leaves the
 * process, and PKCS#10 requests for it. The kubelet does the same (certificate manager,
 * ECDSA keys since 1.19).
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

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
