import { type DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { loadPayloadKeyring, type PayloadKeySource } from './keyring';

/**
 * The one DataConverter every autonode Worker and Client uses: payloads, and failure
 * messages and stack traces, encrypted with the configured keyring; or Temporal's defaults
 * when no keyring is configured. A worker and the clients that start, signal and query its
 * workflows must agree: one without the keys cannot read what the other wrote.
 *
 * A Worker given a pre-built workflow bundle encrypts its workflows' own failures only if
 * the bundle was built with the same `failureConverterPath` (bundleWorkflowCode); one given
 * `workflowsPath` (workers/main.ts, `autonode dev`) bundles it itself.
 */
export function autonodeDataConverter(source: PayloadKeySource): DataConverter {
  const keyring = loadPayloadKeyring(source);
  if (!keyring) return {};
  return { payloadCodecs: [new AesGcmPayloadCodec(keyring)], failureConverterPath: require.resolve('./failure-converter') };
}

