/**
 * Differential test of autonode's CSR reading against Go's (test/go/csrparse: exactly the
 * API server's pem.Decode + x509.ParseCertificateRequest and the signer's CheckSignature).
 * The certificate is built from Go's reading, so the contract is one-sided:
 *  - whatever autonode accepts, Go signs, with the same CN(s), O list, DNS/IP/email/URI
 *    SANs and public key: what autonode judged is what gets certified;
 *  - whatever Go refuses (or whose signature fails), autonode refuses;
 *  - autonode may refuse what Go signs (an ambiguity), but never a well-formed request.
 * The corpus (csr-corpus.ts) is real requests, named attacks, and seeded mutations.
 */
import { createHash } from 'node:crypto';
import { InvalidCsrError, decodeCertificateRequest, parseCsr, type CertificateRequest } from '../../../activities/kube/csr-parse';
import { type ParsedCsr } from '../../../core/csr/csr';
import { buildCorpus, csrObject, generateCorpusKeys, type CorpusEntry } from './csr-corpus';
import { goKubeletRequests, goRead, goSigns, type GoVerdict } from './go-csrparse';

const SEED = 20260501;

interface Reading {
  entry: CorpusEntry;
  go: GoVerdict;
  /** autonode's reading through the real entry point, or why it refused */
  autonode: { parsed: ParsedCsr; request: CertificateRequest } | { refused: string };
}

function readWithAutonode(request: Uint8Array): Reading['autonode'] {
  try {
    return { parsed: parseCsr(csrObject(request)), request: decodeCertificateRequest(request) };
  } catch (err) {
    if (err instanceof InvalidCsrError) return { refused: err.message };
    throw err;
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every way autonode's acceptance of one entry departs from Go's reading; [] when none. */
function disagreements({ go, autonode }: Reading): string[] {
  if ('refused' in autonode) return [];
  if (!go.accepted) return [`Go refuses it (${go.error}) but autonode accepts it`];
  if (!go.signatureValid) return [`Go finds the signature bad (${go.signatureError}) but autonode accepts it`];
  const { parsed, request } = autonode;
  const same = (what: string, ours: unknown, theirs: unknown) => (JSON.stringify(ours) === JSON.stringify(theirs) ? [] : [`${what}: autonode ${JSON.stringify(ours)}, Go ${JSON.stringify(theirs)}`]);
  return [
    ...same('CNs', request.commonNames, go.commonNames),
    // One CN: the one Go certifies. Several: joined, so that no single one is ever picked.
    ...(request.commonNames.length === 1 ? same('CN', parsed.subject.commonName, go.commonName) : []),
    ...(request.commonNames.length > 1 && parsed.subject.commonName === go.commonName ? [`several CNs, but autonode picked Go's ${go.commonName}`] : []),
    ...same('O', parsed.subject.organizations, go.organizations),
    ...same('DNS SANs', parsed.dnsNames, go.dnsNames),
    ...same('IP SANs', parsed.ipAddresses, go.ipAddresses),
    ...same('email SANs', parsed.emailAddresses, go.emailAddresses),
    ...same('URI SANs', parsed.uris, go.uris),
    ...same('public key (SPKI sha256)', sha256(request.subjectPublicKeyInfo), go.spkiSha256),
  ];
}

const report = (readings: Reading[], problem: (r: Reading) => string[]) =>
  readings.flatMap((r) => problem(r).map((p) => `${r.entry.id}${r.entry.attack ? ` (${r.entry.attack})` : ''}: ${p}`));

describe('CSR reading: autonode against Go (API server and signer)', () => {
  let readings: Reading[];

  beforeAll(async () => {
    const corpus: CorpusEntry[] = [
      ...(await buildCorpus({ keys: await generateCorpusKeys(), seed: SEED, mutationsPerBase: 60 })),
      ...goKubeletRequests().map(({ id, request }) => ({ id, request, autonode: 'accept' as const, attack: 'none: made by Go exactly as a kubelet makes it' })),
    ];
    const verdicts = goRead(corpus);
    readings = corpus.map((entry) => ({ entry, go: verdicts.get(entry.id)!, autonode: readWithAutonode(entry.request) }));
  }, 300_000);

  it('is a corpus of thousands, with requests Go signs, Go refuses, and Go signs but autonode refuses', () => {
    const count = (f: (r: Reading) => boolean) => readings.filter(f).length;
    expect(readings.length).toBeGreaterThan(3000);
    expect(count((r) => goSigns(r.go) && !('refused' in r.autonode))).toBeGreaterThan(200);
    expect(count((r) => !r.go.accepted)).toBeGreaterThan(1000);
    expect(count((r) => r.go.accepted && !r.go.signatureValid)).toBeGreaterThan(100);
    expect(count((r) => goSigns(r.go) && 'refused' in r.autonode)).toBeGreaterThan(20);
  });

  it('accepts only requests Go signs, and reads each exactly as Go does (CNs, O, SANs, key)', () => {
    expect(report(readings, disagreements)).toEqual([]);
  });

  it('refuses every request the API server refuses or whose signature the signer rejects', () => {
    expect(report(readings, (r) => (!goSigns(r.go) && !('refused' in r.autonode) ? ['accepted by autonode'] : []))).toEqual([]);
  });

  it('accepts every well-formed request: each key type and PEM spelling, and those Go makes as a kubelet does', () => {
    const wellFormed = readings.filter((r) => r.entry.autonode === 'accept');
    expect(wellFormed.length).toBeGreaterThan(100);
    expect(wellFormed.filter((r) => r.entry.id.startsWith('go-kubelet-'))).toHaveLength(8);
    expect(report(wellFormed, (r) => ('refused' in r.autonode ? [`refused: ${r.autonode.refused}`] : []))).toEqual([]);
  });

  it('refuses every hand-crafted attack, naming what is wrong', () => {
    const attacks = readings.filter((r) => r.entry.autonode === 'deny');
    expect(attacks.length).toBeGreaterThan(80);
    expect(report(attacks, (r) => ('refused' in r.autonode ? [] : ['accepted']))).toEqual([]);
    expect(report(attacks, (r) => ('refused' in r.autonode && (!r.autonode.refused.includes('spec.request') || r.autonode.refused.length < 80) ? [`unhelpful message: ${r.autonode.refused}`] : []))).toEqual([]);
  });

  it('refuses the two-block requests Go resolves to the hostile block, which the old regex decoder read as the benign one', () => {
    // The old decoder (@peculiar/x509's PEM regex) took the benign block in each of these.
    const hostileSigned = readings.filter((r) => ['two-blocks-benign-first-indented', 'two-blocks-benign-first-end-line-junk', 'two-blocks-hostile-first-space-in-body'].includes(r.entry.id));
    expect(hostileSigned).toHaveLength(3);
    for (const { entry, go, autonode } of hostileSigned) {
      expect({ id: entry.id, goSigns: goSigns(go), goDnsNames: go.dnsNames }).toEqual({ id: entry.id, goSigns: true, goDnsNames: expect.arrayContaining(['kubernetes.default.svc']) });
      expect(autonode).toEqual({ refused: expect.stringMatching(/PEM block/) });
    }
  });
});
