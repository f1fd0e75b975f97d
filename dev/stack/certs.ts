import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto);

/**
 * Certificates for a local control plane, the way envtest makes them: every key ECDSA
 * P-256 (PKCS#8 PEM), independent CAs for serving, service-account signing and client
 * auth. Node's crypto can only parse certificates, so @peculiar/x509 creates them.
 */
const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const validity = 7 * 24 * 60 * 60 * 1000; // a week: a dev stack never lives longer

export interface PemPair {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends PemPair {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

type Name = { cn: string; o?: string[] };

function jsonName({ cn, o = [] }: Name): x509.JsonName {
  return [{ CN: [cn] }, ...o.map((org) => ({ O: [org] }))];
}

function serialNumber(): string {
  // Positive, unique per certificate: API servers reject duplicate serials from one CA.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
}

async function privateKeyPem(keys: CryptoKeyPair): Promise<string> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
}

export async function createCertificateAuthority(name: Name): Promise<CertificateAuthority> {
  const keys = await generateKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: new x509.Name(jsonName(name)),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validity),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys, certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys) };
}

export interface LeafOptions {
  subject: Name;
  usage: 'server' | 'client';
  dnsNames?: string[];
  ipAddresses?: string[];
}

export async function issueCertificate(ca: CertificateAuthority, options: LeafOptions): Promise<PemPair> {
  const keys = await generateKeys();
  const now = Date.now();
  const sans: x509.JsonGeneralName[] = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([
      options.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
    ]),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: new x509.Name(jsonName(options.subject)),
    issuer: ca.cert.subjectName,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validity),
    signingAlgorithm: algorithm,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions,
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys) };
}
