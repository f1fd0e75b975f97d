// `autonode dev`'s payload encryption, without the stack: the keyring it writes, the
// DataConverter its workers and clients share, and the codec server the dev UI calls.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { startDevPayloadCodec } from '../../../dev/autonode/payload-codec';
import { freePortsFor } from '../../../dev/stack/ports';
import { AesGcmPayloadCodec, KEY_ID_METADATA } from '../../../workers/codec/aes-gcm-codec';
import { PayloadKeyring } from '../../../workers/codec/keyring';

describe('autonode dev payload encryption', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'autonode-dev-codec-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a keyring only its owner can read, encrypts with it, and serves it to the UI origin on the chosen port', async () => {
    const { codec: port } = await freePortsFor(['codec']);
    const dev = await startDevPayloadCodec({ dir, port, uiUrl: 'http://127.0.0.1:8233' });
    try {
      expect(dev.keysFile).toBe(join(dir, 'payload-keys.json'));
      expect(statSync(dev.keysFile).mode & 0o777).toBe(0o600);
      const keyring = PayloadKeyring.parse(readFileSync(dev.keysFile, 'utf8'), dev.keysFile);
      expect(dev.endpoint).toBe(`http://127.0.0.1:${port}`);

      const [encoded] = await dev.dataConverter.payloadCodecs![0]!.encode([defaultPayloadConverter.toPayload({ cluster: 'dev' })]);
      expect(Buffer.from(encoded!.metadata![KEY_ID_METADATA]!).toString()).toBe(keyring.primaryId);
      expect(defaultPayloadConverter.fromPayload((await new AesGcmPayloadCodec(keyring).decode([encoded!]))[0]!)).toEqual({ cluster: 'dev' });

      for (const origin of ['http://127.0.0.1:8233', 'http://localhost:8233']) {
        const preflight = await fetch(`${dev.endpoint}/decode`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
        expect({ origin, status: preflight.status, allowed: preflight.headers.get('access-control-allow-origin') }).toEqual({ origin, status: 204, allowed: origin });
      }
    } finally {
      await dev.stop();
    }
  });

  it('keeps the keyring of a reused stack dir, so its old histories stay readable', async () => {
    const first = await startDevPayloadCodec({ dir, port: 0, uiUrl: undefined });
    const [encoded] = await first.dataConverter.payloadCodecs![0]!.encode([defaultPayloadConverter.toPayload('from the first run')]);
    await first.stop();
    const keys = readFileSync(first.keysFile, 'utf8');

    const second = await startDevPayloadCodec({ dir, port: 0, uiUrl: undefined });
    try {
      expect(readFileSync(second.keysFile, 'utf8')).toBe(keys);
      expect(defaultPayloadConverter.fromPayload((await second.dataConverter.payloadCodecs![0]!.decode([encoded!]))[0]!)).toBe('from the first run');
    } finally {
      await second.stop();
    }
  });
});
