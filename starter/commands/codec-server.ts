// `autonode codec-server`: Temporal's remote codec endpoint over the workers' payload keys,
// so an operator who holds the keys sees decoded payloads in the Temporal Web UI
// (Settings → Codec Server, or the UI server's codec endpoint) and with
// `temporal workflow show --codec-endpoint …`.
import { readFileSync } from 'node:fs';
import { type Command } from 'commander';
import { z } from 'zod';
import { AesGcmPayloadCodec } from '../../workers/codec/aes-gcm-codec';
import { loadPayloadKeyring } from '../../workers/codec/keyring';
import { startCodecServer, type RunningCodecServer } from '../../workers/codec/server';

/** What a browser sends as Origin: scheme, host and port only. */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

const CodecServerArgsSchema = z.object({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  allowedOrigin: z.array(z.string().transform((u) => u.replace(/\/+$/, '')).refine(isOrigin, 'must be an origin: http(s)://host[:port], no path')),
  namespace: z.array(z.string().min(1)),
  keysFile: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
});
export type CodecServerArgs = z.input<typeof CodecServerArgsSchema>;

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * Starts the codec server from the command line's options and the environment
 * (AUTONODE_PAYLOAD_KEYS_FILE / AUTONODE_PAYLOAD_KEYS; AUTONODE_CODEC_SERVER_TOKEN).
 * Anyone who can reach it can decrypt: off loopback it requires a bearer token.
 */
export async function startCodecServerFromArgs(raw: CodecServerArgs, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<RunningCodecServer> {
  const parsed = CodecServerArgsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`codec-server: ${parsed.error.issues.map((i) => `--${i.path.map(String).join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${i.message}`).join('; ')}`);
  const args = parsed.data;
  const keyring = loadPayloadKeyring(args.keysFile ? { AUTONODE_PAYLOAD_KEYS_FILE: args.keysFile } : { AUTONODE_PAYLOAD_KEYS_FILE: env.AUTONODE_PAYLOAD_KEYS_FILE, AUTONODE_PAYLOAD_KEYS: env.AUTONODE_PAYLOAD_KEYS });
  if (!keyring) throw new Error('codec-server: no payload keys: set AUTONODE_PAYLOAD_KEYS_FILE (or AUTONODE_PAYLOAD_KEYS), or pass --keys-file');
  const token = args.tokenFile ? readFileSync(args.tokenFile, 'utf8').trim() : env.AUTONODE_CODEC_SERVER_TOKEN?.trim();
  if (token === '') throw new Error(`codec-server: the bearer token (${args.tokenFile ?? 'AUTONODE_CODEC_SERVER_TOKEN'}) is empty`);
  if (!token && !isLoopback(args.host)) {
    throw new Error(`codec-server: --host ${args.host} is reachable from other machines and anyone who reaches it can decrypt: set a bearer token (--token-file or AUTONODE_CODEC_SERVER_TOKEN), or listen on 127.0.0.1 behind an authenticating proxy`);
  }
  const server = await startCodecServer({
    codec: new AesGcmPayloadCodec(keyring),
    host: args.host,
    port: args.port,
    allowedOrigins: args.allowedOrigin,
    namespaces: args.namespace,
    ...(token ? { bearerToken: token } : {}),
    log,
  });
  log(`codec server on ${server.url}: POST /encode, /decode`);
  log(`  keys ${keyring.ids.join(', ')} (primary ${keyring.primaryId}); bearer token ${token ? 'required' : 'not required'}; namespaces ${args.namespace.length > 0 ? args.namespace.join(', ') : 'any'}`);
  log(args.allowedOrigin.length > 0 ? `  browser origins: ${args.allowedOrigin.join(', ')}` : '  no --allowed-origin: browsers (the Temporal UI) cannot call it, the CLI can');
  return server;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerCodecServerCommand(program: Command): void {
  program
    .command('codec-server')
    .description("serve Temporal's remote codec endpoint (POST /encode, /decode) with the payload keys, for the Web UI and `temporal --codec-endpoint`")
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on', '8888')
    .option('--allowed-origin <origin>', "a browser origin allowed to call it, e.g. the Temporal UI's http://127.0.0.1:8233 (repeatable)", collect, [])
    .option('--namespace <namespace>', 'serve only this Temporal namespace (X-Namespace; repeatable; default any)', collect, [])
    .option('--keys-file <path>', 'the keyring file (default AUTONODE_PAYLOAD_KEYS_FILE, or AUTONODE_PAYLOAD_KEYS inline)')
    .option('--token-file <path>', 'require `Authorization: Bearer <token>` with the token in this file (default AUTONODE_CODEC_SERVER_TOKEN)')
    .action(async (raw: CodecServerArgs) => {
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const server = await startCodecServerFromArgs(raw, process.env, say);
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
      });
      await server.close();
    });
}
