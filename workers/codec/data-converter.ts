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

