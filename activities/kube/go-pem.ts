/**
 * The PEM in a CSR's spec.request, read the way the API server and the signer read it:
 * Go's `pem.Decode`, which takes the FIRST block it can parse and returns everything else
 * as `rest`. goPemDecode is a port of Go 1.26's encoding/pem Decode (same search, same
 * line rules); readCsrPem then refuses everything Go accepts that another reader could
 * see differently (a second block, garbage around the block, headers, lax base64), so the
 * DER autonode judges is, byte for byte, the DER the signer signs.
 *
 * Rejected alternative: a regex for "one PEM block" (what @peculiar/x509 does). It finds
 * blocks Go skips (BEGIN not at the start of a line, junk after END) and skips blocks Go
 * takes (a space in the base64), so the two can read different blocks of one request.
 *
 * Strings here are latin1: one character per input byte, so offsets are byte offsets and
 * no byte is lost or merged by a text decoding.
 */
import { rejectMalformed, rejectUnlikeKubelet } from './csr-reject';

const pemStart = '\n-----BEGIN ';
const pemEnd = '\n-----END ';
const pemEndOfLine = '-----';

export const CSR_PEM_TYPE = 'CERTIFICATE REQUEST';

/** What Go's pem.Decode returns, and what it skipped to find it. */
export interface GoPemBlock {
  type: string;
  /** in input order; Go keeps a map (last one wins) */
  headers: Array<[string, string]>;
  /** the lines between the BEGIN line (or the headers) and the END line, untouched */
  body: string;
  /** input before the BEGIN line Go settled on */
  before: string;
  /** input after the END line: Go's `rest` */
  rest: string;
}

/** Go's getLine: up to the next \n, without a \r before it and without trailing spaces and tabs. */
function getLine(data: string): { line: string; rest: string; consumed: number } {
  let i = data.indexOf('\n');
  let j: number;
  if (i < 0) {
    i = data.length;
    j = i;
  } else {
    j = i + 1;
    if (i > 0 && data[i - 1] === '\r') i--;
  }
  return { line: data.slice(0, i).replace(/[ \t]+$/, ''), rest: data.slice(j), consumed: j };
}

/**
 * Port of Go's pem.Decode over a latin1 string. One deliberate difference: Go moves on to
 * a later block when a block's base64 does not decode; this returns that block, whose body
 * readCsrPem then refuses — as it refuses any later block — so the verdict is the same.
 */
export function goPemDecode(data: string): GoPemBlock | undefined {
  let rest = data;
  let offset = 0; // where `rest` starts in `data`
  let endTrailerIndex = 0;
  for (;;) {
    if (endTrailerIndex < 0 || endTrailerIndex > rest.length) return undefined;
    rest = rest.slice(endTrailerIndex);
    offset += endTrailerIndex;

    // The first END line, then the last BEGIN line before it.
    let endIndex = rest.indexOf(pemEnd);
    if (endIndex < 0) return undefined;
    endTrailerIndex = endIndex + pemEnd.length;
    const beginIndex = rest.slice(0, endIndex).lastIndexOf(pemStart.slice(1));
    if (beginIndex < 0 || (beginIndex > 0 && rest[beginIndex - 1] !== '\n')) continue;
    const blockStart = offset + beginIndex;
    const advance = (n: number) => {
      rest = rest.slice(n);
      offset += n;
      endIndex -= n;
      endTrailerIndex -= n;
    };
    advance(beginIndex + pemStart.length - 1);

    const typeLine = getLine(rest);
    advance(typeLine.consumed);
    if (!typeLine.line.endsWith(pemEndOfLine)) continue;
    const type = typeLine.line.slice(0, -pemEndOfLine.length);

    const headers: Array<[string, string]> = [];
    for (;;) {
      if (rest.length === 0) return undefined;
      const { line, consumed } = getLine(rest);
      const colon = line.indexOf(':');
      if (colon < 0) break;
      headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
      advance(consumed);
    }
    if (headers.length > 0 && endIndex < 0) continue;

    // The END line names the same type, ends in five dashes, then only spaces and tabs.
    const endTrailerLen = type.length + pemEndOfLine.length;
    const endTrailer = rest.slice(endTrailerIndex, endTrailerIndex + endTrailerLen);
    if (endTrailer.length < endTrailerLen) continue;
    if (!endTrailer.startsWith(type) || !endTrailer.endsWith(pemEndOfLine)) continue;
    if (getLine(rest.slice(endTrailerIndex + endTrailerLen)).line.length !== 0) continue;

    const body = endIndex > 0 ? rest.slice(0, endIndex) : '';
    return { type, headers, body, before: data.slice(0, blockStart), rest: getLine(rest.slice(endIndex + pemEnd.length - 1)).rest };
  }
}

const canonicalBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard base64 with padding, in its one canonical spelling (the padding bits zero too).
 * Go's decoder accepts more — \r and \n anywhere, non-zero padding bits — and Node's
 * Buffer.from(x, 'base64') far more (any junk is skipped); refusing all of it means every
 * reader gets these bytes.
 */
export function decodeStrictBase64(text: string): Uint8Array | undefined {
  if (!canonicalBase64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

const onlyWhitespace = /^[ \t\r\n]*$/;
const base64Line = /^[A-Za-z0-9+/=]+$/;

/** The DER of the one CERTIFICATE REQUEST block in `pem`, or RequestRejectedError. */
export function readCsrPem(pem: Uint8Array): Uint8Array {
  const text = Buffer.from(pem).toString('latin1');
  const block = goPemDecode(text);
  if (block === undefined) {
    rejectMalformed(`spec.request holds no PEM block the API server can read (${describeBytes(text)}): it needs a "-----BEGIN ${CSR_PEM_TYPE}-----" line, base64 lines, and a matching END line, each starting a line`);
  }
  if (block.type !== CSR_PEM_TYPE) rejectMalformed(`the PEM block the API server reads is a ${JSON.stringify(block.type)}, not a ${CSR_PEM_TYPE}`);
  if (!onlyWhitespace.test(block.before)) {
    rejectUnlikeKubelet(`spec.request has ${block.before.includes('-----BEGIN ') ? 'another PEM block or BEGIN line' : describeBytes(block.before)} before the PEM block the API server reads (readers disagree on which block counts)`);
  }
  if (!onlyWhitespace.test(block.rest)) {
    rejectUnlikeKubelet(`spec.request has ${block.rest.includes('-----BEGIN ') ? 'a second PEM block' : describeBytes(block.rest)} after the PEM block the API server reads (only the first is signed; readers disagree on which block counts)`);
  }
  if (block.headers.length > 0) rejectUnlikeKubelet(`the PEM block has headers (${block.headers.map(([key]) => JSON.stringify(key)).join(', ')})`);
  const lines = block.body.split('\n').map((line) => line.replace(/\r$/, ''));
  const bad = lines.find((line) => !base64Line.test(line));
  if (bad !== undefined) {
    rejectUnlikeKubelet(bad === '' ? 'the PEM block has a blank line inside its base64' : `the PEM block has a line with characters outside base64 (${JSON.stringify(bad.slice(0, 24))}${bad.length > 24 ? '…' : ''}), which Go drops or refuses and other readers may not`);
  }
  const der = decodeStrictBase64(lines.join(''));
  if (der === undefined) rejectUnlikeKubelet('the base64 in the PEM block is not canonical standard base64 (padding inside, missing or non-zero padding bits)');
  return der;
}

function describeBytes(text: string): string {
  const shown = JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);
  return `${text.length} bytes: ${shown}`;
}
