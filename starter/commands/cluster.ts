// `autonode enable|disable <namespace>/<name>` and `autonode status [<namespace>/<name>]`:
// the operator's starter. It sets (or removes) the HostedCluster's spec.autoNode in the
// management cluster and starts or signals the cluster's enablement workflow; status reads
// the workflows' `status` queries. Talks to Temporal (TEMPORAL_ADDRESS, with the workers'
// payload keys when they encrypt: AUTONODE_PAYLOAD_KEYS_FILE) and the management cluster
// (--kubeconfig / KUBECONFIG).
import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type Command } from 'commander';
import { z } from 'zod';
import { HOSTED_CLUSTERS } from '../../activities/enablement/activity';
import { kubeClientsFromConfig, kubeClientsFromKubeconfigString, type KubeClients } from '../../activities/kube/clients';
import { apiStatus } from '../../activities/kube/errors';
import { FEATURE_GATE_DISABLED_REASON } from '../../core/enablement/management-watch';
import { HostedClusterSchema, INTERRUPTION_QUEUE_ANNOTATION, autonodeKubeconfigSecret, parseRoleArn } from '../../core/hostedcluster';
import { PLANNED_PRICE_ANNOTATION } from '../../core/provisioning/nodeclaims';
import { defaultTaskQueues, enablementWorkflowId } from '../../core/lifecycle';
import { autonodeDataConverter } from '../../workers/codec/data-converter';
import { connectClient } from '../../workers/temporal-connection';
import type { EnablementStatus } from '../../workflows/enablement';

export interface ClusterCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface ClusterCommandDeps {
  temporal: Client;
  management: KubeClients;
  io: ClusterCommandIo;
  /** poll interval while waiting (ms) */
  pollMs?: number;
  /** give up waiting after (ms) */
  waitMs?: number;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function parseHostedClusterRef(text: string): { namespace: string; name: string } {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(text);
  if (!m?.[1] || !m[3]) throw new Error(`"${text}" is not <namespace>/<name> of a HostedCluster (e.g. clusters/dev)`);
  return { namespace: m[1], name: m[3] };
}

async function readHostedCluster(management: KubeClients, hc: { namespace: string; name: string }): Promise<unknown> {
  try {
    return await management.customObjects.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name });
  } catch (err) {
    if (apiStatus(err) === 404) throw new Error(`HostedCluster ${hc.namespace}/${hc.name} not found in the management cluster (check --kubeconfig and the name)`);
    throw err;
  }
}

/**
 * Sets spec.autoNode (Karpenter on AWS, with the role autonode assumes for the cluster) and
 * starts the enablement workflow, or signals the running one: idempotent.
 */
export async function enableCluster(deps: ClusterCommandDeps, ref: string, options: { roleArn: string; interruptionQueue?: string; wait?: boolean }): Promise<EnablementStatus | undefined> {
  const hc = parseHostedClusterRef(ref);
  const role = parseRoleArn(options.roleArn);
  if (!role.ok) throw new Error(`--role-arn ${options.roleArn}: ${role.problem}`);
  await readHostedCluster(deps.management, hc);
  const autoNode = { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: options.roleArn } } } };
  // HyperShift's API has no field for the queue: autonode's annotation carries it (the enablement validates it)
  const metadata = options.interruptionQueue ? { metadata: { annotations: { [INTERRUPTION_QUEUE_ANNOTATION]: options.interruptionQueue } } } : {};
  await deps.management.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body: { ...metadata, spec: { autoNode } } }, mergePatch);
  deps.io.stdout(`HostedCluster ${hc.namespace}/${hc.name}: spec.autoNode set (Karpenter, AWS, role ${options.roleArn})\n`);
  if (options.interruptionQueue) deps.io.stdout(`HostedCluster ${hc.namespace}/${hc.name}: interruption queue ${options.interruptionQueue} (annotation ${INTERRUPTION_QUEUE_ANNOTATION})\n`);
  await deps.temporal.workflow.signalWithStart('enablementWorkflow', {
    taskQueue: defaultTaskQueues.control,
    workflowId: enablementWorkflowId(hc),
    args: [{ hostedCluster: hc }],
    signal: 'hostedClusterChanged',
    signalArgs: [],
  });
  deps.io.stdout(`enablement workflow ${enablementWorkflowId(hc)} started (or signalled)\n`);
  if (!options.wait) return undefined;
  return waitFor(deps, hc, (s) => s.phase === 'Enabled' || s.phase === 'Invalid' || s.phase === 'Degraded');
}

/** Removes spec.autoNode and asks the workflow to tear down; with --wait, until it has. */
export async function disableCluster(deps: ClusterCommandDeps, ref: string, options: { wait?: boolean; removeCrds?: boolean }): Promise<EnablementStatus | undefined> {
  const hc = parseHostedClusterRef(ref);
  await readHostedCluster(deps.management, hc);
  await deps.management.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body: { spec: { autoNode: null } } }, mergePatch);
  deps.io.stdout(`HostedCluster ${hc.namespace}/${hc.name}: spec.autoNode removed\n`);
  const handle = deps.temporal.workflow.getHandle(enablementWorkflowId(hc));
  try {
    await handle.signal('disable', { removeCrds: options.removeCrds ?? false });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      deps.io.stdout(`no enablement workflow is running for ${hc.namespace}/${hc.name}: nothing to tear down\n`);
      return undefined;
    }
    throw err;
  }
  deps.io.stdout('teardown requested: every NodeClaim is drained and its instance terminated, then autonode leaves the guest\n');
  if (!options.wait) return undefined;
  let last = '';
  const deadline = Date.now() + (deps.waitMs ?? 30 * 60_000);
  while (Date.now() < deadline) {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') {
      const result = (await handle.result().catch(() => undefined)) as EnablementStatus | undefined;
      deps.io.stdout(`disabled (${description.status.name.toLowerCase()})\n`);
      return result;
    }
    const status = await handle.query<EnablementStatus>('status').catch(() => undefined);
    const line = status ? progressLine(status) : '';
    if (line && line !== last) deps.io.stdout(`${line}\n`);
    last = line;
    await new Promise((r) => setTimeout(r, deps.pollMs ?? 1_000));
  }
  throw new Error(`${hc.namespace}/${hc.name} still tearing down; see autonode status ${hc.namespace}/${hc.name}`);
}

async function waitFor(deps: ClusterCommandDeps, hc: { namespace: string; name: string }, done: (s: EnablementStatus) => boolean): Promise<EnablementStatus> {
  const handle = deps.temporal.workflow.getHandle(enablementWorkflowId(hc));
  let last = '';
  const deadline = Date.now() + (deps.waitMs ?? 10 * 60_000);
  while (Date.now() < deadline) {
    const status = await handle.query<EnablementStatus>('status').catch(() => undefined);
    if (status) {
      const line = progressLine(status);
      if (line !== last) deps.io.stdout(`${line}\n`);
      last = line;
      if (done(status)) return status;
    }
    await new Promise((r) => setTimeout(r, deps.pollMs ?? 1_000));
  }
  throw new Error(`${hc.namespace}/${hc.name} did not finish enabling in time; see autonode status ${hc.namespace}/${hc.name}`);
}

/**
 * A named cluster without an enablement workflow: say why, from the HostedCluster (not
 * found; spec.autoNode set but the workers' Autoprovision gate off, as the management
 * watch reported on it).
 */
async function whyNotRunning(deps: ClusterCommandDeps, hc: { namespace: string; name: string }): Promise<EnablementStatus['problems']> {
  const read = HostedClusterSchema.safeParse(await readHostedCluster(deps.management, hc));
  const enabled = read.data?.status?.conditions?.find((c) => c.type === 'AutoNodeEnabled');
  if (read.data?.spec?.autoNode === undefined) return [];
  if (enabled?.reason === FEATURE_GATE_DISABLED_REASON) return [{ field: 'spec.autoNode', reason: enabled.reason, message: enabled.message ?? '' }];
  return [{ field: 'spec.autoNode', reason: 'NotRunning', message: `spec.autoNode is set but no enablement workflow runs: run \`autonode enable ${hc.namespace}/${hc.name} --role-arn <arn>\`, or the workers with --feature-gates=Autoprovision=true` }];
}

function progressLine(s: EnablementStatus): string {
  const steps = s.steps.map((step) => `${step.ok ? '✓' : '✗'} ${step.step}: ${step.detail}`).join('\n  ');
  const problems = s.problems.map((p) => `${p.field}: ${p.reason}: ${p.message}`).join('\n  ');
  return `[${s.phase}]${steps ? `\n  ${steps}` : ''}${problems ? `\n  ${problems}` : ''}`;
}

const GuestListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string(), creationTimestamp: z.string().optional(), deletionTimestamp: z.string().optional(), labels: z.record(z.string(), z.string()).optional(), annotations: z.record(z.string(), z.string()).optional() }),
      spec: z.object({ template: z.object({ spec: z.object({ nodeClassRef: z.object({ name: z.string() }).optional() }).optional() }).optional() }).passthrough().optional(),
      status: z.object({ nodeName: z.string().optional(), conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional(), resources: z.record(z.string(), z.string()).optional() }).passthrough().optional(),
    }),
  ),
});
type GuestItem = z.infer<typeof GuestListSchema>['items'][number];

export interface ClaimRow {
  name: string;
  pool: string;
  phase: string;
  type: string;
  zone: string;
  capacityType: string;
  /** the $/h of the offering the plan chose (annotation), when a plan made the claim */
  pricePerHour?: number;
  age: string;
}

export interface PoolRow {
  name: string;
  nodeClass: string;
  nodes: string;
  claims: number;
  pricePerHour: number;
}

/** How long ago, as kubectl prints it (45s, 12m, 3h, 2d). */
export function age(from: string | undefined, now: number): string {
  const t = from ? Date.parse(from) : NaN;
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : s < 172800 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
}

/** A NodeClaim's phase as its conditions tell it (Karpenter's order). */
function claimPhase(c: GuestItem): string {
  if (c.metadata.deletionTimestamp) return 'Deleting';
  const has = (type: string) => c.status?.conditions?.some((x) => x.type === type && x.status === 'True') ?? false;
  return has('Initialized') ? 'Initialized' : has('Registered') ? 'Registered' : has('Launched') ? 'Launched' : 'Pending';
}

/** The rows `autonode status <ns>/<name>` prints for a guest's NodePools and NodeClaims. */
export function guestRows(pools: readonly GuestItem[], claims: readonly GuestItem[], now: number): { pools: PoolRow[]; claims: ClaimRow[] } {
  const claimRows: ClaimRow[] = claims
    .map((c) => {
      const labels = c.metadata.labels ?? {};
      const price = Number(c.metadata.annotations?.[PLANNED_PRICE_ANNOTATION]);
      return {
        name: c.metadata.name,
        pool: labels['karpenter.sh/nodepool'] ?? '-',
        phase: claimPhase(c),
        type: labels['node.kubernetes.io/instance-type'] ?? '-',
        zone: labels['topology.kubernetes.io/zone'] ?? '-',
        capacityType: labels['karpenter.sh/capacity-type'] ?? '-',
        ...(Number.isFinite(price) && price > 0 ? { pricePerHour: price } : {}),
        age: age(c.metadata.creationTimestamp, now),
      };
    })
    .sort((a, b) => a.pool.localeCompare(b.pool) || a.name.localeCompare(b.name));
  const poolRows: PoolRow[] = pools
    .map((p) => {
      const mine = claimRows.filter((c) => c.pool === p.metadata.name);
      return {
        name: p.metadata.name,
        nodeClass: p.spec?.template?.spec?.nodeClassRef?.name ?? '-',
        nodes: p.status?.resources?.nodes ?? String(mine.length),
        claims: mine.length,
        pricePerHour: Math.round(mine.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0) * 1e4) / 1e4,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return { pools: poolRows, claims: claimRows };
}

function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  return `${[header, ...rows].map((row) => row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n')}\n`;
}

/** The guest as autonode's own identity sees it (the Secret the enablement wrote): its pools and claims. */
async function readGuest(deps: ClusterCommandDeps, hc: { namespace: string; name: string }): Promise<{ pools: PoolRow[]; claims: ClaimRow[] } | { unavailable: string }> {
  const ref = autonodeKubeconfigSecret(hc);
  let kubeconfig: string;
  try {
    const secret = await deps.management.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
    kubeconfig = Buffer.from(secret.data?.[ref.key] ?? '', 'base64').toString();
  } catch (err) {
    return { unavailable: `no ${ref.namespace}/${ref.name} Secret (${apiStatus(err) ?? 'unreadable'}): the cluster is not enabled, or not yet` };
  }
  try {
    const guest = kubeClientsFromKubeconfigString(kubeconfig);
    const [pools, claims] = await Promise.all([
      guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' }),
      guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }),
    ]);
    return guestRows(GuestListSchema.parse(pools).items, GuestListSchema.parse(claims).items, Date.now());
  } catch (err) {
    return { unavailable: `the guest cluster did not answer: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Every enabled cluster (running enablement workflows), or one cluster in detail. */
export async function clusterStatus(deps: ClusterCommandDeps, ref: string | undefined, output: 'table' | 'json'): Promise<void> {
  const refs: { namespace: string; name: string }[] = [];
  if (ref) refs.push(parseHostedClusterRef(ref));
  else {
    for await (const wf of deps.temporal.workflow.list({ query: `WorkflowType = 'enablementWorkflow' AND ExecutionStatus = 'Running'` })) {
      const [, namespace, name] = wf.workflowId.split('/');
      if (namespace && name) refs.push({ namespace, name });
    }
  }
  const rows: (EnablementStatus & { startedAt?: string })[] = [];
  for (const hc of refs) {
    const handle = deps.temporal.workflow.getHandle(enablementWorkflowId(hc));
    try {
      const status = await handle.query<EnablementStatus>('status');
      const description = await handle.describe();
      rows.push({ ...status, startedAt: description.startTime.toISOString() });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      rows.push({ hostedCluster: `${hc.namespace}/${hc.name}`, phase: 'Disabled', steps: [], problems: await whyNotRunning(deps, hc) });
    }
  }
  // one cluster: its pools and claims too, read as autonode's own identity
  const detail = ref && rows[0] ? await readGuest(deps, parseHostedClusterRef(ref)) : undefined;
  if (output === 'json') {
    deps.io.stdout(`${JSON.stringify(detail ? [{ ...rows[0], guest: detail }] : rows, null, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    deps.io.stdout('no cluster has AutoNode enabled (autonode enable <namespace>/<name> --role-arn …)\n');
    return;
  }
  const header = ['HOSTEDCLUSTER', 'PHASE', 'INFRAID', 'NODES', 'NODECLAIMS', 'VCPUS', 'SINCE'];
  const table = rows.map((r) => [r.hostedCluster, r.phase, r.cluster ?? '-', String(r.nodeCount ?? '-'), String(r.nodeClaimCount ?? '-'), String(r.vCPUs ?? '-'), r.startedAt ?? '-']);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] ?? '').length)));
  deps.io.stdout(`${[header, ...table].map((row) => row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n')}\n`);
  if (ref && rows[0]) deps.io.stdout(`${progressLine(rows[0])}\n`);
  if (detail && 'unavailable' in detail) deps.io.stdout(`\npools and claims: ${detail.unavailable}\n`);
  else if (detail) {
    const dollars = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(4));
    deps.io.stdout(`\n${formatTable(['NODEPOOL', 'NODECLASS', 'NODES', 'NODECLAIMS', '$/H'], detail.pools.map((p) => [p.name, p.nodeClass, p.nodes, String(p.claims), dollars(p.pricePerHour)]))}`);
    deps.io.stdout(`\n${formatTable(['NODECLAIM', 'NODEPOOL', 'PHASE', 'TYPE', 'ZONE', 'CAPACITY', '$/H', 'AGE'], detail.claims.map((c) => [c.name, c.pool, c.phase, c.type, c.zone, c.capacityType, dollars(c.pricePerHour), c.age]))}`);
    const total = detail.claims.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
    deps.io.stdout(`${detail.claims.length} NodeClaim(s), ${total.toFixed(4)} $/h as planned\n`);
  }
}

const ConnectionOptionsSchema = z.object({
  kubeconfig: z.string().optional(),
  temporalAddress: z.string().optional(),
  temporalNamespace: z.string().optional(),
});

async function withDeps<T>(raw: unknown, run: (deps: ClusterCommandDeps) => Promise<T>): Promise<T> {
  const options = ConnectionOptionsSchema.parse(raw);
  const address = options.temporalAddress ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const kc = new KubeConfig();
  const path = options.kubeconfig ?? process.env.KUBECONFIG;
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  // the workers' payload keys: the enablement's input and status query are encrypted with them
  const dataConverter = autonodeDataConverter(process.env);
  let temporal: Client;
  try {
    temporal = await connectClient({ address, namespace: options.temporalNamespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default' }, { dataConverter });
  } catch (err) {
    throw new Error(`cannot reach Temporal at ${address} (set TEMPORAL_ADDRESS or --temporal-address): ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return await run({ temporal, management: kubeClientsFromConfig(kc), io: { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) } });
  } finally {
    await temporal.connection.close();
  }
}

function connectionOptions(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'the management cluster (default KUBECONFIG)')
    .option('--temporal-address <host:port>', 'Temporal frontend (default TEMPORAL_ADDRESS, else 127.0.0.1:7233)')
    .option('--temporal-namespace <namespace>', 'Temporal namespace (default TEMPORAL_NAMESPACE, else default)');
}

export function registerClusterCommands(program: Command): void {
  connectionOptions(
    program
      .command('enable <hostedcluster>')
      .description('enable AutoNode for a HostedCluster (<namespace>/<name>): set spec.autoNode and start its enablement workflow')
      .requiredOption('--role-arn <arn>', 'the IAM role autonode assumes for this cluster (arn:aws:iam::<account>:role/<name>)')
      .option('--interruption-queue <name>', "the SQS queue EventBridge sends the cluster's spot interruption, rebalance, health and instance state-change events to (Karpenter's --interruption-queue; the role needs sqs:GetQueueUrl, sqs:ReceiveMessage, sqs:DeleteMessage on it)")
      .option('--wait', 'wait until the cluster is enabled (or invalid), printing each step'),
  ).action(async (ref: string, raw: { roleArn: string; interruptionQueue?: string; wait?: boolean }) => {
    const status = await withDeps(raw, (deps) => enableCluster(deps, ref, raw));
    if (status && status.phase !== 'Enabled') process.exitCode = 1;
  });
  connectionOptions(
    program
      .command('disable <hostedcluster>')
      .description('disable AutoNode: remove spec.autoNode; every NodeClaim is drained and terminated, then autonode leaves the guest')
      .option('--wait', 'wait until the teardown is complete')
      .option('--remove-crds', "also delete autonode's CRDs from the guest (and with them every Karpenter object)"),
  ).action(async (ref: string, raw: { wait?: boolean; removeCrds?: boolean }) => {
    await withDeps(raw, (deps) => disableCluster(deps, ref, raw));
  });
  connectionOptions(
    program
      .command('status [hostedcluster]')
      .description('clusters with AutoNode (phase, nodes, NodeClaims, vCPUs), or one cluster with its steps')
      .option('-o, --output <format>', 'table or json', 'table'),
  ).action(async (ref: string | undefined, raw: { output: string }) => {
    const output = raw.output === 'json' ? 'json' : 'table';
    await withDeps(raw, (deps) => clusterStatus(deps, ref, output));
  });
}
