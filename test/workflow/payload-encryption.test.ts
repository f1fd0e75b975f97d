// Issue 16: histories hold no plaintext cluster data. A real nodeclaim workflow runs its
// whole life (launch → register → initialize → expire → drain → terminate) with the
// payload codec on in its workers and client; then its raw history, read through the
// Temporal API by a client without the codec, is searched for the cluster's and the
// claim's names and the instance's identity, and decoded with the codec to find them.
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { ApplicationFailure, type Payload, type PayloadCodec } from '@temporalio/common';
import { type temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../workers/codec/aes-gcm-codec';
import { autonodeDataConverter } from '../../workers/codec/data-converter';
import { HOUR, instance, startTimeSkipping, type TimeSkippingHarness } from './support';
import { aKeyring, aKeyringFile } from '../support/payload-keys';

jest.setTimeout(120_000);

// what the workers and clients get from AUTONODE_PAYLOAD_KEYS: the codec, and failures encoded
const dataConverter = autonodeDataConverter({ AUTONODE_PAYLOAD_KEYS: JSON.stringify(aKeyringFile(['2026-11'])) });
const codec: PayloadCodec = dataConverter.payloadCodecs![0]!;
let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping({ dataConverter });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const CLUSTER = 'payload-secret-cluster';
const CLAIM = 'spot-secret-x7k2p';
/** what the history must not show in the clear: the names and what EC2 and the kubelet reported */
const PLAINTEXTS = [CLUSTER, CLAIM, instance.instanceId, instance.privateDnsName, instance.providerId];

interface Found {
  /** every payload outside search attributes, with the path it was found at */
  payloads: { path: string; payload: Payload }[];
  /** every string and bytes value outside search attributes, as the UI would show them */
  text: string[];
  /** the search attributes' bytes: Temporal indexes these, so they are never encoded */
  searchAttributeText: string[];
}

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
const isPayload = (v: object): v is Payload =>
  ('data' in v && isBytes(v.data)) || ('metadata' in v && typeof v.metadata === 'object' && v.metadata !== null && Object.values(v.metadata).every(isBytes) && Object.keys(v.metadata).length > 0);

function walk(value: unknown, path: string, found: Found, inSearchAttributes = false): void {
  if (value === null || value === undefined) return;
  const into = inSearchAttributes ? found.searchAttributeText : found.text;
  if (typeof value === 'string') into.push(value);
  else if (isBytes(value)) into.push(Buffer.from(value).toString('latin1'));
  else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`, found, inSearchAttributes));
  else if (typeof value === 'object') {
    if (!inSearchAttributes && isPayload(value)) found.payloads.push({ path, payload: value });
    for (const [key, v] of Object.entries(value)) walk(v, `${path}.${key}`, found, inSearchAttributes || key === 'searchAttributes');
  }
}

function readHistories(histories: { runId: string; history: temporal.api.history.v1.IHistory }[]): Found {
  const found: Found = { payloads: [], text: [], searchAttributeText: [] };
  for (const { runId, history } of histories) {
    for (const event of history.events ?? []) walk(event, `run ${runId} event ${String(event.eventId)} ${String(event.eventType)}`, found);
  }
  return found;
}

const utf8 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

describe('payload encryption on a nodeclaim workflow (time-skipping)', () => {
  let workflowId: string;
  let histories: { runId: string; history: temporal.api.history.v1.IHistory }[];
  let raw: Found;

  beforeAll(async () => {
    const run = await h.run(
      { claim: () => ({ exists: true, deleting: false, createdAt: 0, expireAfterMs: HOUR }) },
      { cluster: { name: CLUSTER, region: 'us-east-1' }, nodeClaim: { name: CLAIM, uid: 'uid-secret' } },
    );
    expect(run.result.end).toEqual({ kind: 'expired' });
    // the activities saw the real values: the codec is transparent to the workflow
    expect(run.calls.find((c) => c.name === 'launchClaimInstance')?.input).toEqual(expect.objectContaining({ cluster: expect.objectContaining({ name: CLUSTER }) }));
    workflowId = run.workflowId;
    // every run (the workflow continues as new once it knows the claim's uid), read by a
    // client without the codec, on a plain connection: the histories as the server stores them
    const runIds = [...new Set(run.calls.map((c) => c.runId))];
    expect(runIds.length).toBeGreaterThanOrEqual(2);
    const plain = new Client({ connection: h.env.connection, namespace: h.env.namespace ?? 'default' });
    histories = await Promise.all(runIds.map(async (runId) => ({ runId, history: await plain.workflow.getHandle(workflowId, runId).fetchHistory() })));
    raw = readHistories(histories);
  });

  it('the raw history names neither the cluster, the claim nor the instance anywhere but in search attributes', () => {
    expect(raw.payloads.length).toBeGreaterThan(10);
    const text = raw.text.join('\n');
    for (const secret of PLAINTEXTS) {
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
      expect({ secret, base64: text.includes(Buffer.from(secret).toString('base64')) }).toEqual({ secret, base64: false });
    }
    // Search attributes are indexed by the server and never pass through a codec: the
    // cluster's name is there by design (AutoNodeCluster), and is the only place.
    expect(raw.searchAttributeText.join('\n')).toContain(CLUSTER);
  });

  it('every payload in the history is encrypted, under the primary key, but the patch markers', () => {
    const notEncrypted = raw.payloads.filter(({ payload }) => utf8(payload.metadata?.encoding) !== ENCRYPTED_ENCODING || utf8(payload.metadata?.[KEY_ID_METADATA]) !== '2026-11');
    // patched() markers are written by the SDK's core, past the codec: they carry the patch id only
    const patchMarkers = notEncrypted.filter(({ path }) => /\.markerRecordedEventAttributes\.details\.patch-data\.payloads\[0\]$/.test(path));
    expect(patchMarkers.length).toBeGreaterThan(0);
    for (const { payload } of patchMarkers) expect(Object.keys(JSON.parse(utf8(payload.data)) as object).sort()).toEqual(['deprecated', 'id']);
    expect(notEncrypted.filter((p) => !patchMarkers.includes(p)).map(({ path, payload }) => `${path}: ${utf8(payload.metadata?.encoding)}`)).toEqual([]);
  });

  it('a client without the codec cannot read the result; one with it can', async () => {
    const plain = new Client({ connection: h.env.connection, namespace: h.env.namespace ?? 'default' });
    await expect(plain.workflow.getHandle(workflowId).result()).rejects.toThrow(/binary\/encrypted/);
    expect(await h.env.client.workflow.getHandle(workflowId).result()).toEqual(expect.objectContaining({ end: { kind: 'expired' } }));
  });

  it('decoded with the codec, the same payloads hold the cluster, the claim and the instance', async () => {
    const decoded = await codec.decode(raw.payloads.map((p) => p.payload));
    const text = decoded.map((p) => utf8(p.data)).join('\n');
    for (const secret of PLAINTEXTS) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: true });
    // the first run's input, as the client sent it
    const input = raw.payloads.findIndex(({ path }) => /workflowExecutionStartedEventAttributes\.input\.payloads\[0\]$/.test(path));
    expect(JSON.parse(utf8(decoded[input]?.data))).toEqual(expect.objectContaining({ cluster: { name: CLUSTER, region: 'us-east-1' }, nodeClaim: { name: CLAIM, uid: 'uid-secret' } }));
  });

  it('the encrypted history replays on a worker with the keys, and not on one without them', async () => {
    for (const { history } of histories) {
      await expect(Worker.runReplayHistory({ workflowBundle: h.workflowBundle, dataConverter }, history)).resolves.toBeUndefined();
    }
    const first = histories[0]!.history;
    // the sandbox cannot read the input ("Unknown encoding: binary/encrypted"); the bundle's
    // failure converter encodes that message, so only the replay's failure shows here
    await expect(Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, first)).rejects.toThrow(/Replay failed due workflow task failure.*Encoded failure/);
    const otherKeys = new AesGcmPayloadCodec(aKeyring(['2026-05']));
    await expect(Worker.runReplayHistory({ workflowBundle: h.workflowBundle, dataConverter: { payloadCodecs: [otherKeys] } }, first)).rejects.toThrow(/2026-11.*which is not in this process's keyring \(it has: 2026-05\)/);
  });
});

describe('failures under payload encryption (time-skipping)', () => {
  it('a failed launch keeps only its type in the clear: message and stack trace are encrypted, and the workflow still reads them', async () => {
    const message = `EC2 refused the launch of ${CLAIM} in ${CLUSTER}: subnet of ${instance.instanceId} is full`;
    const run = await h.run(
      { launch: () => { throw ApplicationFailure.nonRetryable(message, 'InvalidRequest'); } },
      { cluster: { name: CLUSTER, region: 'us-east-1' }, nodeClaim: { name: CLAIM, uid: 'uid-secret' } },
    );
    // the workflow decoded the failure: its result carries the message
    expect(run.result.end).toEqual({ kind: 'launchFailed', reason: message });

    const plain = new Client({ connection: h.env.connection, namespace: h.env.namespace ?? 'default' });
    const runIds = [...new Set(run.calls.map((c) => c.runId))];
    const histories = await Promise.all(runIds.map(async (runId) => ({ runId, history: await plain.workflow.getHandle(run.workflowId, runId).fetchHistory() })));
    const text = readHistories(histories).text.join('\n');
    for (const secret of [CLAIM, CLUSTER, instance.instanceId]) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });

    const failed = histories.flatMap(({ history }) => history.events ?? []).filter((e) => e.activityTaskFailedEventAttributes);
    expect(failed).toHaveLength(1);
    const failure = failed[0]!.activityTaskFailedEventAttributes!.failure!;
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace ?? '').toBe('');
    expect(failure.applicationFailureInfo?.type).toBe('InvalidRequest');
    expect(utf8(failure.encodedAttributes?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    const [attributes] = await codec.decode([failure.encodedAttributes!]);
    expect(JSON.parse(utf8(attributes!.data))).toEqual({ message, stack_trace: expect.any(String) });
  });
});
