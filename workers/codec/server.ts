import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Payload, type PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { isPayloadDecryptionError, isPayloadKeyNotFoundError } from './aes-gcm-codec';

/**
 * Temporal's remote codec protocol, so the Web UI and `temporal … --codec-endpoint` can show
 * decoded payloads to an operator who runs this with the keys: `POST …/encode` and
 * `POST …/decode` (at any depth, e.g. `/{namespace}/decode`) with
 * `{"payloads": [{"metadata": {"k": "<base64>"}, "data": "<base64>"}]}` (proto3 JSON: every
 * bytes value is base64), answered in the same shape. `X-Namespace` names the namespace.
 */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** browser origins (the Temporal UI's, e.g. http://127.0.0.1:8233) allowed to call; exact match. None: only clients that send no Origin (the CLI). */
  allowedOrigins?: readonly string[];
  /** when set, every encode/decode must carry `Authorization: Bearer <token>` */
  bearerToken?: string;
  /** when set, only requests whose X-Namespace is one of these */
  namespaces?: readonly string[];
  /** default 16 MiB */
  maxBodyBytes?: number;
  /** one line per refused or failed request (never payload contents) */
  log?: (line: string) => void;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const Base64Schema = z.string().regex(BASE64, 'must be base64');
// proto3 JSON: an empty list is left out (`temporal workflow query` without arguments sends
// `{}`), and an unknown field is an error (`{"payload": […]}` is refused, not read as none)
const PayloadsBodySchema = z.strictObject({
  payloads: z
    .array(
      z.object({
        metadata: z.record(z.string(), Base64Schema).nullish(),
        data: Base64Schema.nullish(),
      }),
    )
    .default([]),
});
type JsonPayload = z.infer<typeof PayloadsBodySchema>['payloads'][number];

// the protocol decides on the path's last segment only, so a proxy can mount it at any depth
const ROUTE = /^(?:\/[^/]+)*\/(encode|decode)$/;
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data ?? '', 'base64'),
  };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  };
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The body as text, refused past `limit` bytes. A refused body is still drained (the
 * stream keeps flowing) so the 413 reaches the client instead of a reset connection.
 */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > limit) {
        refused = true;
        reject(new HttpError(413, `body larger than ${limit} bytes`, { Connection: 'close' }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** The request handler (node:http). Exported for tests that mount it themselves. */
export function codecRequestHandler(options: CodecServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const origins = new Set(options.allowedOrigins ?? []);
  const tokenDigest = options.bearerToken === undefined ? undefined : digest(options.bearerToken);
  const namespaces = options.namespaces && options.namespaces.length > 0 ? new Set(options.namespaces) : undefined;
  const limit = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const log = options.log ?? (() => undefined);

  const authorized = (req: IncomingMessage): boolean => {
    if (!tokenDigest) return true;
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    // compared as digests: equal length, constant time
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), tokenDigest);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    if (origin !== undefined && origins.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      // the UI's "include cross-origin credentials" setting sends cookies
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    res.setHeader('Vary', 'Origin');
    const route = ROUTE.exec(new URL(req.url ?? '/', 'http://codec.invalid').pathname)?.[1];
    if (!route) throw new HttpError(404, 'not found: POST /encode or /decode');
    if (origin !== undefined && !origins.has(origin)) throw new HttpError(403, `origin ${origin} is not allowed (autonode codec-server --allowed-origin)`);
    if (req.method === 'OPTIONS') {
      // the browser's preflight carries no credentials: answer it before the token check
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'POST, OPTIONS', 'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': '600' });
      res.end();
      return;
    }
    if (req.method !== 'POST') throw new HttpError(405, `${req.method ?? '?'} not allowed: POST`, { Allow: 'POST, OPTIONS' });
    if (!authorized(req)) throw new HttpError(401, 'missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer realm="autonode-codec"' });
    const namespace = req.headers['x-namespace'];
    if (namespaces && (typeof namespace !== 'string' || !namespaces.has(namespace))) {
      throw new HttpError(403, `namespace ${typeof namespace === 'string' ? `"${namespace}"` : '(no X-Namespace header)'} is not served here (serves: ${[...namespaces].join(', ')})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(await readBody(req, limit));
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError(400, 'body is not JSON: expected {"payloads": [...]}');
    }
    const body = PayloadsBodySchema.safeParse(json);
    if (!body.success) throw new HttpError(400, `body: ${body.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`);
    const payloads = body.data.payloads.map(fromJson);
    let result: Payload[];
    try {
      result = route === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
    } catch (err) {
      if (isPayloadKeyNotFoundError(err) || isPayloadDecryptionError(err)) throw new HttpError(422, err.message);
      throw err;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ payloads: result.map(toJson) }));
  };

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      log(`codec server: ${req.method ?? '?'} ${req.url ?? '?'} → ${status}: ${message}`);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...(err instanceof HttpError ? err.headers : {}) });
      res.end(`${message}\n`);
    });
  };
}

export interface RunningCodecServer {
  server: Server;
  /** http://host:port */
  url: string;
  close(): Promise<void>;
}

/** Listens on host:port (port 0: any free one) and resolves once bound. */
export async function startCodecServer(options: CodecServerOptions & { host: string; port: number }): Promise<RunningCodecServer> {
  const server = createServer(codecRequestHandler(options));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`codec server: not listening on TCP (${String(address)})`);
  const { port } = address;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
