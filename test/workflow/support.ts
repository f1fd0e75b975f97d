// Time-skipping workflow tests: the real nodeclaim workflow on Temporal's test server (time
// advances by itself whenever every workflow waits on a timer), with its activities
// replaced by a scripted world. Timers and endings are tested in seconds, not minutes;
// the real-stack integration tests cover the activities themselves.
import { Context } from '@temporalio/activity';
import { WorkflowClient } from '@temporalio/client';
import { type DataConverter } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EnablementActivities } from '../../activities/enablement/activity';
import type { NodeClaimCloudActivities } from '../../activities/nodeclaim/cloud';
import type { NodeClaimKubeActivities, PreparedClaim } from '../../activities/nodeclaim/kube';
import { autonodeSearchAttributes } from '../../workflows/search-attributes';
import { nodeClaimWorkflowId, type LaunchOutcome, type LaunchedInstance, type NodeClaimResult, type NodeClaimWorkflowInput } from '../../core/lifecycle';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The test server the setup installs (scripts/setup.sh `test_server`), or TEMPORAL_TEST_SERVER_PATH. */
export function testServerPath(): string {
  if (process.env.TEMPORAL_TEST_SERVER_PATH) return process.env.TEMPORAL_TEST_SERVER_PATH;
  const versions = readFileSync(join(__dirname, '..', '..', 'scripts', 'stack-versions.env'), 'utf8');
  const version = /^TEMPORAL_TEST_SERVER_VERSION=(.+)$/m.exec(versions)?.[1]?.trim();
  const path = join(process.env.AUTONODE_CACHE ?? join(homedir(), '.cache', 'autonode'), `temporal-test-server-${version}`, 'bin', 'temporal-test-server');
  if (!existsSync(path)) throw new Error(`Temporal's time-skipping test server is not at ${path}: run \`npm run setup\` (or set TEMPORAL_TEST_SERVER_PATH)`);
  return path;
}

export const instance: LaunchedInstance = {
  providerId: 'aws:///us-east-1a/i-0123456789abcdef0',
  instanceId: 'i-0123456789abcdef0',
  instanceType: 'm5.large',
  zone: 'us-east-1a',
  capacityType: 'on-demand',
  imageId: 'ami-0123',
  privateDnsName: 'ip-10-0-0-7.ec2.internal',
  privateIpAddresses: ['10.0.0.7'],
  launchTime: '2026-01-01T00:00:00Z',
};

/**
 * The world the fake activities report, as functions of the (skipped) server time at which
 * each activity was scheduled: a test says "the node is Ready from minute 3" or "the PDB
 * lets go after two days" and the workflow sees exactly that.
 */
export interface Script {
  claim?: (now: number) => { exists: boolean; deleting: boolean; createdAt?: number; expireAfterMs?: number; terminationGraceMs?: number };
  /** throw to fail the launch (e.g. an ApplicationFailure); default: launches `instance` */
  launch?: (now: number) => LaunchOutcome;
  registeredAt?: number;
  node?: (now: number) => { exists: boolean; deleting?: boolean; ready: 'True' | 'False' | 'Unknown' | 'Missing'; readySince?: number; blocker?: string };
  drain?: (now: number, pastDeadline: boolean) => { done: boolean; blockers?: string };
}

export interface Call {
  name: string;
  at: number;
  runId: string;
  input: unknown;
}

export function scriptedActivities(script: Script, calls: Call[]) {
  const record = (name: string, input: unknown) => {
    const info = Context.current().info;
    const at = info.currentAttemptScheduledTimestampMs;
    calls.push({ name, at, runId: info.workflowExecution?.runId ?? '', input });
    return at;
  };
  const claimAt = (now: number) => script.claim?.(now) ?? { exists: true, deleting: false };
  const nodeAt = (now: number) => script.node?.(now) ?? { exists: true, ready: 'True' as const };
  const kube: NodeClaimKubeActivities = {
    async prepareClaim(input) {
      const c = claimAt(record('prepareClaim', input));
      const prepared: PreparedClaim = { exists: c.exists, deleting: c.deleting, uid: 'uid-1', nodePool: 'default' };
      if (c.createdAt !== undefined) prepared.createdAt = c.createdAt;
      if (c.expireAfterMs !== undefined) prepared.expireAfterMs = c.expireAfterMs;
      if (c.terminationGraceMs !== undefined) prepared.terminationGraceMs = c.terminationGraceMs;
      return prepared;
    },
    async observeClaim(input) {
      const now = record('observeClaim', input);
      const c = claimAt(now);
      const n = nodeAt(now);
      return { gone: !c.exists, deleting: c.deleting, nodeExists: n.exists, nodeDeleting: n.deleting ?? false };
    },
    async reviewRegistration(input) {
      const now = record('reviewRegistration', input);
      const registered = now >= (script.registeredAt ?? 0);
      return registered ? { registered, nodeName: 'ip-10-0-0-7.ec2.internal', denied: [] } : { registered, denied: [] };
    },
    async reviewInitialization(input) {
      const n = nodeAt(record('reviewInitialization', input));
      const ready = { status: n.ready, ...(n.readySince !== undefined ? { since: new Date(n.readySince).toISOString() } : {}) };
      if (n.ready === 'True' && !n.blocker) return { initialized: true, ready };
      return { initialized: false, blocker: n.blocker ?? 'node is not Ready', ready };
    },
    async startDrain(input) {
      record('startDrain', input);
    },
    async drainPods(input) {
      const now = record('drainPods', input);
      return script.drain?.(now, input.pastDeadline) ?? { done: true };
    },
    async checkVolumes(input) {
      record('checkVolumes', input);
      return { detached: true, attachments: [] };
    },
    async finalizeClaim(input) {
      record('finalizeClaim', input);
    },
  };
  const cloud: NodeClaimCloudActivities = {
    async reconcileNodeClass(input) {
      record('reconcileNodeClass', input);
      return { nodeClass: 'default', ready: true };
    },
    async launchClaimInstance(input) {
      const now = record('launchClaimInstance', input);
      return script.launch ? script.launch(now) : instance;
    },
    async terminateClaimInstance(input) {
      record('terminateClaimInstance', input);
      return { outcome: 'terminated' };
    },
  };
  return { kube, cloud };
}

export interface RunOptions {
  /**
   * Advance server time in steps of this duration (env.sleep) until the workflow ends,
   * instead of letting it skip freely while waiting on the result. Needed when another
   * workflow waits without a timer (a provisioner between doorbells): when the claim ends,
   * free skipping would jump straight to that workflow's run timeout.
   */
  step?: string;
}

export interface TimeSkippingHarness {
  env: TestWorkflowEnvironment;
  /** the workflows, bundled once: for a test's own workers (e.g. a provisioner the claims signal) */
  workflowBundle: { code: string };
  /** runs one nodeclaim workflow to its end against the script; returns its result, the calls, and every run's history length */
  run(script: Script, input?: Partial<NodeClaimWorkflowInput>, resume?: unknown, options?: RunOptions): Promise<{ result: NodeClaimResult; calls: Call[]; historyLengths: number[]; workflowId: string }>;
  close(): Promise<void>;
}

let counter = 0;

export interface TimeSkippingOptions {
  /** for the environment's client and every worker `run` makes (e.g. payload encryption); default Temporal's own */
  dataConverter?: DataConverter;
}

export async function startTimeSkipping(options: TimeSkippingOptions = {}): Promise<TimeSkippingHarness> {
  const converter = options.dataConverter ? { dataConverter: options.dataConverter } : {};
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch (err) {
    if (!(err instanceof Error && /already/i.test(err.message))) throw err;
  }
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: testServerPath() } }, client: converter });
  // the workflows upsert autonode's typed search attributes; every attribute is a KEYWORD (2)
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(autonodeSearchAttributes.map((key) => [key.name, 2])),
  });
  // a failure converter of the DataConverter runs inside the workflows too: it is bundled with them
  const failureConverterPath = options.dataConverter?.failureConverterPath;
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN'), ...(failureConverterPath ? { failureConverterPath } : {}) });
  return {
    env,
    workflowBundle,
    async run(script, input = {}, resume, options = {}) {
      const id = `ts-${++counter}`;
      const taskQueues = { control: `control-${id}`, cloud: `cloud-${id}` };
      const calls: Call[] = [];
      const { kube, cloud } = scriptedActivities(script, calls);
      const control = await Worker.create({ connection: env.nativeConnection, taskQueue: taskQueues.control, workflowBundle, activities: kube, ...converter });
      const cloudWorker = await Worker.create({ connection: env.nativeConnection, taskQueue: taskQueues.cloud, activities: cloud, ...converter });
      const workflowId = nodeClaimWorkflowId('ts', id);
      const args: NodeClaimWorkflowInput = {
        cluster: { name: 'ts', region: 'us-east-1' },
        taskQueues,
        nodeClaim: { name: id, uid: 'uid-1' },
        ...input,
      };
      const work = (async () => {
        const handle = await env.client.workflow.start('nodeClaimWorkflow', { taskQueue: taskQueues.control, workflowId, args: resume === undefined ? [args] : [args, resume] });
        // result() follows the continue-as-new chain to its end
        const result = (await (options.step === undefined ? handle.result() : resultInSteps(env, workflowId, options.step, converter))) as NodeClaimResult;
        const runIds = [...new Set(calls.map((c) => c.runId))];
        const historyLengths: number[] = [];
        for (const runId of runIds) {
          const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
          historyLengths.push(history.events?.length ?? 0);
        }
        return { result, calls, historyLengths, workflowId };
      })();
      return control.runUntil(cloudWorker.runUntil(work));
    },
    close: () => env.teardown(),
  };
}

/** Steps server time until the workflow's latest run is closed, then reads its result without unlocking time skipping. */
async function resultInSteps(env: TestWorkflowEnvironment, workflowId: string, step: string, converter: { dataConverter?: DataConverter }): Promise<unknown> {
  const plain = new WorkflowClient({ connection: env.connection, namespace: env.namespace ?? 'default', ...converter });
  for (;;) {
    const { status } = await plain.getHandle(workflowId).describe();
    if (status.name !== 'RUNNING') return plain.getHandle(workflowId).result();
    await env.sleep(step);
  }
}

export const named = (calls: Call[], name: string) => calls.filter((c) => c.name === name);

/**
 * The enablement activities of a healthy HostedCluster `name` (clusters/<name>) that
 * reconciles without change and tears down at once; a test replaces the ones it scripts.
 */
export function enablementActivities(name: string, overrides: Partial<EnablementActivities> = {}): EnablementActivities {
  return {
    observeHostedCluster: async () => ({ state: 'ok', deleting: false, config: { infraID: name, region: 'us-east-1', roleARN: `arn:aws:iam::123456789012:role/${name}`, releaseImage: 'quay.io/x:1', generation: 1 } }),
    enableGuest: async () => ({
      kubeconfigSecret: { namespace: 'clusters', name: `${name}-autonode-kubeconfig`, key: 'kubeconfig' },
      tokenExpiresAt: new Date(Date.now() + 24 * HOUR).toISOString(),
      tokenRenewAfter: new Date(Date.now() + 12 * HOUR).toISOString(),
    }),
    reconcileNodeClasses: async () => ({ images: { amd64: 'ami-0123' }, userDataHash: 'abc', created: [], updated: [], classes: 1 }),
    startClusterWorkflows: async () => undefined,
    syncInterruption: async () => undefined,
    reportHostedCluster: async () => ({ nodeCount: 0, nodeClaimCount: 0, vCPUs: 0 }),
    stopProvisioning: async () => undefined,
    removeNodeClaims: async () => ({ nodeClaims: 0, instances: 0 }),
    disableGuest: async () => undefined,
    ...overrides,
  };
}
