// The codec server over real HTTP on 127.0.0.1, as the Temporal UI and CLI call it.
import { request } from 'node:http';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, KEY_ID_METADATA } from '../../../workers/codec/aes-gcm-codec';
import { startCodecServer, type RunningCodecServer } from '../../../workers/codec/server';
import { startCodecServerFromArgs } from '../../../starter/commands/codec-server';
import { aKeyring, aKeyringFile } from '../../support/payload-keys';

const UI = 'http://127.0.0.1:8233';
const TOKEN = 'operator-token-1';
const codec = new AesGcmPayloadCodec(aKeyring(['k1']));
const claim = { cluster: { name: 'prod-eu-7f3k' }, nodeClaim: { name: 'spot-example-x7k2p' } };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(server: RunningCodecServer, o: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${o.path}`, { method: o.method ?? 'POST', headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});
const payloadsOf = (answer: Answer): Payload[] => (JSON.parse(answer.body) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads.map(fromJson);
const json = (payloads: Payload[]) => JSON.stringify({ payloads: payloads.map(toJson) });
const post = (server: RunningCodecServer, path: string, payloads: Payload[], headers: Record<string, string> = {}) =>
  call(server, { path, body: json(payloads), headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers } });

describe('codec server (open, for the UI at one origin)', () => {
  let server: RunningCodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ codec, host: '127.0.0.1', port: 0, allowedOrigins: [UI], maxBodyBytes: 64 * 1024 });
  });
  afterAll(() => server.close());

  it('decodes what the workers encrypted, and encodes what the UI sends', async () => {
    const encrypted = await codec.encode([defaultPayloadConverter.toPayload(claim)]);
    const decoded = await post(server, '/decode', encrypted);
    expect(decoded.status).toBe(200);
    expect(decoded.headers['content-type']).toBe('application/json');
    expect(payloadsOf(decoded).map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([claim]);

    const encoded = await post(server, '/encode', [defaultPayloadConverter.toPayload('a signal argument')]);
    expect(encoded.status).toBe(200);
    const [sealed] = payloadsOf(encoded);
    expect(Buffer.from(sealed!.metadata![KEY_ID_METADATA]!).toString()).toBe('k1');
    expect(defaultPayloadConverter.fromPayload((await codec.decode([sealed!]))[0]!)).toBe('a signal argument');
  });

  it('answers `{}` (proto3 JSON of no payloads, as `temporal workflow query` sends for a query without arguments) with none', async () => {
    const answer = await call(server, { path: '/encode', body: '{}', headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default' } });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { payloads: [] }]);
  });

  it.each(['/default/decode', '/codec/autonode/default/decode'])('serves %s too (the CLI templates the endpoint; a proxy mounts it deeper) and passes plain payloads through', async (path) => {
    const plain = defaultPayloadConverter.toPayload({ before: 'encryption' });
    const answer = await post(server, path, [plain]);
    expect(answer.status).toBe(200);
    expect(defaultPayloadConverter.fromPayload(payloadsOf(answer)[0]!)).toEqual({ before: 'encryption' });
  });

  it('answers the browser preflight from the UI origin, and lets the UI read the answer', async () => {
    const preflight = await call(server, { method: 'OPTIONS', path: '/decode', headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(UI);
    expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['content-type', 'x-namespace', 'authorization']));
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');

    const answer = await post(server, '/decode', await codec.encode([defaultPayloadConverter.toPayload(1)]), { Origin: UI });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(UI);
    expect(answer.headers.vary).toMatch(/Origin/);
  });

  it('refuses another origin, preflight and request, without CORS headers', async () => {
    const preflight = await call(server, { method: 'OPTIONS', path: '/decode', headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const answer = await post(server, '/decode', await codec.encode([defaultPayloadConverter.toPayload(1)]), { Origin: 'http://evil.example' });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/origin http:\/\/evil\.example is not allowed/);
  });

  it.each<[string, { method?: string; path: string; body?: string }, number, RegExp]>([
    ['an unknown key id (422, naming it)', { path: '/decode', body: 'UNKNOWN' }, 422, /key "old", which is not in this process's keyring/],
    ['a body that is not JSON', { path: '/decode', body: '{"payloads": [' }, 400, /body is not JSON/],
    ['a body with another field instead of payloads', { path: '/decode', body: '{"payload": []}' }, 400, /payload/],
    ['data that is not base64', { path: '/decode', body: '{"payloads": [{"data": "%%%"}]}' }, 400, /payloads\.0\.data: must be base64/],
    ['GET', { method: 'GET', path: '/decode' }, 405, /GET not allowed: POST/],
    ['an unknown path', { path: '/decrypt', body: '{}' }, 404, /not found/],
    ['a body over the limit', { path: '/encode', body: JSON.stringify({ payloads: [{ data: 'A'.repeat(100_000) }] }) }, 413, /body larger than 65536 bytes/],
  ])('refuses %s', async (_, req, status, message) => {
    const body = req.body === 'UNKNOWN' ? json(await new AesGcmPayloadCodec(aKeyring(['old'])).encode([defaultPayloadConverter.toPayload(1)])) : req.body;
    const answer = await call(server, { ...req, ...(body !== undefined ? { body } : {}), headers: { 'Content-Type': 'application/json' } });
    expect(answer.status).toBe(status);
    expect(answer.body).toMatch(message);
  });
});

describe('codec server with a bearer token and one namespace', () => {
  let server: RunningCodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ codec, host: '127.0.0.1', port: 0, allowedOrigins: [UI], bearerToken: TOKEN, namespaces: ['autonode'] });
  });
  afterAll(() => server.close());

  it('401s a request without the token or with a wrong one, and serves the right one', async () => {
    const payloads = await codec.encode([defaultPayloadConverter.toPayload(claim)]);
    const none = await post(server, '/decode', payloads, { 'X-Namespace': 'autonode' });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await post(server, '/decode', payloads, { 'X-Namespace': 'autonode', Authorization: 'Bearer operator-token-2' })).status).toBe(401);
    expect((await post(server, '/decode', payloads, { 'X-Namespace': 'autonode', Authorization: TOKEN })).status).toBe(401);
    const right = await post(server, '/decode', payloads, { 'X-Namespace': 'autonode', Authorization: `Bearer ${TOKEN}` });
    expect(right.status).toBe(200);
    expect(defaultPayloadConverter.fromPayload(payloadsOf(right)[0]!)).toEqual(claim);
  });

  it('answers the preflight without the token (browsers send none on it)', async () => {
    const preflight = await call(server, { method: 'OPTIONS', path: '/decode', headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-namespace' } });
    expect(preflight.status).toBe(204);
  });

  it('refuses a namespace it does not serve', async () => {
    const answer = await post(server, '/decode', [], { 'X-Namespace': 'default', Authorization: `Bearer ${TOKEN}` });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/namespace "default" is not served here \(serves: autonode\)/);
  });
});

describe('autonode codec-server (the command line)', () => {
  const keys = JSON.stringify(aKeyringFile(['k1', 'k2']));
  const args = { host: '127.0.0.1', port: '0', allowedOrigin: [], namespace: [] };

  it('starts on the keys of the environment and says what it serves, without key material', async () => {
    const lines: string[] = [];
    const server = await startCodecServerFromArgs({ ...args, allowedOrigin: [`${UI}/`] }, { AUTONODE_PAYLOAD_KEYS: keys }, (l) => lines.push(l));
    try {
      expect(lines.join('\n')).toMatch(/keys k1, k2 \(primary k2\); bearer token not required/);
      expect(lines.join('\n')).toMatch(/browser origins: http:\/\/127\.0\.0\.1:8233$/m);
      for (const k of aKeyringFile(['k1', 'k2']).keys) expect(lines.join('\n')).not.toContain(k.key);
      const answer = await post(server, '/decode', await new AesGcmPayloadCodec(aKeyring(['k1'])).encode([defaultPayloadConverter.toPayload(7)]), { Origin: UI });
      expect(answer.headers['access-control-allow-origin']).toBe(UI);
      expect(defaultPayloadConverter.fromPayload(payloadsOf(answer)[0]!)).toBe(7);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['no keys', args, {}, /no payload keys: set AUTONODE_PAYLOAD_KEYS_FILE/],
    ['a reachable host without a token', { ...args, host: '0.0.0.0' }, { AUTONODE_PAYLOAD_KEYS: keys }, /--host 0\.0\.0\.0 is reachable from other machines .* set a bearer token/],
    ['an origin with a path', { ...args, allowedOrigin: ['http://ui.example/app'] }, { AUTONODE_PAYLOAD_KEYS: keys }, /--allowed-origin\.0: must be an origin/],
    ['a bad port', { ...args, port: '70000' }, { AUTONODE_PAYLOAD_KEYS: keys }, /--port: /],
  ])('refuses %s', async (_, raw, env, message) => {
    await expect(startCodecServerFromArgs(raw, env, () => undefined)).rejects.toThrow(message);
  });
});
