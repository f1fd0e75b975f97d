/**
 * The nodes a CSR autonode refuses to read might still be about. A refused request is
 * exactly one that readers can see differently, so this reads it every way it cheaply can
 * — the requester, and every CN attribute, in any string type, found anywhere in the raw
 * bytes or in any PEM-looking block decoded laxly — and returns the union. Over-reporting
 * only routes a bad CSR to one more node's review, which denies it; under-reporting could
 * leave a request the signer reads as a certificate for one of our nodes pending.
 *
 * Only CN attributes are searched, not the text `system:node:` anywhere: a certificate's
 * user is its CN, and a text search also finds the bytes that follow a name.
 */
import { nodeNameFromUsername } from '../../core/csr/csr';

const CN_OID_TLV = Buffer.from('0603550403', 'hex');
/** Every BEGIN/END line: what lies between two of them may be a block some reader takes. */
const pemMarker = /-----(?:BEGIN|END)[^\n]*\n?/;

export function nodesMentioned(spec: { username: string; request: string }): string[] {
  const users = [spec.username];
  const raw = Buffer.from(spec.request, 'base64');
  const blobs = [raw, ...raw.toString('latin1').split(pemMarker).map(laxBase64)];
  for (const blob of blobs) users.push(...commonNamesAnywhere(blob));
  const names = users.flatMap((user) => nodeNameFromUsername(user) ?? []);
  return [...new Set(names)].sort();
}

/** Header lines (`Key: value`) dropped, everything not base64 skipped. */
function laxBase64(body: string): Buffer {
  const lines = body.split('\n').filter((line) => !line.includes(':'));
  return Buffer.from(lines.join('').replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
}

/** Every value following a CN attribute type, decoded by its string tag (best effort). */
function commonNamesAnywhere(bytes: Buffer): string[] {
  const found: string[] = [];
  for (let at = bytes.indexOf(CN_OID_TLV); at >= 0; at = bytes.indexOf(CN_OID_TLV, at + 1)) {
    const tag = bytes[at + CN_OID_TLV.length];
    let offset = at + CN_OID_TLV.length + 1;
    let length = bytes[offset++] ?? 0;
    if (length > 0x80) {
      const octets = length & 0x7f;
      length = 0;
      for (let i = 0; i < octets && i < 4; i++) length = length * 256 + (bytes[offset++] ?? 0);
    }
    const value = bytes.subarray(offset, offset + length);
    switch (tag) {
      case 0x1e: found.push(Buffer.from(value.subarray(0, value.length & ~1)).swap16().toString('utf16le')); break; // BMPString, UTF-16BE
      case 0x1c: found.push(String.fromCodePoint(...Array.from({ length: value.length >> 2 }, (_, i) => value.readUInt32BE(4 * i) % 0x110000))); break;
      case 0x0c: found.push(value.toString('utf8')); break;
      default: found.push(value.toString('latin1'));
    }
  }
  return found;
}
