/**
 * A strict DER reader: the subset of ASN.1 encodings that have exactly one reading. Go's
 * encoding/asn1 (what the API server and signer parse CSRs with) is strict about lengths
 * but quietly skips extra trailing elements of a SEQUENCE; BER readers such as asn1js also
 * take long-form and indefinite lengths. Accepting only what every reader reads one way,
 * and denying the rest, is what lets autonode judge the fields the signer will use.
 *
 * Rejected alternative: parse with a library, then re-encode and compare. That proves the
 * encoding canonical only as far as the library's model reaches (it drops what it does not
 * model), and costs a second encoder to trust.
 */
import { rejectMalformed, rejectUnlikeKubelet } from './csr-reject';

export const Tags = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  t61String: 0x14,
  ia5String: 0x16,
  universalString: 0x1c,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
  /** [0] IMPLICIT, constructed: a CSR's attributes */
  context0: 0xa0,
} as const;

export interface Tlv {
  /** the identifier octet (tag class, constructed bit, number < 31) */
  tag: number;
  /** the whole encoding, identifier and length included */
  raw: Uint8Array;
  content: Uint8Array;
}

const MAX_LENGTH_OCTETS = 3; // 16 MiB: far beyond any CSR the API server stores

/** One TLV at `offset`; DER only (definite, minimal lengths; low tag numbers). */
export function readTlv(bytes: Uint8Array, offset: number, what: string): { tlv: Tlv; next: number } {
  const start = offset;
  const need = (n: number) => {
    if (offset + n > bytes.length) rejectMalformed(`${what} is truncated (DER ends at byte ${bytes.length}, needs ${offset + n})`);
  };
  need(2);
  const tag = bytes[offset++]!;
  if ((tag & 0x1f) === 0x1f) rejectUnlikeKubelet(`${what} uses a high tag number`);
  const first = bytes[offset++]!;
  let length = first;
  if (first === 0x80) rejectUnlikeKubelet(`${what} has an indefinite length (BER, not DER)`);
  if (first > 0x80) {
    const octets = first & 0x7f;
    if (octets > MAX_LENGTH_OCTETS) rejectMalformed(`${what} claims a length of ${octets} octets`);
    need(octets);
    if (bytes[offset] === 0) rejectUnlikeKubelet(`${what} has a length with a leading zero octet (BER, not DER)`);
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[offset++]!;
    if (length < 0x80) rejectUnlikeKubelet(`${what} has a long-form length ${length} that fits the short form (BER, not DER)`);
  }
  need(length);
  return { tlv: { tag, raw: bytes.subarray(start, offset + length), content: bytes.subarray(offset, offset + length) }, next: offset + length };
}

/** `bytes` is exactly one TLV with the given tag: nothing before or after it. */
export function readOne(bytes: Uint8Array, tag: number, what: string): Tlv {
  const { tlv, next } = readTlv(bytes, 0, what);
  if (tlv.tag !== tag) rejectMalformed(`${what} has tag 0x${hex(tlv.tag)}, expected 0x${hex(tag)}`);
  if (next !== bytes.length) rejectUnlikeKubelet(`${what} is followed by ${bytes.length - next} trailing bytes`);
  return tlv;
}

/** The elements of a constructed TLV, which must fill its content exactly. */
export function children(tlv: Tlv, what: string): Tlv[] {
  if ((tlv.tag & 0x20) === 0) rejectMalformed(`${what} is primitive, expected a constructed value`);
  const items: Tlv[] = [];
  for (let offset = 0; offset < tlv.content.length; ) {
    const { tlv: item, next } = readTlv(tlv.content, offset, `${what} element ${items.length + 1}`);
    items.push(item);
    offset = next;
  }
  return items;
}

/**
 * The elements of a SEQUENCE with exactly the tags given (undefined marks an optional
 * one, matched by tag). Go skips extra trailing elements of a SEQUENCE; we refuse them.
 */
export function sequenceOf(tlv: Tlv, what: string, shape: ReadonlyArray<{ tag: number; optional?: boolean; name: string }>): Array<Tlv | undefined> {
  if (tlv.tag !== Tags.sequence) rejectMalformed(`${what} is not a SEQUENCE (tag 0x${hex(tlv.tag)})`);
  const items = children(tlv, what);
  const out: Array<Tlv | undefined> = [];
  let i = 0;
  for (const field of shape) {
    const item = items[i];
    if (item !== undefined && item.tag === field.tag) {
      out.push(item);
      i++;
    } else if (field.optional) {
      out.push(undefined);
    } else {
      rejectMalformed(`${what} lacks its ${field.name} (${item === undefined ? 'too few elements' : `found tag 0x${hex(item.tag)}`})`);
    }
  }
  if (i !== items.length) rejectUnlikeKubelet(`${what} has ${items.length - i} unexpected extra element(s) after its ${shape.map((f) => f.name).join(', ')}`);
  return out;
}

/** Dotted form of an OBJECT IDENTIFIER, refusing non-minimal subidentifiers. */
export function readOid(tlv: Tlv, what: string): string {
  if (tlv.tag !== Tags.oid) rejectMalformed(`${what} is not an OBJECT IDENTIFIER (tag 0x${hex(tlv.tag)})`);
  const bytes = tlv.content;
  if (bytes.length === 0) rejectMalformed(`${what} is an empty OBJECT IDENTIFIER`);
  const arcs: number[] = [];
  let value = 0;
  let fresh = true;
  for (const byte of bytes) {
    if (fresh && byte === 0x80) rejectUnlikeKubelet(`${what} has a subidentifier with a leading 0x80 (not DER)`);
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) rejectMalformed(`${what} has a subidentifier too large`);
    fresh = (byte & 0x80) === 0;
    if (fresh) {
      arcs.push(value);
      value = 0;
    }
  }
  if (!fresh) rejectMalformed(`${what} ends inside a subidentifier`);
  const first = arcs[0]!;
  const head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80];
  return [...head, ...arcs.slice(1)].join('.');
}

/** A non-negative INTEGER in minimal two's complement; returns its magnitude without the sign octet. */
export function readUnsignedInteger(tlv: Tlv, what: string): Uint8Array {
  if (tlv.tag !== Tags.integer) rejectMalformed(`${what} is not an INTEGER (tag 0x${hex(tlv.tag)})`);
  const bytes = tlv.content;
  if (bytes.length === 0) rejectMalformed(`${what} is an empty INTEGER`);
  if (bytes[0]! >= 0x80) rejectMalformed(`${what} is negative`);
  if (bytes.length > 1 && bytes[0] === 0 && bytes[1]! < 0x80) rejectUnlikeKubelet(`${what} is an INTEGER with a superfluous leading zero (not DER)`);
  return bytes[0] === 0 && bytes.length > 1 ? bytes.subarray(1) : bytes;
}

/** The bits of a BIT STRING that must be whole octets (keys, signatures). */
export function readOctetAlignedBits(tlv: Tlv, what: string): Uint8Array {
  if (tlv.tag !== Tags.bitString) rejectMalformed(`${what} is not a BIT STRING (tag 0x${hex(tlv.tag)})`);
  if (tlv.content.length === 0) rejectMalformed(`${what} is an empty BIT STRING`);
  if (tlv.content[0] !== 0) rejectUnlikeKubelet(`${what} has ${tlv.content[0]} unused bits; readers right-align them differently`);
  return tlv.content.subarray(1);
}

export function hex(value: number | Uint8Array): string {
  return typeof value === 'number' ? value.toString(16).padStart(2, '0') : Buffer.from(value).toString('hex');
}
