/**
 * Proof of possession: a CSR is signed by the private key of the public key it carries.
 * The signer checks this too (Go's CertificateRequest.CheckSignature), so a bad signature
 * only means the certificate never comes; autonode still denies it, rather than approve
 * something the signer will refuse, and so that an altered request is never approved.
 *
 * Only the key and signature types a kubelet (or a sane client) uses, encoded in their one
 * canonical way: RSA ≥ 2048 bits with e = 65537 and PKCS#1 v1.5, ECDSA P-256/P-384 and
 * Ed25519, with SHA-256/384/512. Go also takes SHA-1, RSA-PSS and DSA-era oddities; those
 * are denied. Verification is synchronous (node:crypto, OpenSSL): parseCsr is synchronous,
 * which rules out WebCrypto and so @peculiar/x509's Pkcs10CertificateRequest#verify().
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { assertNever } from '../../core/assert';
import { rejectMalformed, rejectUnlikeKubelet } from './csr-reject';
import { Tags, children, hex, readOctetAlignedBits, readOid, readOne, readUnsignedInteger, sequenceOf, type Tlv } from './der';
import { oidName } from './csr-der';

export type PublicKeyKind = 'RSA' | 'ECDSA-P256' | 'ECDSA-P384' | 'Ed25519';

type KeyFamily = 'RSA' | 'ECDSA' | 'Ed25519';

const publicKeyOids: Record<string, KeyFamily> = {
  '1.2.840.113549.1.1.1': 'RSA',
  '1.2.840.10045.2.1': 'ECDSA',
  '1.3.101.112': 'Ed25519',
};

const curves: Record<string, { kind: PublicKeyKind; coordinateBytes: number }> = {
  '1.2.840.10045.3.1.7': { kind: 'ECDSA-P256', coordinateBytes: 32 },
  '1.3.132.0.34': { kind: 'ECDSA-P384', coordinateBytes: 48 },
};

/** Parameters: RSA's must be NULL (RFC 4055), ECDSA's and Ed25519's absent (RFC 5758, 8410). */
const signatureAlgorithms: Record<string, { name: string; family: KeyFamily; hash: string | null }> = {
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', family: 'RSA', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', family: 'RSA', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', family: 'RSA', hash: 'sha512' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256', family: 'ECDSA', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384', family: 'ECDSA', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512', family: 'ECDSA', hash: 'sha512' },
  '1.3.101.112': { name: 'Ed25519', family: 'Ed25519', hash: null },
};

const NULL_PARAMETERS = '0500';
const RSA_EXPONENT = '010001';
const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 8192;

interface PublicKey {
  kind: PublicKeyKind;
  family: KeyFamily;
  key: KeyObject;
  /** RSA: modulus octets (a signature is exactly this long); ECDSA: octets of r and s */
  size: number;
}

/** An AlgorithmIdentifier: OID and the encoded parameters ('' when absent). */
function readAlgorithm(tlv: Tlv, what: string): { oid: string; parameters: string } {
  const parts = tlv.tag === Tags.sequence ? children(tlv, what) : [];
  const [id, parameters] = parts;
  if (parts.length < 1 || parts.length > 2 || id === undefined) rejectMalformed(`${what} is not an AlgorithmIdentifier`);
  return { oid: readOid(id, what), parameters: parameters === undefined ? '' : hex(parameters.raw) };
}

export function readPublicKey(spki: Tlv): PublicKey {
  const [algorithm, bits] = sequenceOf(spki, 'the subjectPublicKeyInfo', [
    { tag: Tags.sequence, name: 'algorithm' },
    { tag: Tags.bitString, name: 'subjectPublicKey' },
  ]) as [Tlv, Tlv];
  const { oid, parameters } = readAlgorithm(algorithm, 'the public key algorithm');
  const keyBytes = readOctetAlignedBits(bits, 'the public key');
  const family = publicKeyOids[oid];
  if (family === undefined) rejectUnlikeKubelet(`the public key algorithm is ${oidName(oid)}; autonode accepts RSA (2048+ bits), ECDSA P-256/P-384 and Ed25519`);
  const { kind, size } = keyShape(family, parameters, keyBytes);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(spki.raw), format: 'der', type: 'spki' });
  } catch (err) {
    return rejectMalformed(`the ${kind} public key does not load (${err instanceof Error ? err.message : String(err)})`);
  }
  return { kind, family, key, size };
}

function keyShape(family: KeyFamily, parameters: string, keyBytes: Uint8Array): Pick<PublicKey, 'kind' | 'size'> {
  switch (family) {
    case 'RSA': {
      if (parameters !== NULL_PARAMETERS) rejectMalformed('the RSA public key lacks its NULL parameters');
      const [modulus, exponent] = sequenceOf(readOne(keyBytes, Tags.sequence, 'the RSA public key'), 'the RSA public key', [
        { tag: Tags.integer, name: 'modulus' },
        { tag: Tags.integer, name: 'publicExponent' },
      ]) as [Tlv, Tlv];
      const n = readUnsignedInteger(modulus, 'the RSA modulus');
      const bitLength = n.length * 8 - (Math.clz32(n[0]!) - 24);
      if (bitLength < RSA_MIN_BITS || bitLength > RSA_MAX_BITS) rejectUnlikeKubelet(`the RSA key has ${bitLength} bits; autonode accepts ${RSA_MIN_BITS} to ${RSA_MAX_BITS}`);
      if (hex(readUnsignedInteger(exponent, 'the RSA exponent')) !== RSA_EXPONENT) rejectUnlikeKubelet('the RSA key\'s public exponent is not 65537');
      return { kind: 'RSA', size: n.length };
    }
    case 'ECDSA': {
      const curve = parameters.startsWith('06') ? curves[readOid(readOne(Buffer.from(parameters, 'hex'), Tags.oid, 'the ECDSA curve'), 'the ECDSA curve')] : undefined;
      if (curve === undefined) rejectUnlikeKubelet('the ECDSA key is not on a named curve P-256 or P-384');
      if (keyBytes.length !== 1 + 2 * curve.coordinateBytes || keyBytes[0] !== 0x04) rejectUnlikeKubelet(`the ${curve.kind} key is not an uncompressed point (Go reads only those)`);
      return { kind: curve.kind, size: curve.coordinateBytes };
    }
    case 'Ed25519':
      if (parameters !== '') rejectMalformed('the Ed25519 key has parameters (RFC 8410 says absent)');
      if (keyBytes.length !== 32) rejectMalformed(`the Ed25519 key is ${keyBytes.length} bytes, not 32`);
      return { kind: 'Ed25519', size: 64 };
    default:
      return assertNever(family);
  }
}

/** Throws RequestRejectedError unless `signature` over `signedInfo` verifies with the request's own key. */
export function verifyRequestSignature(input: { publicKey: PublicKey; signatureAlgorithm: Tlv; signedInfo: Uint8Array; signature: Uint8Array }): void {
  const { publicKey, signedInfo, signature } = input;
  const { oid, parameters } = readAlgorithm(input.signatureAlgorithm, 'the signature algorithm');
  const algorithm = signatureAlgorithms[oid];
  if (algorithm === undefined) rejectUnlikeKubelet(`the signature algorithm is ${oidName(oid)}; autonode accepts PKCS#1 v1.5 RSA, ECDSA and Ed25519 with SHA-256/384/512`);
  const expectedParameters = algorithm.family === 'RSA' ? NULL_PARAMETERS : '';
  if (parameters !== expectedParameters) rejectUnlikeKubelet(`the ${algorithm.name} signature algorithm has ${parameters === '' ? 'no' : 'unexpected'} parameters`);
  if (algorithm.family !== publicKey.family) rejectMalformed(`the request is signed with ${algorithm.name} but its key is ${publicKey.kind}`);
  let valid: boolean;
  switch (algorithm.family) {
    case 'RSA':
      // OpenSSL and Go both want exactly modulus-length signatures; stated, not assumed.
      valid = signature.length === publicKey.size && verify(algorithm.hash, signedInfo, publicKey.key, signature);
      break;
    case 'ECDSA':
      valid = verify(algorithm.hash, signedInfo, { key: publicKey.key, dsaEncoding: 'ieee-p1363' }, ecdsaSignatureToP1363(signature, publicKey.size));
      break;
    case 'Ed25519':
      valid = signature.length === publicKey.size && verify(null, signedInfo, publicKey.key, signature);
      break;
  }
  if (!valid) rejectMalformed(`the request's ${algorithm.name} signature does not verify with its own ${publicKey.kind} public key (altered request, or the requester does not hold the key)`);
}

/** DER ECDSA-Sig-Value (strict, as Go's cryptobyte reads it) → r ‖ s, each `size` octets. */
function ecdsaSignatureToP1363(signature: Uint8Array, size: number): Uint8Array {
  const [r, s] = sequenceOf(readOne(signature, Tags.sequence, 'the ECDSA signature'), 'the ECDSA signature', [
    { tag: Tags.integer, name: 'r' },
    { tag: Tags.integer, name: 's' },
  ]) as [Tlv, Tlv];
  const out = new Uint8Array(2 * size);
  for (const [i, part] of [readUnsignedInteger(r, 'ECDSA r'), readUnsignedInteger(s, 'ECDSA s')].entries()) {
    if (part.length > size) rejectMalformed(`the ECDSA signature's ${i === 0 ? 'r' : 's'} is longer than the curve`);
    out.set(part, (i + 1) * size - part.length);
  }
  return out;
}
