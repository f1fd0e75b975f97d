import { inspect } from 'node:util';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import {
  AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, isPayloadDecryptionError, isPayloadKeyNotFoundError,
} from '../../../workers/codec/aes-gcm-codec';
import { autonodeDataConverter } from '../../../workers/codec/data-converter';
import { PayloadKeyring } from '../../../workers/codec/keyring';
import { aKeyring } from '../../support/payload-keys';

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload): unknown => defaultPayloadConverter.fromPayload(payload);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

const claim = { cluster: { name: 'prod-eu-7f3k', region: 'eu-west-1' }, nodeClaim: { name: 'spot-example-x7k2p', uid: 'uid-1' } };

describe('AES-256-GCM payload codec', () => {
  it('round-trips a payload, metadata and data, with none of it readable in the encoded form', async () => {
    const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
    const original = toPayload(claim);
    const [encoded] = await codec.encode([original]);
    expect(text(encoded!.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded!.metadata?.[KEY_ID_METADATA])).toBe('k1');
    expect(Object.keys(encoded!.metadata ?? {}).sort()).toEqual(['encoding', KEY_ID_METADATA]);
    const bytes = Buffer.from(encoded!.data!);
    for (const plain of ['prod-eu-7f3k', 'spot-example-x7k2p', 'json/plain']) expect(bytes.includes(plain)).toBe(false);

    const [decoded] = await codec.decode([encoded!]);
    expect(text(decoded!.metadata?.encoding)).toBe('json/plain');
    expect(fromPayload(decoded!)).toEqual(claim);
  });

  it('uses a fresh IV per payload: the same value encrypts differently every time', async () => {
    const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
    const [a, b] = await codec.encode([toPayload(claim), toPayload(claim)]);
    expect(Buffer.from(a!.data!).subarray(0, 12).equals(Buffer.from(b!.data!).subarray(0, 12))).toBe(false);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('round-trips empty and binary payloads and an empty batch', async () => {
    const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
    const binary: Payload = { metadata: { encoding: Buffer.from('binary/plain') }, data: Buffer.from([0, 255, 1, 254]) };
    const empty: Payload = { metadata: { encoding: Buffer.from('binary/null') } };
    const decoded = await codec.decode(await codec.encode([binary, empty]));
    expect(Buffer.from(decoded[0]!.data!).equals(Buffer.from([0, 255, 1, 254]))).toBe(true);
    expect(text(decoded[1]!.metadata?.encoding)).toBe('binary/null');
    expect(decoded[1]!.data?.length ?? 0).toBe(0);
    expect(await codec.encode([])).toEqual([]);
  });

  it('rotation: payloads made under the old primary still decode once a new primary is added; new payloads name the new key', async () => {
    const before = new AesGcmPayloadCodec(aKeyring(['2026-05']));
    const [old] = await before.encode([toPayload(claim)]);
    const after = new AesGcmPayloadCodec(aKeyring(['2026-05', '2026-11'], '2026-11'));
    const [fresh] = await after.encode([toPayload(claim)]);
    expect(text(old!.metadata?.[KEY_ID_METADATA])).toBe('2026-05');
    expect(text(fresh!.metadata?.[KEY_ID_METADATA])).toBe('2026-11');
    expect((await after.decode([old!, fresh!])).map(fromPayload)).toEqual([claim, claim]);
    // and the old process cannot read the new key's payloads
    await expect(before.decode([fresh!])).rejects.toThrow(/key "2026-11", which is not in this process's keyring \(it has: 2026-05\): add key "2026-11" back to the keyring \(AUTONODE_PAYLOAD_KEYS_FILE/);
  });

  it('an unknown key id is a typed error naming the id and the fix', async () => {
    const [encoded] = await new AesGcmPayloadCodec(aKeyring(['retired'])).encode([toPayload(claim)]);
    const err = await new AesGcmPayloadCodec(aKeyring(['current'])).decode([encoded!]).catch((e: unknown) => e);
    expect(isPayloadKeyNotFoundError(err)).toBe(true);
    expect(err).toMatchObject({ keyId: 'retired', knownIds: ['current'] });
    expect(String(err)).toMatch(/PayloadKeyNotFoundError: payload is encrypted with key "retired".*add key "retired" back/);
  });

  it.each([
    ['a flipped ciphertext byte', (p: Payload): Payload => ({ ...p, data: flip(p.data!, 20) })],
    ['a flipped IV byte', (p: Payload): Payload => ({ ...p, data: flip(p.data!, 0) })],
    ['a flipped tag byte', (p: Payload): Payload => ({ ...p, data: flip(p.data!, p.data!.length - 1) })],
    ['the key id swapped for another key of the ring', (p: Payload): Payload => ({ ...p, metadata: { ...p.metadata, [KEY_ID_METADATA]: Buffer.from('k1') } })],
  ])('%s is refused as tampered, naming the key', async (_, tamper) => {
    // both ids hold the same key value: only the id bound into the tag tells them apart
    const codec = new AesGcmPayloadCodec(aKeyring(['k1', 'k2'], 'k2', () => Buffer.alloc(32, 9).toString('base64')));
    const [encoded] = await codec.encode([toPayload(claim)]);
    const err = await codec.decode([tamper(encoded!)]).catch((e: unknown) => e);
    expect(isPayloadDecryptionError(err)).toBe(true);
    expect(String(err)).toMatch(/cannot decrypt payload encrypted with key "k[12]": authentication failed: the payload or its key id was altered, or the key named "k[12]"/);
  });

  it('the same id with a different key value is refused, not decoded into garbage', async () => {
    const [encoded] = await new AesGcmPayloadCodec(aKeyring(['k1'])).encode([toPayload(claim)]);
    const wrongValue = aKeyring(['k1'], 'k1', () => Buffer.alloc(32, 7).toString('base64'));
    await expect(new AesGcmPayloadCodec(wrongValue).decode([encoded!])).rejects.toThrow(/key "k1": authentication failed/);
  });

  it('a truncated payload and one without a key id are refused', async () => {
    const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
    const [encoded] = await codec.encode([toPayload(claim)]);
    await expect(codec.decode([{ ...encoded!, data: encoded!.data!.subarray(0, 20) }])).rejects.toThrow(/key "k1": 20 bytes is shorter than an IV and a tag/);
    await expect(codec.decode([{ ...encoded!, metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING) } }])).rejects.toThrow(/has no encryption-key-id metadata/);
  });

  it('passes payloads that are not encrypted through decode unchanged (histories from before the codec)', async () => {
    const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
    const plain = [toPayload(claim), toPayload(null), toPayload(new Uint8Array([1, 2])), {}];
    const decoded = await codec.decode(plain);
    expect(decoded).toHaveLength(4);
    decoded.forEach((p, i) => expect(p).toBe(plain[i]));
    expect(fromPayload(decoded[0]!)).toEqual(claim);
  });

  it('never shows key material when a keyring or codec is logged', () => {
    const key = Buffer.alloc(32, 0x5a).toString('base64');
    const codec = new AesGcmPayloadCodec(PayloadKeyring.from({ primary: 'k1', keys: [{ id: 'k1', key }] }));
    for (const shown of [inspect(codec, { depth: 10, showHidden: true }), JSON.stringify(codec), String(codec)]) {
      expect(shown).not.toContain(key);
      expect(shown).not.toContain('5a5a5a');
      expect(shown).not.toMatch(/ZlpaWl/);
    }
  });
});

describe('autonodeDataConverter', () => {
  it('is Temporal\'s default (no codec) unless keys are configured', () => {
    expect(autonodeDataConverter({})).toEqual({});
  });

  it('encrypts with the configured keyring', async () => {
    const keys = JSON.stringify({ primary: 'k1', keys: [{ id: 'k1', key: Buffer.alloc(32, 1).toString('base64') }] });
    const converter = autonodeDataConverter({ AUTONODE_PAYLOAD_KEYS: keys });
    expect(converter.payloadCodecs).toHaveLength(1);
    const [encoded] = await converter.payloadCodecs![0]!.encode([toPayload(claim)]);
    expect(text(encoded!.metadata?.[KEY_ID_METADATA])).toBe('k1');
  });

  it('moves failure messages and stack traces into a payload, so the codec encrypts them too', () => {
    const keys = JSON.stringify({ primary: 'k1', keys: [{ id: 'k1', key: Buffer.alloc(32, 1).toString('base64') }] });
    const { failureConverter } = loadDataConverter(autonodeDataConverter({ AUTONODE_PAYLOAD_KEYS: keys }));
    const failure = failureConverter.errorToFailure(new Error('claim spot-example-x7k2p: no capacity'), defaultPayloadConverter);
    expect(failure.message).toBe('Encoded failure');
    expect(defaultPayloadConverter.fromPayload(failure.encodedAttributes!)).toEqual({ message: 'claim spot-example-x7k2p: no capacity', stack_trace: expect.stringContaining('Error: claim') });
    // off: Temporal's default, messages in the clear
    expect(loadDataConverter(autonodeDataConverter({})).failureConverter.errorToFailure(new Error('x'), defaultPayloadConverter).message).toBe('x');
  });
});

function flip(bytes: Uint8Array, at: number): Uint8Array {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}
