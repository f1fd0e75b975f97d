// Issue 13, test 4: the worker process SIGKILLed during enablement and during teardown;
// each completes on the worker that takes over, and nothing is leaked (no instance in EC2,
// no NodeClaim, no workflow, no finalizer, no autonode identity left).
//
// The worker is a real child process (`workers/main.ts`, every queue, the production wiring:
// management cluster, STS per cluster) reaching the management API server through a TCP
// proxy that slows every byte, so the enablement's set-up step is caught in flight. The
// kubelets (in this process) boot from each instance's userData only: the nodes that join
// prove the userData and the guest identity the killed enablement left are whole.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync, readFileSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { HOSTED_CLUSTERS, autonodeKubeconfigSecret } from '../../activities/enablement/activity';
import { createEc2ClientFactory, createEc2CloudProvider, staticCredentialsProvider } from '../../activities/cloud';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { temporal } from '@temporalio/proto';
import { enablementWorkflowId } from '../../core/lifecycle';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { NODE_BOOTSTRAPPER_TOKEN_SECRET } from '../../dev/autonode/node-ignition';
import { NODE_BOOTSTRAPPER, instanceUserData, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../core/enablement/management-watch';
import { type EnablementStatus } from '../../workflows/enablement';
import { installCrds } from '../support/crds';
import { aPoolWithWorkload } from '../support/enablement';
import { eventually } from '../support/eventually';
import { forceDeleteNodeClaims } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { temporalHarness, type TemporalHarness } from '../support/temporal';
import { uniqueNetworkOctet } from '../support/network';

jest.setTimeout(900_000);

const REPO = join(__dirname, '..', '..');

describe('enablement and teardown survive a SIGKILLed worker (real process, real stack)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const hc = { namespace: `crash-${id}`, name: 'dev', infraID: `ec-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  const ref = { namespace: hc.namespace, name: hc.name };
  const roleArn = `arn:aws:iam::123456789012:role/autonode-${id}`;
  const taskQueues = { control: `crash-control-${id}`, cloud: `crash-cloud-${id}`, packing: `crash-packing-${id}` };
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  // moto's default account is the role's too: the network made with these keys is the cluster's
  const ec2 = createEc2ClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: 'loopback-only' })({ name: hc.infraID, region: hc.region });
  const cloud = createEc2CloudProvider({ ec2, cluster: { name: hc.infraID, region: hc.region } });
  const workflowId = enablementWorkflowId(ref);
  const children: ChildProcess[] = [];
  let t: TemporalHarness;
  let fleet: SimulatedKubeletFleet;
  let proxy: TcpProxy;

  beforeAll(async () => {
    await installCrds(stack.guest.kubeconfigPath);
    // the guest is this cluster's alone (the teardown deletes every NodeClaim in it)
    const leftovers = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string } }[] };
    await forceDeleteNodeClaims(guest, leftovers.items.map((c) => c.metadata.name));
    // …and its node classes: a `default` another file's enablement made selects that cluster's network
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: 'default' }).catch(() => undefined);
    await createClusterNetwork(ec2, { clusterName: hc.infraID, zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: uniqueNetworkOctet() });
    await createLocalHostedCluster(management, readFileSync(stack.guest.kubeconfigPath, 'utf8'), hc);
    t = await temporalHarness();
    fleet = new SimulatedKubeletFleet({ listInstances: () => cloud.list(), userDataOf: instanceUserData(ec2), region: hc.region, pollMs: 500 });
    fleet.start();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.management.server).port) }, { latencyMs: 300 });
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await t?.client.workflow.getHandle(workflowId).terminate('test over').catch(() => undefined);
    // its pool and pods must not outlive it: the next file's provisioner would plan them (the guest is shared)
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: `ec-${id}` }).catch(() => undefined);
    await guest.core.deleteNamespace({ name: `ec-${id}` }).catch(() => undefined);
    // the children started the management watch on this file's queues: nobody polls them after it
    await t?.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('test over').catch(() => undefined);
    await fleet?.stop();
    await proxy?.close();
    await t?.close();
    ec2.destroy();
  });

  /** A worker as operators run it: the management cluster (through `through`, or directly), every queue. */
  function spawnWorker(label: string, through?: TcpProxy): ChildProcess {
    let kubeconfig = stack.management.kubeconfigPath;
    if (through) {
      const host = new URL(stack.management.server).host;
      const text = readFileSync(stack.management.kubeconfigPath, 'utf8');
      if (!text.includes(host)) throw new Error(`the management kubeconfig does not name ${host}`);
      kubeconfig = join(stack.dir, `enablement-crash-${id}-${label}.kubeconfig`);
      writeFileSync(kubeconfig, text.split(host).join(through.address), { mode: 0o600 });
    }
    const log = openSync(join(stack.dir, `enablement-crash-${id}-${label}.log`), 'a');
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', join(REPO, 'workers', 'main.ts')], {
      cwd: REPO,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporal.address,
        TEMPORAL_NAMESPACE: stack.temporal.namespace,
        AUTONODE_MANAGEMENT_KUBECONFIG: kubeconfig,
        AWS_ENDPOINT_URL_EC2: stack.ec2.endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AUTONODE_TASK_QUEUE_CONTROL: taskQueues.control,
        AUTONODE_TASK_QUEUE_CLOUD: taskQueues.cloud,
        AUTONODE_TASK_QUEUE_PACKING: taskQueues.packing,
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    children.push(child);
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the worker already exited (${child.exitCode ?? child.signalCode})`);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  const status = () => t.client.workflow.getHandle(workflowId).query<EnablementStatus>('status');
  const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  const pendingActivities = async () => ((await t.client.workflow.getHandle(workflowId).describe()).raw.pendingActivities ?? []).map((a) => ({ type: a.activityType?.name ?? '', started: a.state === STARTED }));
  const readHc = async () => (await management.customObjects.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, ...ref })) as { metadata: { finalizers?: string[] } };
  /** how many times each activity type was started (attempts included), from the workflow's history */
  async function startedAttempts(type: string): Promise<number[]> {
    const history = await t.client.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = new Map<string, string>();
    const attempts: number[] = [];
    for (const event of history.events ?? []) {
      const s = event.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(String(event.eventId), s.activityType?.name ?? '');
      const started = event.activityTaskStartedEventAttributes;
      if (started && scheduled.get(String(started.scheduledEventId)) === type) attempts.push(started.attempt ?? 0);
    }
    return attempts;
  }

  it('a worker killed while it sets the guest up: the next one finishes the enablement, and nodes join from the userData it reconciled', async () => {
    // what `autonode enable` sets (the workflow is started below on this test's own task queues)
    await management.customObjects.patchNamespacedCustomObject(
      { ...HOSTED_CLUSTERS, ...ref, body: { spec: { autoNode: { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: roleArn } } } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const first = spawnWorker('first', proxy);
    await t.client.workflow.start('enablementWorkflow', { taskQueue: taskQueues.control, workflowId, args: [{ hostedCluster: ref, taskQueues }] });
    // caught in flight: the guest set-up (CRDs, identity, token Secret, finalizer) has started and not finished
    await eventually('enableGuest running on the first worker', async () => ((await pendingActivities()).some((a) => a.type === 'enableGuest' && a.started) ? true : undefined), 180_000);
    await kill(first);

    spawnWorker('second');
    const enabled = await eventually('the enablement to finish on the second worker', async () => {
      const s = await status();
      return s.phase === 'Enabled' ? s : undefined;
    }, 300_000);
    expect(enabled.cluster).toBe(hc.infraID);
    // the step the kill interrupted ran again (a second attempt), and left one finalizer and one identity
    expect(Math.max(...(await startedAttempts('enableGuest')))).toBeGreaterThanOrEqual(2);
    expect((await readHc()).metadata.finalizers?.filter((f) => f === 'autonode.io/enablement')).toEqual(['autonode.io/enablement']);
    await management.core.readNamespacedSecret(autonodeKubeconfigSecret(ref));

    // pending pods become nodes, booting from the userData the enablement put into the class
    const pool = `ec-${id}`;
    const namespace = `ec-${id}`;
    await aPoolWithWorkload(guest, { pool, className: 'default', taint: id, namespace, replicas: 3, types: ['m5.large'], cpu: '1' });
    await eventually('every pod Running', async () => {
      const pods = (await guest.core.listNamespacedPod({ namespace })).items;
      return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
    }, 240_000);
    expect((await cloud.list()).length).toBeGreaterThanOrEqual(3);
  });

  it('a worker killed in the middle of the teardown: the next one finishes it, and nothing is left', async () => {
    const second = children.at(-1);
    if (!second) throw new Error('the first test did not leave a worker running');
    await t.client.workflow.getHandle(workflowId).signal('disable', { removeCrds: false });
    // caught in flight: claims are being deleted, their instances not all gone
    await eventually('the teardown under way', async () => {
      const s = await status();
      return s.phase === 'Disabling' && s.remaining !== undefined && s.remaining.nodeClaims > 0 ? s : undefined;
    }, 180_000);
    await kill(second);
    expect((await cloud.list()).length).toBeGreaterThan(0);

    spawnWorker('third');
    const result = (await t.client.workflow.getHandle(workflowId).result()) as EnablementStatus;
    expect(result.phase).toBe('Disabled');

    // nothing leaked: no instance of the cluster in EC2, no NodeClaim, no workflow, no finalizer, no identity
    expect(await cloud.list()).toEqual([]);
    const claims = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: unknown[] };
    expect(claims.items).toEqual([]);
    const running: string[] = [];
    for await (const w of t.client.workflow.list({ query: `AutoNodeCluster = "${hc.infraID}" AND ExecutionStatus = "Running"` })) running.push(w.workflowId);
    expect(running).toEqual([]);
    expect((await readHc()).metadata.finalizers ?? []).not.toContain('autonode.io/enablement');
    await expect(management.core.readNamespacedSecret(autonodeKubeconfigSecret(ref))).rejects.toThrow();
    await expect(guest.core.readNamespacedServiceAccount({ namespace: 'kube-system', name: 'autonode' })).rejects.toThrow();

    // the node bootstrap token rode in every launched instance's userData, never in a history
    const bootstrapper = await guest.core.readNamespacedSecret({ namespace: NODE_BOOTSTRAPPER.namespace, name: NODE_BOOTSTRAPPER_TOKEN_SECRET });
    const token = Buffer.from(bootstrapper.data?.token ?? '', 'base64').toString('utf8');
    expect(token.length).toBeGreaterThan(20);
    // every run of every workflow of the cluster, payloads decoded (fetchHistory holds them as bytes)
    const runs: { workflowId: string; runId: string }[] = [];
    for await (const w of t.client.workflow.list({ query: `WorkflowId = '${workflowId}' OR AutoNodeCluster = "${hc.infraID}"` })) runs.push({ workflowId: w.workflowId, runId: w.runId });
    expect(runs.length).toBeGreaterThan(3);
    // payload bytes come back base64 (or as bytes): decoded, a secret in any payload would show
    const decoded = (value: unknown) =>
      JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
        const original = this[key];
        if (original instanceof Uint8Array) return Buffer.from(original).toString('utf8');
        return key === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
      });
    const leaks: string[] = [];
    for (const run of runs) {
      const text = decoded(await t.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory());
      if (text.includes(token)) leaks.push(run.workflowId);
    }
    expect(leaks).toEqual([]);
    // the scan can see payloads: enableGuest's result (names and times, no token) is readable
    expect(decoded(await t.client.workflow.getHandle(workflowId).fetchHistory())).toContain('tokenRenewAfter');
  });
});
