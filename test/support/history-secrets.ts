/**
 * Issue 13, test 5: no kubeconfig, token or AWS credential in any workflow history. Every
 * event of every run on the stack's Temporal is decoded (payload bytes as UTF-8, as the UI
 * shows them) and searched for
 *  - the secrets the run knows: every kubeconfig the stack wrote (client keys, tokens) and
 *    every Secret in the management cluster (admin kubeconfigs, autonode's kubeconfigs,
 *    userData), raw, JSON-escaped and base64;
 *  - the shapes of secrets it cannot know in advance: service-account tokens (JWTs), PEM
 *    private keys, AWS access key ids and session tokens (real AWS's and moto's prefixes),
 *    credential field names.
 * Used by test/integration/history-secrets.test.ts (with a planted secret, so it can fail)
 * and by the integration global teardown (after every file, so it covers the whole run).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { type StackInfo } from '../../dev/stack/types';

export interface KnownSecret {
  label: string;
  value: string;
}

export interface SecretFinding {
  workflowId: string;
  runId: string;
  eventId: string;
  eventType: string;
  what: string;
}

/** Workflows a test starts on purpose with a secret in them (to prove the scan fails); excluded from whole-run scans. */
export const PLANTED_SECRET_PREFIX = 'autonode-test/planted-secret/';

const PATTERNS: { what: string; pattern: RegExp }[] = [
  { what: 'a JSON Web Token (service-account token)', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { what: 'a PEM private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { what: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/ },
  { what: 'an AWS session token', pattern: /\b(?:FQoGZXIvYXdzE|FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/=]{20,}/ },
  { what: 'an AWS credential field', pattern: /\b(?:secretAccessKey|SecretAccessKey|sessionToken|SessionToken|aws_secret_access_key|aws_session_token)\b/ },
  { what: 'kubeconfig credential data', pattern: /\b(?:client-key-data|client-key|token-file)\s*:/ },
];

/** Every form a secret may take inside a payload: as is, JSON-escaped, base64. */
function forms(label: string, value: string): KnownSecret[] {
  if (value.length < 12) return [];
  const escaped = JSON.stringify(value).slice(1, -1);
  const out = [{ label, value }, { label: `${label} (base64)`, value: Buffer.from(value, 'utf8').toString('base64') }];
  if (escaped !== value) out.push({ label: `${label} (JSON-escaped)`, value: escaped });
  return out;
}

function kubeconfigSecrets(label: string, text: string): KnownSecret[] {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch {
    return [];
  }
  const out: KnownSecret[] = [];
  for (const user of kc.getUsers()) {
    if (user.token) out.push(...forms(`${label}: token of ${user.name}`, user.token));
    if (user.keyData) {
      out.push(...forms(`${label}: client key of ${user.name}`, user.keyData));
      // the key's PEM body lines, which survive any escaping of the line breaks
      const pem = Buffer.from(user.keyData, 'base64').toString('utf8');
      for (const line of pem.split('\n').filter((l) => l.length >= 40 && !l.startsWith('-----'))) out.push({ label: `${label}: client key of ${user.name} (PEM line)`, value: line });
    }
  }
  return out;
}

function kubeconfigFilesUnder(dir: string, depth = 4): string[] {
  if (depth < 0) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) out.push(...kubeconfigFilesUnder(path, depth - 1));
    else if (entry.endsWith('.kubeconfig')) out.push(path);
  }
  return out;
}

/** The secrets this run can name: the stack's kubeconfigs and the management cluster's Secrets. */
export async function knownSecrets(stack: StackInfo): Promise<KnownSecret[]> {
  const out: KnownSecret[] = [];
  for (const path of new Set([stack.management.kubeconfigPath, stack.guest.kubeconfigPath, ...kubeconfigFilesUnder(stack.dir)])) {
    out.push(...kubeconfigSecrets(path, readFileSync(path, 'utf8')));
  }
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  for (const secret of (await management.core.listSecretForAllNamespaces()).items) {
    const name = `Secret ${secret.metadata?.namespace}/${secret.metadata?.name}`;
    for (const [key, encoded] of Object.entries(secret.data ?? {})) {
      const text = Buffer.from(encoded, 'base64').toString('utf8');
      const fromKubeconfig = kubeconfigSecrets(`${name} ${key}`, text);
      out.push(...fromKubeconfig, ...forms(`${name} ${key}`, text));
    }
  }
  return out;
}

/** Strings of one history event: its fields, and its payloads' bytes decoded as UTF-8. */
function textOf(value: unknown, into: string[], depth = 0): void {
  if (depth > 40 || value === null || value === undefined) return;
  if (typeof value === 'string') into.push(value);
  else if (value instanceof Uint8Array) into.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) textOf(v, into, depth + 1);
  else if (typeof value === 'object') for (const v of Object.values(value)) textOf(v, into, depth + 1);
}

export function findSecrets(text: string, known: readonly KnownSecret[]): string[] {
  const found: string[] = [];
  for (const { what, pattern } of PATTERNS) if (pattern.test(text)) found.push(what);
  for (const secret of known) if (text.includes(secret.value)) found.push(secret.label);
  return found;
}

/**
 * Scans the histories of every workflow run the query selects (default: all), `concurrency`
 * at a time. Runs deleted while the scan lists them are skipped.
 */
export async function scanHistories(client: Client, known: readonly KnownSecret[], options: { query?: string; exclude?: (workflowId: string) => boolean; concurrency?: number } = {}): Promise<{ runs: number; events: number; findings: SecretFinding[] }> {
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const wf of client.workflow.list(options.query ? { query: options.query } : {})) {
    if (!options.exclude?.(wf.workflowId)) runs.push({ workflowId: wf.workflowId, runId: wf.runId });
  }
  const findings: SecretFinding[] = [];
  let events = 0;
  let next = 0;
  const scanOne = async () => {
    for (let i = next++; i < runs.length; i = next++) {
      const run = runs[i];
      if (!run) continue;
      let history;
      try {
        history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || /not found/i.test(String(err))) continue;
        throw err;
      }
      for (const event of history.events ?? []) {
        events += 1;
        const parts: string[] = [];
        textOf(event, parts);
        for (const what of findSecrets(parts.join('\n'), known)) {
          findings.push({ ...run, eventId: String(event.eventId), eventType: String(event.eventType), what });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, scanOne));
  return { runs: runs.length, events, findings };
}

export function describeFindings(findings: readonly SecretFinding[]): string {
  return findings.map((f) => `${f.workflowId} (run ${f.runId}) event ${f.eventId} ${f.eventType}: ${f.what}`).join('\n');
}
