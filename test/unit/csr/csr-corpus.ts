/**
 * The corpus the CSR differential test feeds to autonode and to Go (test/go/csrparse):
 * real requests made by @peculiar/x509 (as dev/simkubelet/pki.ts makes them) for every
 * key type, hand-crafted attacks named after what they attack, and seeded random
 * mutations of both. Deterministic in shape: keys are fresh each run (WebCrypto), every
 * choice comes from a seeded PRNG. Each entry says what autonode must do on its own
 * account; the differential rules (csr-differential.test.ts) apply to all of them.
 */
import { mulberry32 } from '../../support/random';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { nodeName } from './builders';
import {
  GeneralNames as GN,
  OID,
  Strings,
  attributes,
  bits,
  cn,
  extension,
  extensionRequest,
  generateTestKey,
  name,
  bool,
  nullValue,
  oid,
  org,
  pem,
  sanExtension,
  seq,
  set,
  signedRequest,
  tlv,
  tlvLongLength,
  type Atv,
  type KeyKind,
  type PemStyle,
  type RequestParts,
  type SignOptions,
  type TestKey,
} from './csr-builder';

x509.cryptoProvider.set(webcrypto);

export const otherNodeName = 'ip-10-0-9-9.ec2.internal';
export const nodeUser = (node: string) => `system:node:${node}`;
export const keyKinds: readonly KeyKind[] = ['rsa2048', 'p256', 'p384', 'ed25519'];

export interface CorpusEntry {
  id: string;
  /** spec.request's bytes (what the API server hands to pem.Decode) */
  request: Uint8Array;
  /**
   * What autonode must do whatever Go does: `accept` a well-formed request a kubelet could
   * send; `deny` an attack or ambiguity; `either` when only the differential rules apply.
   */
  autonode: 'accept' | 'deny' | 'either';
  /** for hand-crafted entries: what the entry attacks */
  attack?: string;
}

export type CorpusKeys = Record<KeyKind, TestKey> & { p256Other: TestKey; rsa1024: TestKey; p521: TestKey };

export async function generateCorpusKeys(): Promise<CorpusKeys> {
  const [rsa2048, p256, p384, ed25519, p256Other, rsa1024, p521] = await Promise.all(
    (['rsa2048', 'p256', 'p384', 'ed25519', 'p256', 'rsa1024', 'p521'] as const).map((kind) => generateTestKey(kind)),
  );
  return { rsa2048: rsa2048!, p256: p256!, p384: p384!, ed25519: ed25519!, p256Other: p256Other!, rsa1024: rsa1024!, p521: p521! };
}


const latin1 = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));
const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

export const kubeletSubject = (node: string, ...extra: Atv[][]) => name([cn(nodeUser(node))], [org('system:nodes')], ...extra);
export const nodeSans = () => [GN.dns(nodeName), GN.ip('10.0.1.5')];
/** a serving certificate also valid for the API server's own names: what an attacker wants */
export const apiServerSans = () => [GN.dns('kubernetes.default.svc'), GN.dns(nodeName), GN.ip('10.96.0.1')];
export const withSans = (...names: Uint8Array[]) => attributes(extensionRequest([sanExtension(...names)]));

/** A request made by @peculiar/x509, as the simulated kubelet makes them. */
async function peculiarRequest(key: TestKey, subject: x509.JsonName, sans: x509.JsonGeneralName[]): Promise<Uint8Array> {
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys: key.keys,
    signingAlgorithm: key.signingAlgorithm,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  return new Uint8Array(request.rawData);
}

interface Base {
  id: string;
  key: TestKey;
  der: Uint8Array;
}

/** Well-formed requests from a real library: every key type, the shapes a kubelet sends and a few it does not. */
async function realRequests(keys: CorpusKeys): Promise<Base[]> {
  const shapes: Array<[string, x509.JsonName, x509.JsonGeneralName[]]> = [
    ['client', [{ CN: [nodeUser(nodeName)] }, { O: ['system:nodes'] }], []],
    ['serving', [{ CN: [nodeUser(nodeName)] }, { O: ['system:nodes'] }], [{ type: 'dns', value: nodeName }, { type: 'ip', value: '10.0.1.5' }]],
    ['serving-ipv6', [{ CN: [nodeUser(nodeName)] }, { O: ['system:nodes'] }], [{ type: 'ip', value: 'fd00:ec2:0:0:0:0:0:5' }]],
    ['email-uri', [{ CN: [nodeUser(nodeName)] }, { O: ['system:nodes'] }], [{ type: 'email', value: 'node@example.com' }, { type: 'url', value: 'spiffe://cluster/ns/kube-system/sa/x' }]],
    ['no-o', [{ CN: [nodeUser(nodeName)] }], []],
    ['two-o', [{ CN: [nodeUser(nodeName)] }, { O: ['system:nodes'] }, { O: ['system:masters'] }], []],
  ];
  const bases: Base[] = [];
  for (const kind of keyKinds) {
    for (const [shape, subject, sans] of shapes) {
      bases.push({ id: `peculiar-${kind}-${shape}`, key: keys[kind], der: await peculiarRequest(keys[kind], subject, sans) });
    }
  }
  return bases;
}

/** The PEM text of `der` with a change applied to its lines (0 = BEGIN, last = END). */
function editLines(der: Uint8Array, edit: (lines: string[]) => string[], style: PemStyle = {}): string {
  const lines = pem(der, { ...style, finalEol: false }).split(style.eol ?? '\n');
  return edit(lines).join(style.eol ?? '\n') + (style.eol ?? '\n');
}

const latin1Lines = (...args: Parameters<typeof editLines>) => latin1(editLines(...args));

const setLine = (index: (lines: string[]) => number, change: (line: string) => string) => (lines: string[]) => {
  const at = index(lines);
  return lines.map((line, i) => (i === at ? change(line) : line));
};
const bodyLine = (n: number) => (lines: string[]) => Math.min(n, lines.length - 2);
const endLine = (lines: string[]) => lines.length - 1;

/** Replace the base64 quantum at `at` (a multiple of 4) in the body, keeping line breaks. */
function editBase64(der: Uint8Array, change: (base64: string) => string): Uint8Array {
  const base64 = change(Buffer.from(der).toString('base64'));
  const lines = base64.match(/.{1,64}/g) ?? [];
  return latin1(['-----BEGIN CERTIFICATE REQUEST-----', ...lines, '-----END CERTIFICATE REQUEST-----', ''].join('\n'));
}

/** A DER request whose length leaves `remainder` bytes in the last base64 quantum. */
async function requestWithRemainder(key: TestKey, remainder: 1 | 2): Promise<Uint8Array> {
  for (let pad = 0; ; pad++) {
    const padding: Atv[][] = pad === 0 ? [] : [[org('x'.repeat(pad))]];
    const der = await signedRequest(key, { subject: kubeletSubject(nodeName, ...padding), attributes: withSans(...nodeSans()) });
    if (der.length % 3 === remainder) return der;
  }
}

type Attack = { id: string; attack: string; autonode: CorpusEntry['autonode']; request: Uint8Array | Promise<Uint8Array> };

/** Hand-crafted attacks and edge cases; ids say what each attacks. */
async function attacks(keys: CorpusKeys): Promise<CorpusEntry[]> {
  const key = keys.p256;
  const benign = await signedRequest(key, { subject: kubeletSubject(nodeName), attributes: withSans(...nodeSans()) });
  const hostile = await signedRequest(keys.p256Other, { subject: kubeletSubject(nodeName), attributes: withSans(...apiServerSans()) });
  const B = pem(benign);
  const H = pem(hostile);
  const sign = (parts: Partial<RequestParts>, options: SignOptions = {}, signer: TestKey = key) =>
    signedRequest(signer, { subject: kubeletSubject(nodeName), attributes: withSans(...nodeSans()), ...parts }, options);
  const asPem = async (der: Uint8Array | Promise<Uint8Array>) => latin1(pem(await der));
  const list: Attack[] = [
    // --- PEM: which block, and what is around it
    { id: 'two-blocks-benign-first', attack: 'a second block the signer never reads; a reader taking the last block judges the wrong one', autonode: 'deny', request: latin1(B + H) },
    { id: 'two-blocks-hostile-first', attack: 'Go signs the first block; a reader taking the last judges the benign one', autonode: 'deny', request: latin1(H + B) },
    { id: 'two-blocks-garbage-between', attack: 'two blocks with junk between', autonode: 'deny', request: latin1(`${B}junk between blocks\n${H}`) },
    { id: 'two-blocks-benign-first-indented', attack: 'Go skips a BEGIN not at the start of a line and signs the SECOND block; regex readers take the first', autonode: 'deny', request: latin1(` ${B}${H}`) },
    { id: 'two-blocks-benign-first-end-line-junk', attack: 'Go skips a block whose END line has junk after the dashes and signs the second', autonode: 'deny', request: latin1(editLines(benign, setLine(endLine, (l) => `${l} x`)) + H) },
    { id: 'two-blocks-hostile-first-space-in-body', attack: 'Go strips the space and signs the first (hostile) block; a regex reader rejects it and judges the second', autonode: 'deny', request: latin1(editLines(hostile, setLine(bodyLine(2), (l) => `${l} `)) + B) },
    { id: 'two-blocks-benign-first-bad-base64', attack: 'Go skips a block whose base64 does not decode (a lax decoder reads it) and signs the next', autonode: 'deny', request: latin1(editLines(benign, setLine(bodyLine(2), (l) => `*${l.slice(1)}`)) + H) },
    { id: 'two-blocks-first-wrong-type', attack: 'first block NEW CERTIFICATE REQUEST: the API server refuses, a lax reader takes either', autonode: 'deny', request: latin1(pem(benign, { type: 'NEW CERTIFICATE REQUEST' }) + H) },
    { id: 'nested-begin', attack: 'BEGIN, benign base64, BEGIN, hostile base64, END: Go takes the LAST BEGIN before the first END', autonode: 'deny', request: latin1(B.split('\n').slice(0, -2).join('\n') + '\n' + H) },
    { id: 'end-label-mismatch', attack: 'END names another type: Go finds no block', autonode: 'deny', request: latin1(B.replace('END CERTIFICATE REQUEST', 'END CERTIFICATE')) },
    { id: 'end-label-mismatch-then-block', attack: 'a block Go skips (END label differs), then the hostile one', autonode: 'deny', request: latin1(B.replace('END CERTIFICATE REQUEST', 'END CERTIFICATE') + H) },
    { id: 'type-new-certificate-request', attack: 'old label NEW CERTIFICATE REQUEST, refused by the API server', autonode: 'deny', request: latin1(pem(benign, { type: 'NEW CERTIFICATE REQUEST' })) },
    { id: 'type-certificate', attack: 'a CERTIFICATE block', autonode: 'deny', request: latin1(pem(benign, { type: 'CERTIFICATE' })) },
    { id: 'type-lowercase', attack: 'label in lower case', autonode: 'deny', request: latin1(pem(benign, { type: 'certificate request' })) },
    { id: 'headers-proc-type', attack: 'RFC 1421 headers: Go parses them, other readers may take them for base64', autonode: 'deny', request: latin1Lines(benign, (l) => [l[0]!, 'Proc-Type: 4,ENCRYPTED', 'DEK-Info: AES-128-CBC,00', '', ...l.slice(1)]) },
    { id: 'headers-no-blank-line', attack: 'a header line straight before the base64', autonode: 'deny', request: latin1Lines(benign, (l) => [l[0]!, 'Comment: hello', ...l.slice(1)]) },
    { id: 'garbage-before-begin', attack: 'text before the block (Go skips it)', autonode: 'deny', request: latin1(`hello\n${B}`) },
    { id: 'garbage-after-end', attack: 'text after the block (Go returns it as rest)', autonode: 'deny', request: latin1(`${B}trailing junk`) },
    { id: 'garbage-same-line-before-begin', attack: 'BEGIN not at the start of a line: Go finds no block', autonode: 'deny', request: latin1(`x${B}`) },
    { id: 'nul-before-begin', attack: 'NUL byte before the block', autonode: 'deny', request: latin1(`\0\n${B}`) },
    { id: 'non-ascii-before-begin', attack: 'UTF-8 before the block', autonode: 'deny', request: new Uint8Array(Buffer.concat([utf8('é\n'), latin1(B)])) },
    { id: 'nul-in-body', attack: 'NUL inside the base64', autonode: 'deny', request: latin1Lines(benign, setLine(bodyLine(1), (l) => `${l.slice(0, 10)}\0${l.slice(10)}`)) },
    { id: 'non-ascii-in-body', attack: 'Latin-1 byte inside the base64', autonode: 'deny', request: latin1Lines(benign, setLine(bodyLine(1), (l) => `${l.slice(0, 10)}\xe9${l.slice(10)}`)) },
    // --- PEM: whitespace and line endings
    { id: 'space-before-begin', attack: 'indented BEGIN: Go finds no block', autonode: 'deny', request: latin1(` ${B}`) },
    { id: 'tab-before-begin', attack: 'tab-indented BEGIN', autonode: 'deny', request: latin1(`\t${B}`) },
    { id: 'space-before-end', attack: 'indented END: Go finds no END', autonode: 'deny', request: latin1Lines(benign, setLine(endLine, (l) => ` ${l}`)) },
    { id: 'spaces-after-begin', attack: 'trailing blanks on the BEGIN line (Go trims them)', autonode: 'either', request: latin1Lines(benign, setLine(() => 0, (l) => `${l} \t `)) },
    { id: 'spaces-after-end', attack: 'trailing blanks on the END line (Go trims them)', autonode: 'either', request: latin1Lines(benign, setLine(endLine, (l) => `${l}  `)) },
    { id: 'body-trailing-spaces', attack: 'blanks at the end of base64 lines: Go strips them, regex readers stop there', autonode: 'deny', request: latin1Lines(benign, (l) => l.map((line, i) => (i > 0 && i < l.length - 1 ? `${line} ` : line))) },
    { id: 'body-tab-inside-line', attack: 'a tab inside a base64 line', autonode: 'deny', request: latin1Lines(benign, setLine(bodyLine(1), (l) => `${l.slice(0, 20)}\t${l.slice(20)}`)) },
    { id: 'body-blank-line', attack: 'a blank line inside the base64', autonode: 'deny', request: latin1Lines(benign, (l) => [...l.slice(0, 2), '', ...l.slice(2)]) },
    { id: 'crlf', attack: 'CRLF line endings (Windows tools)', autonode: 'accept', request: latin1(pem(benign, { eol: '\r\n' })) },
    { id: 'cr-only', attack: 'CR-only line endings: Go finds no block', autonode: 'deny', request: latin1(pem(benign, { eol: '\r' })) },
    { id: 'crlf-body-lf-markers', attack: 'mixed line endings', autonode: 'either', request: latin1(B.replace(/\n(?!-----)/g, '\r\n')) },
    { id: 'end-line-then-lone-cr', attack: 'END line then CR without LF: Go refuses the END line', autonode: 'deny', request: latin1(`${B.trimEnd()}\r`) },
    { id: 'no-final-newline', attack: 'no newline after END (@peculiar/x509 writes this)', autonode: 'accept', request: latin1(B.trimEnd()) },
    { id: 'leading-blank-lines', attack: 'blank lines before BEGIN', autonode: 'accept', request: latin1(`\n\n${B}`) },
    { id: 'trailing-blank-lines', attack: 'blank lines and blanks after END', autonode: 'accept', request: latin1(`${B}\n \t\n`) },
    { id: 'width-76', attack: 'MIME line width', autonode: 'accept', request: latin1(pem(benign, { width: 76 })) },
    { id: 'width-one-line', attack: 'the whole base64 on one line', autonode: 'accept', request: latin1(pem(benign, { width: 10_000 })) },
    // --- PEM: base64
    { id: 'base64-invalid-char', attack: 'a character outside base64 in a line', autonode: 'deny', request: latin1Lines(benign, setLine(bodyLine(1), (l) => `${l.slice(0, 5)}*${l.slice(6)}`)) },
    { id: 'base64-url-alphabet', attack: 'base64url characters', autonode: 'deny', request: latin1Lines(benign, setLine(bodyLine(1), (l) => `${l.slice(0, 5)}-_${l.slice(7)}`)) },
    { id: 'base64-missing-padding', attack: 'padding dropped', autonode: 'deny', request: (async () => editBase64(await requestWithRemainder(key, 1), (b) => b.replace(/=+$/, '')))() },
    { id: 'base64-extra-padding', attack: 'one = too many', autonode: 'deny', request: (async () => editBase64(await requestWithRemainder(key, 2), (b) => `${b}=`))() },
    { id: 'base64-interior-padding', attack: '= inside the base64: Go stops decoding there', autonode: 'deny', request: editBase64(benign, (b) => `${b.slice(0, 40)}AA==${b.slice(44)}`) },
    { id: 'base64-nonzero-padding-bits', attack: 'non-zero padding bits: Go ignores them, strict decoders refuse', autonode: 'deny', request: (async () => editBase64(await requestWithRemainder(key, 1), (b) => b.replace(/(.)==$/, (_, c: string) => `${bumpLowBits(c)}==`)))() },
    { id: 'empty-request', attack: 'no bytes at all', autonode: 'deny', request: latin1('') },
    { id: 'whitespace-only', attack: 'only whitespace', autonode: 'deny', request: latin1(' \n\t\n') },
    { id: 'der-not-pem', attack: 'raw DER instead of PEM', autonode: 'deny', request: benign },
    { id: 'base64-without-markers', attack: 'base64 DER without BEGIN/END', autonode: 'deny', request: latin1(Buffer.from(benign).toString('base64')) },
    { id: 'pem-inside-pem', attack: 'PEM of the base64 of a PEM', autonode: 'deny', request: latin1(pem(latin1(B))) },
    ...truncations(benign),
    // --- DER framing
    { id: 'der-trailing-zero-bytes', attack: 'bytes after the DER', autonode: 'deny', request: asPem(Buffer.concat([benign, Buffer.from([0, 0])])) },
    { id: 'der-trailing-second-request', attack: 'a second request appended to the DER', autonode: 'deny', request: asPem(Buffer.concat([benign, hostile])) },
    { id: 'der-outer-length-leading-zero', attack: 'outer length in 3 octets with a leading zero (BER)', autonode: 'deny', request: asPem(reframeOuter(benign, 3)) },
    { id: 'der-long-form-short-length-in-subject', attack: 'long-form length for a short CN (BER), signed', autonode: 'deny', request: asPem(sign({ subject: seq(set(seq(oid(OID.cn), tlvLongLength(0x13, latin1(nodeUser(nodeName)), 1))), set(seq(oid(OID.o), Strings.printable('system:nodes')))) })) },
    { id: 'der-indefinite-length-subject', attack: 'indefinite length (BER) in the subject, signed', autonode: 'deny', request: asPem(sign({ subject: new Uint8Array(Buffer.concat([Buffer.from([0x30, 0x80]), kubeletSubject(nodeName).subarray(2), Buffer.from([0, 0])])) })) },
    { id: 'der-extra-element-outer', attack: 'an extra element after the signature: Go ignores it', autonode: 'deny', request: asPem(sign({}, { extraOuter: [tlv(0x02, Buffer.from([1]))] })) },
    { id: 'der-extra-element-info', attack: 'an extra element after the attributes, signed: Go ignores it', autonode: 'deny', request: asPem(sign({ extraInfo: [withSans(GN.dns('kubernetes.default.svc'))] })) },
    { id: 'der-version-1', attack: 'version 1 (Go does not check)', autonode: 'deny', request: asPem(sign({ version: tlv(0x02, Buffer.from([1])) })) },
    { id: 'der-version-non-minimal', attack: 'version 0 in two octets', autonode: 'deny', request: asPem(sign({ version: tlv(0x02, Buffer.from([0, 0])) })) },
    { id: 'der-attributes-missing', attack: 'no [0] attributes field', autonode: 'deny', request: asPem(signedRequest(key, seq(tlv(0x02, Buffer.from([0])), kubeletSubject(nodeName), key.spki))) },
    { id: 'der-attributes-as-set', attack: 'attributes tagged SET instead of [0]', autonode: 'deny', request: asPem(sign({ attributes: tlv(0x31, extensionRequest([sanExtension(...nodeSans())])) })) },
    { id: 'der-signature-unused-bits', attack: 'signature BIT STRING with unused bits', autonode: 'deny', request: asPem(sign({}, { signatureUnusedBits: 1 })) },
    // --- attributes and extensions
    { id: 'two-extension-requests-split-san', attack: 'benign SAN in the first extensionRequest, kubernetes.default.svc in a second', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([sanExtension(...nodeSans())]), extensionRequest([sanExtension(...apiServerSans())])) })) },
    { id: 'two-extension-requests-keyusage-then-san', attack: 'first extensionRequest without SANs (all a first-attribute reader sees), SANs in a second (Go reads both)', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([extension(OID.keyUsage, bits(Buffer.from([0x80]), 7))]), extensionRequest([sanExtension(...apiServerSans())])) })) },
    { id: 'two-extension-requests-client', attack: 'client request: empty first extensionRequest, SANs in the second', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([]), extensionRequest([sanExtension(GN.dns('kubernetes.default.svc'))])) })) },
    { id: 'extension-request-two-values', attack: 'one extensionRequest with two values: Go reads the first only', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([sanExtension(...nodeSans())], [sanExtension(...apiServerSans())])) })) },
    { id: 'two-san-extensions', attack: 'benign SAN then kubernetes.default.svc SAN in one list', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([sanExtension(...nodeSans()), sanExtension(...apiServerSans())])) })) },
    { id: 'san-and-key-usage', attack: 'an extension other than SAN', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([sanExtension(...nodeSans()), extension(OID.basicConstraints, seq(bool(true)), true)])) })) },
    { id: 'san-critical-explicit-false', attack: 'critical=FALSE spelled out (not DER)', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([extension(OID.subjectAltName, seq(...nodeSans()), false)])) })) },
    { id: 'san-critical-true', attack: 'critical SAN (Go marks SAN critical for an empty subject)', autonode: 'either', request: asPem(sign({ attributes: attributes(extensionRequest([extension(OID.subjectAltName, seq(...nodeSans()), true)])) })) },
    { id: 'challenge-password-attribute', attack: 'a second attribute Go ignores', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([sanExtension(...nodeSans())]), seq(oid(OID.challengePassword), set(Strings.utf8('secret')))) })) },
    { id: 'empty-extension-request', attack: 'an extensionRequest with no extensions', autonode: 'either', request: asPem(sign({ attributes: attributes(extensionRequest([])) })) },
    { id: 'san-empty', attack: 'an empty SAN extension', autonode: 'deny', request: asPem(sign({ attributes: withSans() })) },
    { id: 'san-trailing-bytes-in-value', attack: 'bytes after the GeneralNames in the SAN extension: Go ignores them', autonode: 'deny', request: asPem(sign({ attributes: attributes(extensionRequest([extension(OID.subjectAltName, Buffer.concat([seq(...nodeSans()), GN.dns('kubernetes.default.svc')]))])) })) },
    { id: 'san-constructed-dns-tag', attack: 'a DNS name with the constructed bit: Go skips it, others may not', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.dns(nodeName), tlv(0xa2, Strings.ia5('kubernetes.default.svc'))) })) },
    { id: 'san-dns-nul', attack: 'DNS SAN with an embedded NUL', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.dns(`${nodeName}\0.evil.example`)) })) },
    { id: 'san-dns-non-ascii', attack: 'DNS SAN with a non-ASCII byte', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.dns(`ip-10-0-1-5\xe9.ec2.internal`)) })) },
    { id: 'san-dns-space', attack: 'DNS SAN with a space', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.dns(`${nodeName} kubernetes.default.svc`)) })) },
    { id: 'san-ip-5-bytes', attack: 'IP SAN of 5 bytes', autonode: 'deny', request: asPem(sign({ attributes: withSans(tlv(0x87, Buffer.from([10, 0, 1, 5, 0]))) })) },
    { id: 'san-ipv4-mapped-ipv6', attack: '::ffff:10.0.1.5: Go prints 10.0.1.5, others print IPv6', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.ip('::ffff:a00:105')) })) },
    { id: 'san-ipv6', attack: 'IPv6 SAN, spelled the RFC 5952 way by both', autonode: 'accept', request: asPem(sign({ attributes: withSans(GN.ip('fd00:ec2::5'), GN.ip('2001:db8:0:0:1:0:0:1')) })) },
    { id: 'san-email-uri', attack: 'email and URI SANs (policy denies them)', autonode: 'accept', request: asPem(sign({ attributes: withSans(GN.email('node@example.com'), GN.uri('spiffe://cluster/ns/x')) })) },
    { id: 'san-uri-uppercase-scheme', attack: 'URI Go re-prints differently', autonode: 'deny', request: asPem(sign({ attributes: withSans(GN.uri('HTTPS://kubernetes.default.svc/')) })) },
    { id: 'san-other-name', attack: 'otherName SAN (Go ignores it; policy denies)', autonode: 'either', request: asPem(sign({ attributes: withSans(GN.dns(nodeName), tlv(0xa0, oid('1.3.6.1.4.1.311.20.2.3'), tlv(0xa0, Strings.utf8('admin@corp')))) })) },
    { id: 'san-directory-name', attack: 'directoryName SAN (Go ignores it; policy denies)', autonode: 'either', request: asPem(sign({ attributes: withSans(tlv(0xa4, name([cn('system:masters')])), GN.dns(nodeName)) })) },
    // --- subject
    { id: 'two-cns-node-then-other', attack: 'two CNs: Go certifies the LAST', autonode: 'either', request: asPem(sign({ subject: name([cn(nodeUser(nodeName))], [cn(nodeUser(otherNodeName))], [org('system:nodes')]) })) },
    { id: 'two-cns-other-then-node', attack: 'two CNs, ours last', autonode: 'either', request: asPem(sign({ subject: name([cn(nodeUser(otherNodeName))], [cn(nodeUser(nodeName))], [org('system:nodes')]) })) },
    { id: 'two-cns-one-rdn', attack: 'two CNs in one multi-valued RDN', autonode: 'either', request: asPem(sign({ subject: name([cn(nodeUser(otherNodeName)), cn(nodeUser(nodeName))], [org('system:nodes')]) })) },
    { id: 'cn-bmpstring', attack: 'CN as BMPString (UTF-16)', autonode: 'deny', request: asPem(sign({ subject: name([cn(nodeUser(nodeName), Strings.bmp)], [org('system:nodes')]) })) },
    { id: 'cn-t61string', attack: 'CN as T61String', autonode: 'deny', request: asPem(sign({ subject: name([cn(nodeUser(nodeName), Strings.t61)], [org('system:nodes')]) })) },
    { id: 'cn-universalstring', attack: 'CN as UniversalString (Go drops it)', autonode: 'deny', request: asPem(sign({ subject: name([cn(nodeUser(nodeName), Strings.universal)], [org('system:nodes')]) })) },
    { id: 'cn-universalstring-then-printable', attack: 'a UniversalString CN Go drops, then another CN', autonode: 'deny', request: asPem(sign({ subject: name([cn(nodeUser(otherNodeName), Strings.universal)], [cn(nodeUser(nodeName))], [org('system:nodes')]) })) },
    { id: 'cn-ia5string', attack: 'CN as IA5String, ASCII', autonode: 'accept', request: asPem(sign({ subject: name([cn(nodeUser(nodeName), Strings.ia5)], [org('system:nodes')]) })) },
    { id: 'cn-utf8string-ascii', attack: 'CN as UTF8String, ASCII', autonode: 'accept', request: asPem(sign({ subject: name([cn(nodeUser(nodeName), Strings.utf8)], [org('system:nodes', Strings.utf8)]) })) },
    { id: 'cn-utf8string-non-ascii', attack: 'CN with a Unicode hyphen lookalike', autonode: 'deny', request: asPem(sign({ subject: name([cn(nodeUser('ip\u201010-0-1-5.ec2.internal'), Strings.utf8)], [org('system:nodes')]) })) },
    { id: 'cn-printablestring-non-ascii', attack: 'PrintableString with a Latin-1 byte (invalid)', autonode: 'deny', request: asPem(sign({ subject: name([cn(`${nodeUser(nodeName)}\xe9`)], [org('system:nodes')]) })) },
    { id: 'cn-printablestring-asterisk', attack: 'PrintableString with * (Go allows it)', autonode: 'deny', request: asPem(sign({ subject: name([cn('system:node:*')], [org('system:nodes')]) })) },
    { id: 'cn-nul', attack: 'CN with an embedded NUL', autonode: 'deny', request: asPem(sign({ subject: name([cn(`${nodeUser(nodeName)}\0x`, Strings.utf8)], [org('system:nodes')]) })) },
    { id: 'cn-newline', attack: 'CN with a newline', autonode: 'deny', request: asPem(sign({ subject: name([cn(`${nodeUser(nodeName)}\n`, Strings.utf8)], [org('system:nodes')]) })) },
    { id: 'cn-integer-value', attack: 'CN value an INTEGER (Go drops it)', autonode: 'deny', request: asPem(sign({ subject: name([[OID.cn, tlv(0x02, Buffer.from([1]))]], [org('system:nodes')]) })) },
    { id: 'o-system-masters', attack: 'extra O system:masters (policy denies)', autonode: 'accept', request: asPem(sign({ subject: kubeletSubject(nodeName, [org('system:masters')]) })) },
    { id: 'ou-attribute', attack: 'an OU the policy does not look at', autonode: 'deny', request: asPem(sign({ subject: kubeletSubject(nodeName, [[OID.ou, Strings.printable('system:masters')]]) })) },
    { id: 'empty-rdn', attack: 'an empty RDN SET (Go skips it)', autonode: 'deny', request: asPem(sign({ subject: seq(set(), set(seq(oid(OID.cn), Strings.printable(nodeUser(nodeName))))) })) },
    { id: 'empty-subject', attack: 'no subject at all', autonode: 'either', request: asPem(sign({ subject: seq() })) },
    // --- keys and signatures
    { id: 'bad-signature-flipped-byte', attack: 'a signature byte flipped', autonode: 'deny', request: asPem(sign({}, { alterSignature: flipByte(10) })) },
    { id: 'bad-signature-altered-cn', attack: 'CN changed after signing', autonode: 'deny', request: asPem(sign({}, { alterSigned: (info) => latin1(Buffer.from(info).toString('latin1').replace(nodeName, otherNodeName)) })) },
    { id: 'mismatched-key', attack: 'signed by one key, carrying another', autonode: 'deny', request: asPem(sign({ spki: keys.p256Other.spki })) },
    { id: 'signature-algorithm-mismatch', attack: 'ECDSA key, RSA signature algorithm', autonode: 'deny', request: asPem(sign({}, { signatureAlgorithm: keys.rsa2048.signatureAlgorithm() })) },
    { id: 'ecdsa-sha1', attack: 'SHA-1 (Go allows it for CSRs)', autonode: 'deny', request: asPem(sign({}, { hash: 'SHA-1' })) },
    { id: 'rsa-sha1', attack: 'SHA-1 RSA (Go allows it for CSRs)', autonode: 'deny', request: asPem(sign({}, { hash: 'SHA-1' }, keys.rsa2048)) },
    { id: 'rsa-1024', attack: 'a 1024-bit RSA key', autonode: 'deny', request: asPem(sign({}, {}, keys.rsa1024)) },
    { id: 'ecdsa-p521', attack: 'P-521 (Go accepts; not a kubelet key)', autonode: 'deny', request: asPem(sign({}, {}, keys.p521)) },
    { id: 'ecdsa-p256-sha512', attack: 'P-256 with SHA-512', autonode: 'accept', request: asPem(sign({}, { hash: 'SHA-512' })) },
    { id: 'rsa-sha512', attack: 'RSA with SHA-512', autonode: 'accept', request: asPem(sign({}, { hash: 'SHA-512' }, keys.rsa2048)) },
    { id: 'ecdsa-signature-non-minimal-integer', attack: 'r with a superfluous leading zero', autonode: 'deny', request: asPem(sign({}, { alterSignature: padEcdsaR })) },
    { id: 'ecdsa-signature-trailing-bytes', attack: 'bytes after the Ecdsa-Sig-Value', autonode: 'deny', request: asPem(sign({}, { alterSignature: (s) => Buffer.concat([s, Buffer.from([0])]) })) },
    { id: 'rsa-sigalg-no-null', attack: 'RSA signature algorithm without NULL parameters (Go does not check)', autonode: 'deny', request: asPem(sign({}, { signatureAlgorithm: seq(oid('1.2.840.113549.1.1.11')) }, keys.rsa2048)) },
    { id: 'ecdsa-sigalg-null', attack: 'ECDSA signature algorithm with NULL parameters (Go does not check)', autonode: 'deny', request: asPem(sign({}, { signatureAlgorithm: seq(oid('1.2.840.10045.4.3.2'), nullValue()) })) },
    { id: 'ed25519-sigalg-null', attack: 'Ed25519 signature algorithm with parameters', autonode: 'deny', request: asPem(sign({}, { signatureAlgorithm: seq(oid('1.3.101.112'), nullValue()) }, keys.ed25519)) },
    { id: 'ecdsa-compressed-point', attack: 'a compressed EC point', autonode: 'deny', request: asPem(sign({ spki: compressPoint(key.spki) })) },
  ];
  const entries: CorpusEntry[] = [];
  for (const { id, attack, autonode, request } of list) entries.push({ id, attack, autonode, request: await request });
  return entries;
}

function truncations(der: Uint8Array): Attack[] {
  const text = pem(der);
  const lines = text.split('\n');
  const at = (line: number, column = 0) => lines.slice(0, line).join('\n').length + (line > 0 ? 1 : 0) + column;
  const cuts: Array<[string, number]> = [
    ['mid-begin', 7],
    ['after-begin', at(1)],
    ['mid-first-line', at(1, 30)],
    ['at-line-boundary', at(3)],
    ['before-end', at(lines.length - 2)],
    ['mid-end-label', at(lines.length - 2, 15)],
    ['end-missing-dashes', at(lines.length - 2, '-----END CERTIFICATE REQUEST'.length)],
    ['end-missing-last-dash', text.trimEnd().length - 1],
  ];
  return cuts.map(([where, length]) => ({ id: `truncated-${where}`, attack: `PEM cut ${where}`, autonode: 'deny' as const, request: latin1(text.slice(0, length)) }));
}

function bumpLowBits(c: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return alphabet[alphabet.indexOf(c) | 1]!;
}

const flipByte = (at: number) => (bytes: Uint8Array) => {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
};

/** Ecdsa-Sig-Value with r re-encoded with one extra leading zero. */
function padEcdsaR(signature: Uint8Array): Uint8Array {
  const rLength = signature[3]!;
  const r = signature.subarray(4, 4 + rLength);
  const rest = signature.subarray(4 + rLength);
  return seq(tlv(0x02, Buffer.concat([Buffer.from([0]), r])), rest);
}

/** The outer SEQUENCE's length re-spelled in `octets` octets. */
function reframeOuter(der: Uint8Array, octets: number): Uint8Array {
  const lengthOctets = der[1]! & 0x80 ? der[1]! & 0x7f : 0;
  return tlvLongLength(0x30, der.subarray(2 + lengthOctets), octets);
}

/** An uncompressed-point P-256 SPKI rewritten with the compressed point. */
function compressPoint(spki: Uint8Array): Uint8Array {
  const point = spki.subarray(spki.length - 65);
  const compressed = Buffer.concat([Buffer.from([0x02 | (point[64]! & 1)]), point.subarray(1, 33)]);
  return seq(seq(oid('1.2.840.10045.2.1'), oid('1.2.840.10045.3.1.7')), bits(compressed));
}

/** The elements of a DER SEQUENCE, by simple framing (the requests here are DER we made). */
function splitSequence(der: Uint8Array): Uint8Array[] {
  const header = (at: number) => {
    const first = der[at + 1]!;
    const octets = first & 0x80 ? first & 0x7f : 0;
    let length = octets ? 0 : first;
    for (let i = 0; i < octets; i++) length = length * 256 + der[at + 2 + i]!;
    return { start: at + 2 + octets, end: at + 2 + octets + length };
  };
  const outer = header(0);
  const items: Uint8Array[] = [];
  for (let at = outer.start; at < outer.end; ) {
    const item = header(at);
    items.push(der.subarray(at, item.end));
    at = item.end;
  }
  return items;
}

const mutationAlphabet = [' ', '\t', '\r', '\n', '=', '-', ':', 'A', '/', '+', '\0', '\xe9', '-----BEGIN CERTIFICATE REQUEST-----\n', '\n-----END CERTIFICATE REQUEST-----\n', 'Proc-Type: 4\n'];

/** Seeded random edits of real requests: of the PEM text, of the DER, and of the signed info re-signed. */
async function mutations(bases: Base[], random: () => number, perBase: number): Promise<CorpusEntry[]> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const int = (below: number) => Math.floor(random() * below);
  const entries: CorpusEntry[] = [];
  for (const base of bases) {
    for (let n = 0; n < perBase; n++) {
      let text = pem(base.der);
      for (let edits = 1 + int(3); edits > 0; edits--) {
        const at = int(text.length + 1);
        switch (int(5)) {
          case 0: text = text.slice(0, at) + pick(mutationAlphabet) + text.slice(at); break;
          case 1: text = text.slice(0, at) + text.slice(at + 1 + int(3)); break;
          case 2: text = text.slice(0, at); break;
          case 3: { const lines = text.split('\n'); const i = int(lines.length); lines.splice(i, 0, lines[i] ?? ''); text = lines.join('\n'); break; }
          default: { const lines = text.split('\n'); const [i, j] = [int(lines.length), int(lines.length)]; [lines[i], lines[j]] = [lines[j]!, lines[i]!]; text = lines.join('\n'); }
        }
      }
      entries.push({ id: `pem-mutation-${base.id}-${n}`, request: latin1(text), autonode: 'either' });
    }
    for (let n = 0; n < perBase / 2; n++) {
      const der = Buffer.from(base.der);
      const at = int(der.length);
      der[at] = der[at]! ^ (1 << int(8));
      entries.push({ id: `der-bitflip-${base.id}-${n}`, request: latin1(pem(der)), autonode: 'either' });
    }
    const [info] = splitSequence(base.der);
    for (let n = 0; n < perBase / 2; n++) {
      const edited = Buffer.from(info!);
      const at = int(edited.length);
      const mutated = random() < 0.7 ? ((edited[at] = edited[at]! ^ (1 << int(8))), edited) : Buffer.concat([edited.subarray(0, at), edited.subarray(at + 1)]);
      entries.push({ id: `info-mutation-resigned-${base.id}-${n}`, request: latin1(pem(await signedRequest(base.key, mutated))), autonode: 'either' });
    }
  }
  return entries;
}

/** Every well-formed base, in every spelling a kubelet's library could produce. */
function canonicalSpellings(bases: Base[]): CorpusEntry[] {
  return bases.flatMap(({ id, der }) => [
    { id: `canonical-${id}`, request: latin1(pem(der)), autonode: 'accept' as const },
    { id: `canonical-crlf-${id}`, request: latin1(pem(der, { eol: '\r\n' })), autonode: 'accept' as const },
    { id: `canonical-no-final-newline-${id}`, request: latin1(pem(der, { finalEol: false })), autonode: 'accept' as const },
  ]);
}

export async function buildCorpus(options: { keys: CorpusKeys; seed: number; mutationsPerBase: number }): Promise<CorpusEntry[]> {
  const { keys } = options;
  const bases = await realRequests(keys);
  const built: Base[] = await Promise.all(
    keyKinds.map(async (kind) => ({ id: `builder-${kind}-serving`, key: keys[kind], der: await signedRequest(keys[kind], { subject: kubeletSubject(nodeName), attributes: withSans(...nodeSans()) }) })),
  );
  const all = [...bases, ...built];
  const entries = [...canonicalSpellings(all), ...(await attacks(keys)), ...(await mutations(all, mulberry32(options.seed), options.mutationsPerBase))];
  const ids = new Set(entries.map((e) => e.id));
  if (ids.size !== entries.length) throw new Error('corpus ids are not unique');
  return entries;
}


/** A CertificateSigningRequest as the API server returns it, around the given request bytes. */
export function csrObject(request: Uint8Array, spec: { name?: string; signerName?: string; username?: string; groups?: string[]; usages?: string[] } = {}): unknown {
  return {
    metadata: { name: spec.name ?? 'csr-under-test', creationTimestamp: '2026-05-01T10:01:00Z' },
    spec: {
      request: Buffer.from(request).toString('base64'),
      signerName: spec.signerName ?? 'kubernetes.io/kubelet-serving',
      username: spec.username ?? nodeUser(nodeName),
      groups: spec.groups ?? ['system:nodes', 'system:authenticated'],
      usages: spec.usages ?? ['digital signature', 'server auth'],
    },
  };
}
