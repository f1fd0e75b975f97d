import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DataConverter } from '@temporalio/common';
import { autonodeDataConverter } from '../../workers/codec/data-converter';
import { newPayloadKeyringJson } from '../../workers/codec/keyring';
import { startCodecServer } from '../../workers/codec/server';

export interface DevPayloadCodec {
  /** the keyring file: AUTONODE_PAYLOAD_KEYS_FILE for every client of this stack */
  keysFile: string;
  /** the codec server: the Web UI's codec endpoint, and `temporal … --codec-endpoint` */
  endpoint: string;
  dataConverter: DataConverter;
  stop(): Promise<void>;
}

/**
 * `autonode dev` encrypts payloads as production can: a keyring in the stack's directory
 * (0600; generated once, so a stack dir reused with --dir keeps reading its old histories),
 * the same DataConverter for the workers and every client, and a codec server on the port
 * the dev server's Web UI was started with (`--ui-codec-endpoint`).
 */
export async function startDevPayloadCodec(o: { dir: string; port: number; uiUrl: string | undefined }): Promise<DevPayloadCodec> {
  const keysFile = join(o.dir, 'payload-keys.json');
  if (!existsSync(keysFile)) writeFileSync(keysFile, newPayloadKeyringJson('dev'), { mode: 0o600, flag: 'wx' });
  const dataConverter = autonodeDataConverter({ AUTONODE_PAYLOAD_KEYS_FILE: keysFile });
  const codec = dataConverter.payloadCodecs?.[0];
  if (!codec) throw new Error(`${keysFile}: no payload codec was built from it`);
  // the UI is served on 127.0.0.1; a browser may also call it localhost
  const origins = o.uiUrl ? [o.uiUrl, o.uiUrl.replace('//127.0.0.1:', '//localhost:')] : [];
  const server = await startCodecServer({ codec, host: '127.0.0.1', port: o.port, allowedOrigins: origins });
  return { keysFile, endpoint: server.url, dataConverter, stop: () => server.close() };
}
