import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Where the payload keys come from: a keyring file, or the same JSON inline (e.g. from a
 * Kubernetes Secret through `valueFrom.secretKeyRef`). Neither set: payloads are not
 * encrypted. Shared by the worker's configuration (config.ts) and the CLI.
 */
export const PayloadKeySourceSchema = z.object({
  /** path of the keyring file (JSON, see PayloadKeyringSchema) */
  AUTONODE_PAYLOAD_KEYS_FILE: z.string().min(1).optional(),
  /** the keyring JSON itself, instead of a file */
  AUTONODE_PAYLOAD_KEYS: z.string().min(1).optional(),
});
export type PayloadKeySource = z.infer<typeof PayloadKeySourceSchema>;

const KEY_BYTES = 32;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Ids travel in every payload's metadata and in error messages: short and printable.
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The keyring file:
 *
 * ```json
 * { "primary": "2026-11", "keys": [ { "id": "2026-05", "key": "<base64, 32 bytes>" }, { "id": "2026-11", "key": "…" } ] }
 * ```
 *
 * The primary key encrypts; every key decrypts the payloads that name its id. Rotation:
 * add a key, make it primary, and keep the old one for as long as histories it encrypted
 * are kept. The messages never repeat a key's value.
 */
export const PayloadKeyringSchema = z
  .strictObject({
    primary: z.string({ error: 'required: the id of the key that encrypts new payloads' }).regex(KEY_ID, 'must be a key id: letters, digits, ".", "_" or "-", at most 64'),
    keys: z
      .array(
        z.strictObject({
          id: z.string({ error: 'required' }).regex(KEY_ID, 'must be letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)'),
          key: z
            .string({ error: 'required: 32 bytes, base64' })
            .regex(BASE64, { message: 'must be standard base64 (e.g. the output of `openssl rand -base64 32`)', abort: true })
            .refine((b64) => Buffer.from(b64, 'base64').length === KEY_BYTES, {
              message: `must decode to ${KEY_BYTES} bytes (AES-256); make one with \`openssl rand -base64 32\``,
            }),
        }),
      )
      .min(1, 'needs at least one key'),
  })
  .superRefine((ring, ctx) => {
    const first = new Map<string, number>();
    ring.keys.forEach((k, i) => {
      const earlier = first.get(k.id);
      if (earlier !== undefined) ctx.addIssue({ code: 'custom', path: ['keys', i, 'id'], message: `duplicate id "${k.id}" (also keys[${earlier}])` });
      else first.set(k.id, i);
    });
    if (!first.has(ring.primary)) ctx.addIssue({ code: 'custom', path: ['primary'], message: `"${ring.primary}" is not the id of any key (ids: ${[...first.keys()].join(', ')})` });
  });
export type PayloadKeyringFile = z.infer<typeof PayloadKeyringSchema>;

/**
 * Parsed keys, held as KeyObjects in a private field: logging or inspecting a keyring (or
 * a codec holding one) shows ids, never key material.
 */
export class PayloadKeyring {
  readonly #keys: ReadonlyMap<string, KeyObject>;

  private constructor(
    readonly primaryId: string,
    keys: ReadonlyMap<string, KeyObject>,
  ) {
    this.#keys = keys;
  }

  /** Parses keyring JSON; `source` names where it came from in the errors. */
  static parse(text: string, source: string): PayloadKeyring {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // V8's message quotes the text around the error, which may be a key: say only where.
      throw new Error(`${source}: not valid JSON (expected {"primary": "<id>", "keys": [{"id": "<id>", "key": "<base64>"}]})`);
    }
    const parsed = PayloadKeyringSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');
      throw new Error(`${source}: invalid payload keyring: ${problems}`);
    }
    return PayloadKeyring.from(parsed.data);
  }

  static from(file: PayloadKeyringFile): PayloadKeyring {
    return new PayloadKeyring(file.primary, new Map(file.keys.map((k) => [k.id, createSecretKey(Buffer.from(k.key, 'base64'))])));
  }

  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  key(id: string): KeyObject | undefined {
    return this.#keys.get(id);
  }

  primaryKey(): KeyObject {
    const key = this.#keys.get(this.primaryId);
    if (!key) throw new Error(`payload keyring: the primary key "${this.primaryId}" is missing`);
    return key;
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(keyring)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/**
 * The keyring the environment names, or undefined when none is configured (payloads are
 * then not encrypted). Throws, naming the variable, when it is set but unusable.
 */
export function loadPayloadKeyring(source: PayloadKeySource, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): PayloadKeyring | undefined {
  const { AUTONODE_PAYLOAD_KEYS_FILE: file, AUTONODE_PAYLOAD_KEYS: inline } = source;
  if (file && inline) throw new Error('set AUTONODE_PAYLOAD_KEYS_FILE or AUTONODE_PAYLOAD_KEYS, not both');
  if (inline) return PayloadKeyring.parse(inline, 'AUTONODE_PAYLOAD_KEYS');
  if (!file) return undefined;
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    // fs errors carry a code (ENOENT, EACCES); never the file's contents
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : String(err);
    throw new Error(`AUTONODE_PAYLOAD_KEYS_FILE: cannot read ${file} (${code})`);
  }
  return PayloadKeyring.parse(text, `AUTONODE_PAYLOAD_KEYS_FILE (${file})`);
}

/** A new keyring with one random key, as the keyring file's JSON (e.g. for `autonode dev`). */
export function newPayloadKeyringJson(id: string): string {
  const file: PayloadKeyringFile = { primary: id, keys: [{ id, key: randomBytes(KEY_BYTES).toString('base64') }] };
  return `${JSON.stringify(PayloadKeyringSchema.parse(file), null, 2)}\n`;
}
