/**
 * Builds PKCS#10 requests byte by byte, including the ones no library would produce (two
 * extensionRequest attributes, BMPString CNs, long-form lengths), each correctly signed so
 * that the only thing wrong with it is the thing under test. Signing is WebCrypto's; the
 * DER encoder here is independent of autonode's reader (activities/kube/der.ts), so a
 * misunderstanding in one is not mirrored in the other.
 */
import { webcrypto } from 'node:crypto';

// ---- DER encoding --------------------------------------------------------------------

export function tlv(tag: number, ...content: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const octets: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) octets.unshift(n % 256);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** A TLV whose length is spelled in `octets` long-form octets (BER, not DER). */
export function tlvLongLength(tag: number, content: Uint8Array, octets: number): Uint8Array {
  const length: number[] = [];
  for (let i = 0, n = content.length; i < octets; i++, n = Math.floor(n / 256)) length.unshift(n % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | octets, ...length]), content]);
}

export const seq = (...items: Uint8Array[]) => tlv(0x30, ...items);
export const set = (...items: Uint8Array[]) => tlv(0x31, ...items);
export const octets = (bytes: Uint8Array) => tlv(0x04, bytes);
export const bits = (bytes: Uint8Array, unused = 0) => tlv(0x03, Buffer.from([unused]), bytes);
export const nullValue = () => Buffer.from([0x05, 0x00]);
export const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));

export function oid(dotted: string): Uint8Array {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [];
  for (const arc of [a * 40 + b, ...rest]) {
    const groups = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) groups.unshift((n & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A non-negative INTEGER from big-endian magnitude bytes, minimally encoded. */
export function uint(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  return tlv(0x02, trimmed[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export const Strings = {
  utf8: (s: string) => tlv(0x0c, Buffer.from(s, 'utf8')),
  printable: (s: string) => tlv(0x13, Buffer.from(s, 'latin1')),
  t61: (s: string) => tlv(0x14, Buffer.from(s, 'latin1')),
  ia5: (s: string) => tlv(0x16, Buffer.from(s, 'latin1')),
  universal: (s: string) => tlv(0x1c, Buffer.concat([...s].map((c) => { const b = Buffer.alloc(4); b.writeUInt32BE(c.codePointAt(0)!); return b; }))),
  bmp: (s: string) => tlv(0x1e, Buffer.from(s, 'utf16le').swap16()),
};

export const OID = {
  cn: '2.5.4.3',
  o: '2.5.4.10',
  ou: '2.5.4.11',
  extensionRequest: '1.2.840.113549.1.9.14',
  challengePassword: '1.2.840.113549.1.9.7',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  basicConstraints: '2.5.29.19',
} as const;

/** One attribute of a Name: [type, encoded value]. */
export type Atv = [string, Uint8Array];
export const cn = (value: string, encode = Strings.printable): Atv => [OID.cn, encode(value)];
export const org = (value: string, encode = Strings.printable): Atv => [OID.o, encode(value)];

/** A Name: each inner array one RDN (SET), usually of one attribute. */
export function name(...rdns: Atv[][]): Uint8Array {
  return seq(...rdns.map((rdn) => set(...rdn.map(([type, value]) => seq(oid(type), value)))));
}

export const GeneralNames = {
  email: (s: string) => tlv(0x81, Buffer.from(s, 'latin1')),
  dns: (s: string) => tlv(0x82, Buffer.from(s, 'latin1')),
  uri: (s: string) => tlv(0x86, Buffer.from(s, 'latin1')),
  ip: (address: string) => tlv(0x87, ipBytes(address)),
};

function ipBytes(address: string): Uint8Array {
  if (!address.includes(':')) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = groups(tail);
  const all = address.includes('::') ? [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  return Buffer.from(all.flatMap((g) => [g >> 8, g & 0xff]));
}

export function extension(id: string, value: Uint8Array, critical?: boolean): Uint8Array {
  return seq(oid(id), ...(critical === undefined ? [] : [bool(critical)]), octets(value));
}

export const sanExtension = (...names: Uint8Array[]) => extension(OID.subjectAltName, seq(...names));

/** extensionRequest attribute: one value per list given (a kubelet sends one). */
export const extensionRequest = (...lists: Uint8Array[][]) => seq(oid(OID.extensionRequest), set(...lists.map((list) => seq(...list))));

/** The [0] attributes field. */
export const attributes = (...attrs: Uint8Array[]) => tlv(0xa0, ...attrs);

// ---- keys and signing ---------------------------------------------------------------

export type KeyKind = 'rsa2048' | 'p256' | 'p384' | 'ed25519';
export type ExtraKeyKind = 'rsa1024' | 'p521';

type Hash = 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512';

const algorithms: Record<KeyKind | ExtraKeyKind, { generate: webcrypto.AlgorithmIdentifier | webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams; hash: Hash }> = {
  rsa2048: { generate: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, hash: 'SHA-256' },
  rsa1024: { generate: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, hash: 'SHA-256' },
  p256: { generate: { name: 'ECDSA', namedCurve: 'P-256' }, hash: 'SHA-256' },
  p384: { generate: { name: 'ECDSA', namedCurve: 'P-384' }, hash: 'SHA-384' },
  p521: { generate: { name: 'ECDSA', namedCurve: 'P-521' }, hash: 'SHA-512' },
  ed25519: { generate: { name: 'Ed25519' }, hash: 'SHA-512' },
};

const signatureOids: Record<string, string> = {
  'RSASSA-PKCS1-v1_5/SHA-1': '1.2.840.113549.1.1.5',
  'RSASSA-PKCS1-v1_5/SHA-256': '1.2.840.113549.1.1.11',
  'RSASSA-PKCS1-v1_5/SHA-384': '1.2.840.113549.1.1.12',
  'RSASSA-PKCS1-v1_5/SHA-512': '1.2.840.113549.1.1.13',
  'ECDSA/SHA-1': '1.2.840.10045.4.1',
  'ECDSA/SHA-256': '1.2.840.10045.4.3.2',
  'ECDSA/SHA-384': '1.2.840.10045.4.3.3',
  'ECDSA/SHA-512': '1.2.840.10045.4.3.4',
};

export interface TestKey {
  kind: KeyKind | ExtraKeyKind;
  /** the WebCrypto pair, for @peculiar/x509's generator */
  keys: webcrypto.CryptoKeyPair;
  /** the algorithm to hand @peculiar/x509 as signingAlgorithm */
  signingAlgorithm: webcrypto.AlgorithmIdentifier | webcrypto.EcdsaParams | webcrypto.RsaHashedImportParams;
  spki: Uint8Array;
  /** the AlgorithmIdentifier autonode must accept for this key (hash overridable) */
  signatureAlgorithm(hash?: Hash): Uint8Array;
  /** an X.509 signature over `data` (ECDSA as DER Ecdsa-Sig-Value) */
  sign(data: Uint8Array, hash?: Hash): Promise<Uint8Array>;
}

export async function generateTestKey(kind: KeyKind | ExtraKeyKind): Promise<TestKey> {
  const { generate, hash: defaultHash } = algorithms[kind];
  const keys = (await webcrypto.subtle.generateKey(generate, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const spki = new Uint8Array(await webcrypto.subtle.exportKey('spki', keys.publicKey));
  const family = keys.privateKey.algorithm.name;
  const signingAlgorithm = family === 'Ed25519' ? { name: 'Ed25519' } : { ...keys.privateKey.algorithm, hash: defaultHash };
  return {
    kind,
    keys,
    signingAlgorithm,
    spki,
    signatureAlgorithm(hash = defaultHash) {
      if (family === 'Ed25519') return seq(oid('1.3.101.112'));
      const id = oid(signatureOids[`${family}/${hash}`]!);
      return family === 'ECDSA' ? seq(id) : seq(id, nullValue());
    },
    async sign(data, hash = defaultHash) {
      const params = family === 'ECDSA' ? { name: 'ECDSA', hash } : { name: family };
      if (family === 'RSASSA-PKCS1-v1_5' && hash !== defaultHash) {
        // WebCrypto binds the hash to an RSA key: re-import it for another hash.
        const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
        const other = await webcrypto.subtle.importKey('pkcs8', pkcs8, { name: family, hash }, false, ['sign']);
        return new Uint8Array(await webcrypto.subtle.sign(params, other, data));
      }
      const raw = new Uint8Array(await webcrypto.subtle.sign(params, keys.privateKey, data));
      if (family !== 'ECDSA') return raw;
      const half = raw.length / 2;
      return seq(uint(raw.subarray(0, half)), uint(raw.subarray(half)));
    },
  };
}

// ---- requests -----------------------------------------------------------------------

export interface RequestParts {
  subject: Uint8Array;
  /** the [0] attributes field; default: empty */
  attributes?: Uint8Array;
  /** default: INTEGER 0 */
  version?: Uint8Array;
  /** default: the signing key's own */
  spki?: Uint8Array;
  /** elements appended inside certificationRequestInfo (Go skips them) */
  extraInfo?: Uint8Array[];
}

export interface SignOptions {
  hash?: Hash;
  /** default: the key's own */
  signatureAlgorithm?: Uint8Array;
  /** changes the encoded certificationRequestInfo AFTER signing */
  alterSigned?: (info: Uint8Array) => Uint8Array;
  /** changes the signature bytes after signing */
  alterSignature?: (signature: Uint8Array) => Uint8Array;
  /** unused-bits octet of the signature BIT STRING */
  signatureUnusedBits?: number;
  /** elements appended to the outer SEQUENCE (Go skips them) */
  extraOuter?: Uint8Array[];
}

export function requestInfo(key: TestKey, parts: RequestParts): Uint8Array {
  return seq(parts.version ?? tlv(0x02, Buffer.from([0])), parts.subject, parts.spki ?? key.spki, parts.attributes ?? attributes(), ...(parts.extraInfo ?? []));
}

/** A DER CertificationRequest, signed by `key` over exactly the info it carries (unless altered). */
export async function signedRequest(key: TestKey, parts: RequestParts | Uint8Array, options: SignOptions = {}): Promise<Uint8Array> {
  const info = parts instanceof Uint8Array ? parts : requestInfo(key, parts);
  const signature = await key.sign(info, options.hash);
  return seq(
    options.alterSigned ? options.alterSigned(info) : info,
    options.signatureAlgorithm ?? key.signatureAlgorithm(options.hash),
    bits(options.alterSignature ? options.alterSignature(signature) : signature, options.signatureUnusedBits ?? 0),
    ...(options.extraOuter ?? []),
  );
}

export interface PemStyle {
  eol?: '\n' | '\r\n' | '\r';
  width?: number;
  type?: string;
  finalEol?: boolean;
}

/** PEM text as Go's pem.Encode writes it (64 columns, \n, final newline), unless styled otherwise. */
export function pem(der: Uint8Array, style: PemStyle = {}): string {
  const { eol = '\n', width = 64, type = 'CERTIFICATE REQUEST', finalEol = true } = style;
  const base64 = Buffer.from(der).toString('base64');
  const lines = base64.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
  return [`-----BEGIN ${type}-----`, ...lines, `-----END ${type}-----`].join(eol) + (finalEol ? eol : '');
}
