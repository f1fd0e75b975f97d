/**
 * Runs test/go/csrparse: Go's own reading of certificate requests, exactly as the API
 * server and the kubelet signers read them. Built once per source version into a cache
 * outside the repository (`$AUTONODE_CACHE`, default ~/.cache/autonode), into a temporary
 * name then renamed, so concurrent jest workers never see half a binary. Missing Go fails
 * the test: a differential test that skips itself proves nothing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const programDir = join(__dirname, '..', '..', 'go', 'csrparse');

export function csrParseBinary(): string {
  const source = createHash('sha256');
  for (const file of ['main.go', 'go.mod']) source.update(readFileSync(join(programDir, file)));
  const cacheRoot = process.env.AUTONODE_CACHE ?? join(homedir(), '.cache', 'autonode');
  const dir = join(cacheRoot, `csrparse-${source.digest('hex').slice(0, 16)}`);
  const binary = join(dir, 'csrparse');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const temporary = join(dir, `csrparse.building-${process.pid}`);
  const build = spawnSync('go', ['build', '-trimpath', '-o', temporary, '.'], {
    cwd: programDir,
    env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    encoding: 'utf8',
  });
  if (build.error !== undefined) {
    throw new Error(`cannot run \`go build\` for test/go/csrparse (${build.error.message}): these tests compare autonode's CSR reading with Go's, and need Go 1.24+ on PATH`);
  }
  if (build.status !== 0) {
    rmSync(temporary, { force: true });
    throw new Error(`\`go build\` of test/go/csrparse failed:\n${build.stderr}`);
  }
  renameSync(temporary, binary);
  return binary;
}

const strings = z.array(z.string());

export const goVerdictSchema = z.object({
  id: z.string(),
  pemFound: z.boolean(),
  blockType: z.string(),
  headers: z.number(),
  restLen: z.number(),
  restHasBlock: z.boolean(),
  /** the API server would store it: first block is a CERTIFICATE REQUEST that x509 parses */
  accepted: z.boolean(),
  error: z.string().optional(),
  commonName: z.string(),
  commonNames: strings,
  organizations: strings,
  nameTypes: strings,
  dnsNames: strings,
  ipAddresses: strings,
  emailAddresses: strings,
  uris: strings,
  extensions: strings,
  publicKeyAlgorithm: z.string(),
  spkiSha256: z.string(),
  signatureAlgorithm: z.string(),
  signatureValid: z.boolean(),
  signatureError: z.string().optional(),
});

export type GoVerdict = z.infer<typeof goVerdictSchema>;

/** Whether the signer would issue a certificate for it at all. */
export const goSigns = (v: GoVerdict) => v.accepted && v.signatureValid;

function run(args: string[], input: string): string {
  const result = spawnSync(csrParseBinary(), args, { input, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (result.status !== 0) throw new Error(`csrparse ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

/** Go's verdict on each request (the raw bytes of spec.request), by id. */
export function goRead(requests: ReadonlyArray<{ id: string; request: Uint8Array }>): Map<string, GoVerdict> {
  const input = requests.map(({ id, request }) => JSON.stringify({ id, request: Buffer.from(request).toString('base64') })).join('\n');
  const verdicts = run([], input).trim().split('\n').filter((line) => line !== '').map((line) => goVerdictSchema.parse(JSON.parse(line)));
  if (verdicts.length !== requests.length) throw new Error(`csrparse answered ${verdicts.length} of ${requests.length} requests`);
  return new Map(verdicts.map((v) => [v.id, v]));
}

/** Requests made the way a kubelet makes them (Go's x509.CreateCertificateRequest), as PEM bytes. */
export function goKubeletRequests(): Array<{ id: string; request: Uint8Array }> {
  const entry = z.object({ id: z.string(), request: z.string() });
  return run(['generate'], '')
    .trim()
    .split('\n')
    .map((line) => entry.parse(JSON.parse(line)))
    .map(({ id, request }) => ({ id, request: new Uint8Array(Buffer.from(request, 'base64')) }));
}
