import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { type PayloadKeyring } from './keyring';

/** The `encoding` of an encrypted payload (Temporal's convention; the UI and CLI show it as such). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata naming the keyring entry that encrypted the payload. */
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/** An encrypted payload names a key id this keyring does not hold. */
export class PayloadKeyNotFoundError extends Error {
  constructor(
    readonly keyId: string,
    readonly knownIds: readonly string[],
  ) {
    super(
      `payload is encrypted with key "${keyId}", which is not in this process's keyring (it has: ${knownIds.join(', ')}): ` +
        `add key "${keyId}" back to the keyring (AUTONODE_PAYLOAD_KEYS_FILE / AUTONODE_PAYLOAD_KEYS); ` +
        'a key can leave the keyring only when no history still kept was encrypted with it',
    );
  }

  override get name(): string {
    return 'PayloadKeyNotFoundError';
  }
}

/** An encrypted payload that cannot be decrypted: altered, truncated, or not made by this key. */
export class PayloadDecryptionError extends Error {
  constructor(
    readonly keyId: string | undefined,
    problem: string,
  ) {
    super(`cannot decrypt payload${keyId === undefined ? '' : ` encrypted with key "${keyId}"`}: ${problem}`);
  }

  override get name(): string {
    return 'PayloadDecryptionError';
  }
}

export function isPayloadKeyNotFoundError(err: unknown): err is PayloadKeyNotFoundError {
  return err instanceof PayloadKeyNotFoundError;
}

export function isPayloadDecryptionError(err: unknown): err is PayloadDecryptionError {
  return err instanceof PayloadDecryptionError;
}

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

/**
 * Encrypts every payload with AES-256-GCM under the keyring's primary key. The whole
 * original Payload (metadata and data, protobuf-encoded) is the plaintext, so nothing of it
 * (not even its encoding) shows in a history; the key id is the additional authenticated
 * data, so a payload cannot be passed off as another key's. `data` = 12-byte random IV ‖
 * ciphertext ‖ 16-byte tag.
 *
 * Decoding picks the key by the payload's key id, so payloads made under an older primary
 * still decode, and passes any payload that is not `binary/encrypted` through unchanged:
 * histories recorded before encryption was switched on stay readable.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(private readonly keyring: PayloadKeyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decrypt(p));
  }

  encrypt(payload: Payload): Payload {
    const keyId = this.keyring.primaryId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keyring.primaryKey(), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(keyId, 'utf8'));
    const plaintext = temporal.api.common.v1.Payload.encode(payload).finish();
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING, 'utf8'),
        [KEY_ID_METADATA]: Buffer.from(keyId, 'utf8'),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  decrypt(payload: Payload): Payload {
    if (utf8(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
    const keyId = utf8(payload.metadata?.[KEY_ID_METADATA]);
    if (keyId === undefined) throw new PayloadDecryptionError(undefined, `it is ${ENCRYPTED_ENCODING} but has no ${KEY_ID_METADATA} metadata (not made by autonode's codec)`);
    const key = this.keyring.key(keyId);
    if (!key) throw new PayloadKeyNotFoundError(keyId, this.keyring.ids);
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(keyId, `${data.length} bytes is shorter than an IV and a tag (truncated)`);
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(keyId, 'utf8'));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        keyId,
        `authentication failed: the payload or its key id was altered, or the key named "${keyId}" in this keyring is not the key that encrypted it (check the keyring's value for "${keyId}")`,
      );
    }
    const original = temporal.api.common.v1.Payload.decode(plaintext);
    return { metadata: { ...original.metadata }, data: original.data };
  }
}
