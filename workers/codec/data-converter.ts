import { type DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { loadPayloadKeyring, type PayloadKeySource } from './keyring';

/**
 * The one DataConverter every autonode Worker and Client uses: payloads encrypted with the
 * configured keyring, or Temporal's defaults when no keyring is configured. A worker and
 * the clients that start, signal and query its workflows must agree: one without the keys
 * cannot read what the other wrote.
 */
export function autonodeDataConverter(source: PayloadKeySource): DataConverter {
  const keyring = loadPayloadKeyring(source);
  return keyring ? { payloadCodecs: [new AesGcmPayloadCodec(keyring)] } : {};
}

/** For start-up lines: whether (and with which primary key) payloads are encrypted. */
export function describeDataConverter(converter: DataConverter): string {
  const codec = converter.payloadCodecs?.find((c): c is AesGcmPayloadCodec => c instanceof AesGcmPayloadCodec);
  return codec ? `payloads encrypted (AES-256-GCM, primary key "${codec.primaryKeyId}")` : 'payloads not encrypted (no AUTONODE_PAYLOAD_KEYS_FILE / AUTONODE_PAYLOAD_KEYS)';
}
