import { type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { InvalidCsrError, csrState, parseCsr } from '../../../activities/kube/csr-parse';
import { createCsrPem, generateKubeletKey, type CsrSubject } from '../../../dev/simkubelet/pki';
import { bootstrapper as bootstrapperUser, nodeName } from './builders';
import {
  GeneralNames as GN,
  OID,
  Strings,
  attributes,
  cn,
  extension,
  extensionRequest,
  name,
  oid,
  org,
  pem,
  sanExtension,
  seq,
  set,
  signedRequest,
  tlv,
  tlvLongLength,
  type RequestParts,
  type SignOptions,
} from './csr-builder';
import { apiServerSans, csrObject, generateCorpusKeys, kubeletSubject, nodeSans, nodeUser, otherNodeName, withSans, type CorpusKeys } from './csr-corpus';

async function aCsrObject(subject: CsrSubject, overrides: Partial<V1CertificateSigningRequest['spec']> = {}): Promise<V1CertificateSigningRequest> {
  const pem = await createCsrPem(await generateKubeletKey(), subject);
  return {
    metadata: { name: 'csr-abc12', creationTimestamp: new Date('2026-05-01T10:01:00Z') },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: 'kubernetes.io/kubelet-serving',
      username: 'system:node:ip-10-0-1-5.ec2.internal',
      groups: ['system:nodes', 'system:authenticated'],
      usages: ['digital signature', 'server auth'],
      ...overrides,
    },
  };
}

describe('parseCsr', () => {
  it('reads subject and every kind of SAN from the PKCS#10 request, the rest from the object', async () => {
    const obj = await aCsrObject({
      commonName: 'system:node:ip-10-0-1-5.ec2.internal',
      organizations: ['system:nodes', 'extra'],
      dnsNames: ['ip-10-0-1-5.ec2.internal'],
      ipAddresses: ['10.0.1.5'],
      emailAddresses: ['a@example.com'],
      uris: ['spiffe://cluster/ns/x'],
    });
    expect(parseCsr(obj)).toEqual({
      name: 'csr-abc12',
      signerName: 'kubernetes.io/kubelet-serving',
      username: 'system:node:ip-10-0-1-5.ec2.internal',
      groups: ['system:nodes', 'system:authenticated'],
      usages: ['digital signature', 'server auth'],
      subject: { commonName: 'system:node:ip-10-0-1-5.ec2.internal', organizations: ['system:nodes', 'extra'] },
      dnsNames: ['ip-10-0-1-5.ec2.internal'],
      ipAddresses: ['10.0.1.5'],
      emailAddresses: ['a@example.com'],
      uris: ['spiffe://cluster/ns/x'],
      otherNames: [],
      createdAt: Date.parse('2026-05-01T10:01:00Z'),
    });
  });

  it('accepts a raw JSON object (timestamps as strings) and a request without SANs', async () => {
    const obj = await aCsrObject({ commonName: 'system:node:n', organizations: ['system:nodes'] });
    const raw: unknown = JSON.parse(JSON.stringify(obj));
    const parsed = parseCsr(raw);
    expect(parsed).toMatchObject({ dnsNames: [], ipAddresses: [], createdAt: Date.parse('2026-05-01T10:01:00Z') });
  });

  it('refuses a request that is not PKCS#10, and an object without a signer, with a typed error', async () => {
    const obj = await aCsrObject({ commonName: 'system:node:n', organizations: [] });
    expect(() => parseCsr({ ...obj, spec: { ...obj.spec, request: Buffer.from('not a csr').toString('base64') } })).toThrow(InvalidCsrError);
    expect(() => parseCsr({ ...obj, spec: { ...obj.spec, signerName: '' } })).toThrow(/csr-abc12 is malformed/);
  });

  it('reads the state from the conditions: Denied or Failed wins, Approved needs a certificate to be issued', () => {
    const withStatus = (status: V1CertificateSigningRequest['status']) => ({ metadata: {}, spec: { request: '', signerName: 'x' }, status });
    expect(csrState(withStatus(undefined))).toEqual({ phase: 'pending' });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True', reason: 'AutoNodeApproved', message: 'ok' }] }))).toEqual({ phase: 'approved', issued: false, reason: 'AutoNodeApproved', message: 'ok' });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' }))).toMatchObject({ phase: 'approved', issued: true });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: 'bad' }] }))).toEqual({ phase: 'failed', reason: 'SignerValidationFailure', message: 'bad' });
    expect(csrState(withStatus({ conditions: [{ type: 'Denied', status: 'True', reason: 'AutoNodeDenied', message: 'usages: …' }] }))).toMatchObject({ phase: 'denied' });
  });
});

describe('parseCsr: a request readers could see differently is refused, saying what is wrong', () => {
  let keys: CorpusKeys;
  beforeAll(async () => {
    keys = await generateCorpusKeys();
  }, 60_000);

  const sign = (k: CorpusKeys, parts: Partial<RequestParts> = {}, options: SignOptions = {}, signer: keyof CorpusKeys = 'p256') =>
    signedRequest(k[signer], { subject: kubeletSubject(nodeName), attributes: withSans(...nodeSans()), ...parts }, options);
  const asPem = async (der: Promise<Uint8Array> | Uint8Array) => Buffer.from(pem(await der), 'latin1');
  const benign = (k: CorpusKeys) => sign(k);
  const hostile = (k: CorpusKeys) => sign(k, { attributes: withSans(...apiServerSans()) }, {}, 'p256Other');
  const text = (value: string) => Buffer.from(value, 'latin1');
  /** A request whose base64 ends in padding after an 'A' (so its padding bits can be set). */
  async function padded(k: CorpusKeys): Promise<Uint8Array> {
    for (let pad = 1; ; pad++) {
      const der = await sign(k, { subject: kubeletSubject(nodeName, [org('x'.repeat(pad))]) });
      if (/A=+$/.test(Buffer.from(der).toString('base64'))) return der;
    }
  }

  type Row = [string, (k: CorpusKeys) => Promise<Uint8Array>, RegExp];

  async function refusal(build: (k: CorpusKeys) => Promise<Uint8Array>): Promise<string> {
    const request = await build(keys);
    try {
      parseCsr(csrObject(request));
    } catch (err) {
      if (err instanceof InvalidCsrError) return err.message;
      throw err;
    }
    throw new Error('parseCsr accepted the request');
  }

  // Ambiguities: Go (the API server and signer) reads these one way, other readers another.
  it.each<Row>([
    ['a second PEM block after the one the API server reads', async (k) => text(pem(await benign(k)) + pem(await hostile(k))), /a second PEM block after the PEM block the API server reads/],
    ['a block Go skips (indented BEGIN) before the one it signs', async (k) => text(` ${pem(await benign(k))}${pem(await hostile(k))}`), /another PEM block or BEGIN line before the PEM block/],
    ['text before the block', async (k) => text(`hello\n${pem(await benign(k))}`), /6 bytes: "hello\\n" before the PEM block/],
    ['text after the block', async (k) => text(`${pem(await benign(k))}junk`), /4 bytes: "junk" after the PEM block/],
    ['PEM headers', async (k) => text(pem(await benign(k)).replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\n\n')), /the PEM block has headers \("Proc-Type"\)/],
    ['blanks inside the base64 (Go strips them)', async (k) => text(pem(await benign(k)).replace(/\n([^\n]{64})\n/, '\n$1 \n')), /characters outside base64/],
    ['a blank line inside the base64', async (k) => text(pem(await benign(k)).replace(/(\n[^\n]+)\n/, '$1\n\n')), /blank line inside its base64/],
    ['base64 with non-zero padding bits (Go ignores them)', async (k) => text(pem(await padded(k)).replace(/A(=+)\n-----END/, 'B$1\n-----END')), /not canonical standard base64/],
    ['an extra element after the signature (Go skips it)', (k) => asPem(sign(k, {}, { extraOuter: [Buffer.from([2, 1, 1])] })), /CertificationRequest has 1 unexpected extra element/],
    ['an extra element in the signed info (Go skips it)', (k) => asPem(sign(k, { extraInfo: [withSans(GN.dns('kubernetes.default.svc'))] })), /certificationRequestInfo has 1 unexpected extra element/],
    ['version 1 (Go does not check)', (k) => asPem(sign(k, { version: Buffer.from([2, 1, 1]) })), /version is 0x01, not v1/],
    ['two extensionRequest attributes (Go merges them)', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([sanExtension(...nodeSans())]), extensionRequest([sanExtension(...apiServerSans())])) })), /2 attributes \(extensionRequest .*, extensionRequest .*\); Go merges every extensionRequest/],
    ['an extensionRequest with two values (Go reads the first)', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([sanExtension(...nodeSans())], [sanExtension(...apiServerSans())])) })), /extensionRequest attribute has 2 values; Go reads only the first/],
    ['two subjectAltName extensions', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([sanExtension(...nodeSans()), sanExtension(...apiServerSans())])) })), /extension subjectAltName \(2\.5\.29\.17\) more than once/],
    ['an extension other than subjectAltName', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([sanExtension(...nodeSans()), extension(OID.basicConstraints, seq(), true)])) })), /extension basicConstraints \(2\.5\.29\.19\); a kubelet requests only subjectAltName/],
    ['critical=FALSE spelled out', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([extension(OID.subjectAltName, seq(...nodeSans()), false)])) })), /spells out critical=FALSE, the default \(not DER\)/],
    ['a challengePassword attribute', (k) => asPem(sign(k, { attributes: attributes(seq(oid(OID.challengePassword), set(Strings.utf8('pw')))) })), /attribute challengePassword/],
    ['a CN as BMPString', (k) => asPem(sign(k, { subject: name([cn(nodeUser(nodeName), Strings.bmp)], [org('system:nodes')]) })), /subject CN 1 is a BMPString/],
    ['a CN as T61String', (k) => asPem(sign(k, { subject: name([cn(nodeUser(nodeName), Strings.t61)], [org('system:nodes')]) })), /subject CN 1 is a T61String/],
    ['a CN as UniversalString (Go drops it)', (k) => asPem(sign(k, { subject: name([cn(nodeUser(nodeName), Strings.universal)], [org('system:nodes')]) })), /subject CN 1 is a UniversalString, which Go ignores/],
    ['a CN with non-ASCII', (k) => asPem(sign(k, { subject: name([cn(nodeUser('ip\u201010-0-1-5.ec2.internal'), Strings.utf8)], [org('system:nodes')]) })), /subject CN 1 has NUL, control or non-ASCII characters/],
    ['a CN with an embedded NUL', (k) => asPem(sign(k, { subject: name([cn(`${nodeUser(nodeName)}\0x`, Strings.utf8)], [org('system:nodes')]) })), /subject CN 1 has NUL/],
    ['an O with non-ASCII', (k) => asPem(sign(k, { subject: name([cn(nodeUser(nodeName))], [org('system:nodés', Strings.utf8)]) })), /subject O 1 has NUL, control or non-ASCII/],
    ['a subject attribute the policy does not read (OU)', (k) => asPem(sign(k, { subject: kubeletSubject(nodeName, [[OID.ou, Strings.printable('system:masters')]]) })), /attribute OU \(2\.5\.4\.11\); a kubelet's subject has only CN and O/],
    ['an empty RDN (Go skips it)', (k) => asPem(sign(k, { subject: seq(set(), set(seq(oid(OID.cn), Strings.printable(nodeUser(nodeName))))) })), /subject RDN 1 is empty/],
    ['a DNS SAN with an embedded NUL', (k) => asPem(sign(k, { attributes: withSans(GN.dns(`${nodeName}\0.evil.example`)) })), /SAN 1 \(DNS\) has characters outside printable ASCII/],
    ['an IPv4-mapped IPv6 SAN (Go prints it as IPv4)', (k) => asPem(sign(k, { attributes: withSans(GN.ip('::ffff:a00:105')) })), /SAN 1 is an IPv4-mapped IPv6 address/],
    ['a SAN with a constructed DNS tag (Go skips it)', (k) => asPem(sign(k, { attributes: withSans(GN.dns(nodeName), tlv(0xa2, Strings.ia5('kubernetes.default.svc'))) })), /SAN 2 has tag 0xa2, which is not a GeneralName/],
    ['bytes after the SANs inside the extension (Go ignores them)', (k) => asPem(sign(k, { attributes: attributes(extensionRequest([extension(OID.subjectAltName, Buffer.concat([seq(...nodeSans()), GN.dns('kubernetes.default.svc')]))])) })), /subjectAltName extension is followed by \d+ trailing bytes/],
    ['a SHA-1 signature (Go allows it for CSRs)', (k) => asPem(sign(k, {}, { hash: 'SHA-1' })), /signature algorithm is 1\.2\.840\.10045\.4\.1/],
    ['a P-521 key', (k) => asPem(sign(k, {}, {}, 'p521')), /not on a named curve P-256 or P-384/],
    ['a 1024-bit RSA key', (k) => asPem(sign(k, {}, {}, 'rsa1024')), /RSA key has 1024 bits/],
  ])('%s', async (_what, build, message) => {
    const refused = await refusal(build);
    expect(refused).toMatch(message);
    expect(refused).toMatch(/^CertificateSigningRequest csr-under-test: spec\.request refused: .*a kubelet never sends that/);
  });

  // Broken requests: the API server or the signer refuses them too.
  it.each<Row>([
    ['no PEM block at all', async (k) => benign(k), /spec\.request holds no PEM block the API server can read/],
    ['a block of type NEW CERTIFICATE REQUEST', async (k) => text(pem(await benign(k), { type: 'NEW CERTIFICATE REQUEST' })), /is a "NEW CERTIFICATE REQUEST", not a CERTIFICATE REQUEST/],
    ['trailing bytes after the DER', (k) => asPem((async () => Buffer.concat([await benign(k), Buffer.from([0])]))()), /CertificationRequest is followed by 1 trailing bytes/],
    ['a long-form length that fits the short form', (k) => asPem(sign(k, { subject: seq(set(seq(oid(OID.cn), tlvLongLength(0x13, text(nodeUser(nodeName)), 1)))) })), /long-form length 36 that fits the short form/],
    ['an indefinite length', (k) => asPem(sign(k, { subject: Buffer.concat([Buffer.from([0x30, 0x80]), kubeletSubject(nodeName).subarray(2), Buffer.from([0, 0])]) })), /indefinite length/],
    ['a signature byte flipped', (k) => asPem(sign(k, {}, { alterSignature: (s) => Buffer.concat([s.subarray(0, 10), Buffer.from([s[10]! ^ 1]), s.subarray(11)]) })), /ecdsa-with-SHA256 signature does not verify with its own ECDSA-P256 public key/],
    ['signed by one key, carrying another', (k) => asPem(sign(k, { spki: k.p256Other.spki })), /signature does not verify/],
    ['an Ed25519 signature that does not verify', (k) => asPem(sign(k, {}, { alterSignature: (s) => Buffer.concat([Buffer.from([s[0]! ^ 1]), s.subarray(1)]) }, 'ed25519')), /Ed25519 signature does not verify with its own Ed25519 public key/],
    ['an RSA signature that does not verify', (k) => asPem(sign(k, {}, { alterSignature: (s) => Buffer.concat([s.subarray(0, 100), Buffer.from([s[100]! ^ 1]), s.subarray(101)]) }, 'rsa2048')), /sha256WithRSAEncryption signature does not verify with its own RSA public key/],
  ])('%s', async (_what, build, message) => {
    expect(await refusal(build)).toMatch(message);
  });

  it.each([
    ['with a line break', (b64: string) => `${b64.slice(0, 76)}\n${b64.slice(76)}`],
    ['in the URL-safe alphabet', (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') + (b64.includes('+') || b64.includes('/') ? '' : '-')],
    ['without padding', (b64: string) => (b64.endsWith('=') ? b64.replace(/=+$/, '') : `${b64}A`)],
    ['with junk Node would skip', (b64: string) => `${b64.slice(0, 40)}*!${b64.slice(40)}`],
    ['with surrounding spaces', (b64: string) => ` ${b64} `],
  ])('refuses spec.request base64 %s: the API server writes bytes in canonical padded base64', async (_what, spoil) => {
    const obj = csrObject(Buffer.from(pem(await benign(keys)), 'latin1'));
    const spec = (obj as { spec: { request: string } }).spec;
    expect(() => parseCsr({ ...(obj as object), spec: { ...spec, request: spoil(spec.request) } })).toThrow(/spec\.request refused: it is not canonical standard base64/);
  });

  it('accepts a request as Go writes it, a kubelet key of each type, with SANs in both IP families', async () => {
    for (const signer of ['p256', 'p384', 'rsa2048', 'ed25519'] as const) {
      const request = await asPem(sign(keys, { attributes: withSans(GN.dns(nodeName), GN.ip('10.0.1.5'), GN.ip('fd00:ec2::5')) }, {}, signer));
      expect(parseCsr(csrObject(request))).toMatchObject({ subject: { commonName: nodeUser(nodeName), organizations: ['system:nodes'] }, dnsNames: [nodeName], ipAddresses: ['10.0.1.5', 'fd00:ec2::5'] });
    }
  });

  it('joins several CNs, so that none of them (not even the last, which the signer certifies) matches a node', async () => {
    const request = await asPem(sign(keys, { subject: name([cn(nodeUser(nodeName))], [cn(nodeUser(otherNodeName))], [org('system:nodes')]) }));
    expect(parseCsr(csrObject(request)).subject.commonName).toBe(`${nodeUser(nodeName)},${nodeUser(otherNodeName)}`);
  });

  it('names, on a refused request, every node any reading of it could be about, and its signer', async () => {
    const other = await signedRequest(keys.p256Other, { subject: kubeletSubject(otherNodeName) });
    const twoBlocks = text(pem(await benign(keys)) + pem(other));
    const err = (() => {
      try {
        return parseCsr(csrObject(twoBlocks, { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', username: bootstrapperUser }));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidCsrError);
    expect(err).toMatchObject({ signerName: 'kubernetes.io/kube-apiserver-client-kubelet', namedNodes: [nodeName, otherNodeName].sort() });

    // BEGIN, one request's base64, BEGIN, another's, END: Go reads the second.
    const nested = text(`${pem(other).split('\n').slice(0, -2).join('\n')}\n${pem(await benign(keys))}`);
    expect(() => parseCsr(csrObject(nested))).toThrow(expect.objectContaining({ namedNodes: [nodeName, otherNodeName].sort() }));

    const bmp = await asPem(sign(keys, { subject: name([cn(nodeUser(otherNodeName), Strings.bmp)]) }));
    expect(() => parseCsr(csrObject(bmp, { username: 'alice' }))).toThrow(expect.objectContaining({ namedNodes: [otherNodeName] }));
    expect(() => parseCsr({ metadata: { name: 'x' }, spec: { request: 'not base64', username: nodeUser(nodeName) } })).toThrow(expect.objectContaining({ csrName: 'x', signerName: '', namedNodes: [nodeName] }));
  });
});
