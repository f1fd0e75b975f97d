/**
 * A PKCS#10 CertificationRequest (RFC 2986) → the fields the kubelet signers put into the
 * certificate, read strictly (der.ts). The signer copies Go's reading: Subject re-marshalled
 * from Go's fields (CommonName = the LAST CN it saw, every O), and SANs from the LAST
 * subjectAltName extension of ANY extensionRequest attribute. So every place where Go and
 * another reader could differ is refused here instead of resolved: several attributes,
 * extensions or SAN extensions, string types other readers decode differently, characters
 * outside printable ASCII. Several CNs are all returned: the caller joins them so they
 * match no node (never picking one).
 */
import { rejectMalformed, rejectUnlikeKubelet } from './csr-reject';
import { Tags, children, hex, readOid, readOctetAlignedBits, readOne, sequenceOf, type Tlv } from './der';

export const Oids = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
} as const;

/** Names for OIDs a message may show; anything else is shown dotted. */
const oidNames: Record<string, string> = {
  '2.5.4.6': 'C', '2.5.4.7': 'L', '2.5.4.8': 'ST', '2.5.4.11': 'OU', '2.5.4.5': 'serialNumber',
  '1.2.840.113549.1.9.1': 'emailAddress', '1.2.840.113549.1.9.7': 'challengePassword',
  '2.5.29.15': 'keyUsage', '2.5.29.19': 'basicConstraints', '2.5.29.37': 'extKeyUsage',
  [Oids.commonName]: 'CN', [Oids.organization]: 'O', [Oids.extensionRequest]: 'extensionRequest', [Oids.subjectAltName]: 'subjectAltName',
};

export function oidName(oid: string): string {
  const name = oidNames[oid];
  return name === undefined ? oid : `${name} (${oid})`;
}

export interface CsrContents {
  commonNames: string[];
  organizations: string[];
  dnsNames: string[];
  /** as Go's net.IP.String() prints them */
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** SANs Go ignores (otherName, directoryName, …), described; a kubelet sends none */
  otherNames: string[];
  /** the encoded SubjectPublicKeyInfo, verbatim */
  subjectPublicKeyInfo: Tlv;
  /** the encoded CertificationRequestInfo: what the signature covers */
  signedInfo: Uint8Array;
  signatureAlgorithm: Tlv;
  signature: Uint8Array;
}

/** Reads a DER CertificationRequest; RequestRejectedError for anything not strictly one reading. */
export function readCsrDer(der: Uint8Array): CsrContents {
  const request = readOne(der, Tags.sequence, 'the CertificationRequest');
  const [info, signatureAlgorithm, signatureBits] = sequenceOf(request, 'the CertificationRequest', [
    { tag: Tags.sequence, name: 'certificationRequestInfo' },
    { tag: Tags.sequence, name: 'signatureAlgorithm' },
    { tag: Tags.bitString, name: 'signature' },
  ]) as [Tlv, Tlv, Tlv];
  const [version, subject, spki, attributes] = sequenceOf(info, 'the certificationRequestInfo', [
    { tag: Tags.integer, name: 'version' },
    { tag: Tags.sequence, name: 'subject' },
    { tag: Tags.sequence, name: 'subjectPKInfo' },
    { tag: Tags.context0, name: 'attributes' },
  ]) as [Tlv, Tlv, Tlv, Tlv];
  if (version.content.length !== 1 || version.content[0] !== 0) rejectUnlikeKubelet(`the request's version is 0x${hex(version.content)}, not v1 (0)`);
  return {
    ...readSubject(subject),
    ...readSubjectAltNames(requestedExtensions(attributes)),
    subjectPublicKeyInfo: spki,
    signedInfo: info.raw,
    signatureAlgorithm,
    signature: readOctetAlignedBits(signatureBits, 'the signature'),
  };
}

function readSubject(subject: Tlv): Pick<CsrContents, 'commonNames' | 'organizations'> {
  const commonNames: string[] = [];
  const organizations: string[] = [];
  for (const [r, rdn] of children(subject, 'the subject').entries()) {
    const what = `subject RDN ${r + 1}`;
    if (rdn.tag !== Tags.set) rejectMalformed(`${what} is not a SET`);
    const attributes = children(rdn, what);
    if (attributes.length === 0) rejectUnlikeKubelet(`${what} is empty`);
    for (const attribute of attributes) {
      const parts = attribute.tag === Tags.sequence ? children(attribute, what) : [];
      const [type, value] = parts;
      if (parts.length !== 2 || type?.tag !== Tags.oid || value === undefined) rejectMalformed(`${what} has an attribute that is not a SEQUENCE { type, value }`);
      const oid = readOid(type, `${what} type`);
      if (oid === Oids.commonName) commonNames.push(readSubjectString(value, `subject CN ${commonNames.length + 1}`));
      else if (oid === Oids.organization) organizations.push(readSubjectString(value, `subject O ${organizations.length + 1}`));
      else rejectUnlikeKubelet(`the subject has an attribute ${oidName(oid)}; a kubelet's subject has only CN and O`);
    }
  }
  return { commonNames, organizations };
}

const printableStringChars = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
const printableAscii = /^[\x20-\x7e]*$/;

/**
 * PrintableString, UTF8String and IA5String holding printable ASCII read the same in every
 * decoder. BMPString, T61String and UniversalString do not (Go decodes BMP as UTF-16, T61
 * as raw bytes, and ignores UniversalString for CommonName), nor does anything with NUL,
 * control characters or non-ASCII: refused.
 */
function readSubjectString(value: Tlv, what: string): string {
  const text = Buffer.from(value.content).toString('latin1');
  switch (value.tag) {
    case Tags.printableString:
      // Go also takes '*' and '&' here; other decoders refuse them.
      if (!printableStringChars.test(text)) rejectUnlikeKubelet(`${what} is a PrintableString with characters outside the PrintableString set (${JSON.stringify(text)})`);
      return text;
    case Tags.utf8String:
    case Tags.ia5String:
      if (!printableAscii.test(text)) rejectUnlikeKubelet(`${what} has NUL, control or non-ASCII characters (${JSON.stringify(Buffer.from(value.content).toString('utf8'))})`);
      return text;
    case Tags.bmpString: return rejectUnlikeKubelet(`${what} is a BMPString, which decoders read differently`);
    case Tags.t61String: return rejectUnlikeKubelet(`${what} is a T61String, which decoders read differently`);
    case Tags.universalString: return rejectUnlikeKubelet(`${what} is a UniversalString, which Go ignores and other decoders read`);
    default: return rejectUnlikeKubelet(`${what} has ASN.1 type 0x${hex(value.tag)}, not a PrintableString, UTF8String or IA5String`);
  }
}

/**
 * The extensions of the one extensionRequest attribute. Go collects extensions from every
 * extensionRequest attribute and ignores other attributes; @peculiar/x509 (autonode's
 * decoder before) reads only the first. A kubelet sends at most one, so more are refused.
 */
function requestedExtensions(attributes: Tlv): Map<string, Tlv> {
  const items = children(attributes, 'the attributes');
  const extensions = new Map<string, Tlv>();
  if (items.length === 0) return extensions;
  const attributeShape = [{ tag: Tags.oid, name: 'type' }, { tag: Tags.set, name: 'values' }];
  const parsed = items.map((item, i) => {
    const [type, values] = sequenceOf(item, `attribute ${i + 1}`, attributeShape) as [Tlv, Tlv];
    return { oid: readOid(type, `attribute ${i + 1} type`), values };
  });
  if (parsed.length > 1) rejectUnlikeKubelet(`the request has ${parsed.length} attributes (${parsed.map((a) => oidName(a.oid)).join(', ')}); Go merges every extensionRequest and ignores the rest`);
  const [attribute] = parsed as [(typeof parsed)[number]];
  if (attribute.oid !== Oids.extensionRequest) rejectUnlikeKubelet(`the request has an attribute ${oidName(attribute.oid)}`);
  const values = children(attribute.values, 'the extensionRequest values');
  if (values.length !== 1) rejectUnlikeKubelet(`the extensionRequest attribute has ${values.length} values; Go reads only the first`);
  const list = values[0]!;
  if (list.tag !== Tags.sequence) rejectMalformed('the extensionRequest value is not a SEQUENCE of extensions');
  for (const [i, extension] of children(list, 'the requested extensions').entries()) {
    const what = `requested extension ${i + 1}`;
    const [id, critical, value] = sequenceOf(extension, what, [
      { tag: Tags.oid, name: 'extnID' },
      { tag: Tags.boolean, optional: true, name: 'critical' },
      { tag: Tags.octetString, name: 'extnValue' },
    ]) as [Tlv, Tlv | undefined, Tlv];
    const oid = readOid(id, `${what} extnID`);
    if (critical !== undefined && (critical.content.length !== 1 || critical.content[0] !== 0xff)) {
      rejectUnlikeKubelet(`${what} (${oidName(oid)}) spells out critical=${critical.content[0] === 0 ? 'FALSE, the default (not DER)' : 'with a non-DER boolean'}`);
    }
    if (extensions.has(oid)) rejectUnlikeKubelet(`the request asks for extension ${oidName(oid)} more than once; signers keep the last, readers differ`);
    if (oid !== Oids.subjectAltName) rejectUnlikeKubelet(`the request asks for extension ${oidName(oid)}; a kubelet requests only subjectAltName`);
    extensions.set(oid, value);
  }
  return extensions;
}

type Sans = Pick<CsrContents, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris' | 'otherNames'>;

/** GeneralName kinds Go skips: the certificate does not carry them, the policy denies them. */
const ignoredGeneralNames: Record<number, string> = { 0xa0: 'otherName', 0xa3: 'x400Address', 0xa4: 'directoryName', 0xa5: 'ediPartyName', 0x88: 'registeredID' };

// No '%' (percent-decoding), no '[', ']' (IPv6 hosts), lower-case scheme: Go re-prints a
// parsed URI, and this is the subset it re-prints unchanged.
const plainUri = /^[a-z][a-z0-9+.-]*:[A-Za-z0-9\-._~/?#@!$&'()*+,;=:]+$/;
const sanString = /^[\x21-\x7e]+$/;

function readSubjectAltNames(extensions: Map<string, Tlv>): Sans {
  const sans: Sans = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [], otherNames: [] };
  const extension = extensions.get(Oids.subjectAltName);
  if (extension === undefined) return sans;
  const names = children(readOne(extension.content, Tags.sequence, 'the subjectAltName extension'), 'the subjectAltName extension');
  if (names.length === 0) rejectUnlikeKubelet('the subjectAltName extension is empty');
  for (const [i, name] of names.entries()) {
    const what = `SAN ${i + 1}`;
    const text = Buffer.from(name.content).toString('latin1');
    const checked = (kind: string, pattern: RegExp) => (pattern.test(text) ? text : rejectUnlikeKubelet(`${what} (${kind}) has characters outside printable ASCII or is empty (${JSON.stringify(Buffer.from(name.content).toString('utf8'))})`));
    switch (name.tag) {
      case 0x81: sans.emailAddresses.push(checked('email', sanString)); break;
      case 0x82: sans.dnsNames.push(checked('DNS', sanString)); break;
      case 0x86: sans.uris.push(checked('URI', plainUri)); break;
      case 0x87: sans.ipAddresses.push(formatIp(name.content, what)); break;
      default: {
        const kind = ignoredGeneralNames[name.tag];
        if (kind === undefined) rejectUnlikeKubelet(`${what} has tag 0x${hex(name.tag)}, which is not a GeneralName`);
        sans.otherNames.push(`${kind} ${hex(name.content)}`);
      }
    }
  }
  return sans;
}

/** Go's net.IP.String(): dotted IPv4; IPv6 per RFC 5952 (first longest zero run as ::). */
function formatIp(bytes: Uint8Array, what: string): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) rejectMalformed(`${what} is an IP address of ${bytes.length} bytes`);
  // ::ffff:a.b.c.d prints as a.b.c.d in Go and as IPv6 elsewhere: one address, two spellings.
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) rejectUnlikeKubelet(`${what} is an IPv4-mapped IPv6 address`);
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  let zeroStart = -1;
  let zeroLength = 1; // a run must be at least 2 groups
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > zeroLength) [zeroStart, zeroLength] = [i, j - i];
  }
  if (zeroStart < 0) return groups.map((g) => g.toString(16)).join(':');
  const part = (from: number, to: number) => groups.slice(from, to).map((g) => g.toString(16)).join(':');
  return `${part(0, zeroStart)}::${part(zeroStart + zeroLength, 8)}`;
}
