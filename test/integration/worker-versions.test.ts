// Worker versioning (ADR 0009) on the real stack: two builds of the production worker
// (workers/main.ts, AUTONODE_BUILD_ID=a and =b) against one Temporal server. A NodeClaim's
// workflow started under build A stays on A (PINNED) while B is current and new NodeClaims go
// to B; at its next wait it moves onto B by continuing as new, keeping its instance; the
// cluster's watch (AUTO_UPGRADE) follows B at its next task; A drains and is stopped, and B
// alone ends both claims' lives.
import { temporal } from '@temporalio/proto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { nodeClaimWorkflowId, type NodeClaimResult, type NodeClaimStatusView } from '../../core/lifecycle';
import { watchWorkflowId } from '../../workflows/watch';
import { runsOf } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';

jest.setTimeout(400_000);

const root = join(__dirname, '..', '..');
const { VersioningBehavior } = temporal.api.enums.v1;
const { VersionDrainageStatus } = temporal.api.enums.v1;

describe('worker versioning: two builds against one Temporal server (real stack)', () => {
  let lh: LifecycleHarness;
  let deploymentName: string;
  let queues: { control: string; cloud: string; packing: string };
  const builds = new Map<string, ChildProcess>();
  const log: string[] = [];

  /** The production worker as its own process: build `buildId` of this test's deployment, on this test's queues. */
  function startBuild(buildId: string): ChildProcess {
    const stack = loadStackInfo();
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', join(root, 'workers', 'main.ts')], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: stack.temporal.address,
        TEMPORAL_NAMESPACE: stack.temporal.namespace,
        AUTONODE_GUEST_KUBECONFIG: lh.autonodeKubeconfigPath,
        AWS_ENDPOINT_URL_EC2: lh.h.proxy.endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AUTONODE_TASK_QUEUE_CONTROL: queues.control,
        AUTONODE_TASK_QUEUE_CLOUD: queues.cloud,
        AUTONODE_TASK_QUEUE_PACKING: queues.packing,
        // two processes on one machine: no fixed ports
        AUTONODE_METRICS_PORT: '0',
        AUTONODE_TEMPORAL_METRICS_PORT: '0',
        AUTONODE_DEPLOYMENT_NAME: deploymentName,
        AUTONODE_BUILD_ID: buildId,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => log.push(`[${buildId}] ${d.toString()}`));
    child.stderr?.on('data', (d: Buffer) => log.push(`[${buildId}] ${d.toString()}`));
    builds.set(buildId, child);
    return child;
  }

  const service = () => lh.t.client.workflowService;
  /** `temporal worker deployment set-current-version`: accepted once the build's workers poll every queue */
  const makeCurrent = (buildId: string) =>
    eventually(`build ${buildId} current (its workers polling)`, async () => {
      await service().setWorkerDeploymentCurrentVersion({ namespace: lh.t.namespace, deploymentName, buildId, identity: 'worker-versions.test' });
      return true;
    }, 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\nworker output:\n${log.join('')}`);
    });
  /** the build and behaviour Temporal records for the run (the latest one unless named) */
  const versionOf = async (workflowId: string, runId?: string) => {
    const info = (await lh.t.client.workflow.getHandle(workflowId, runId).describe()).raw.workflowExecutionInfo?.versioningInfo;
    return { buildId: info?.deploymentVersion?.buildId ?? undefined, behavior: info?.behavior ?? undefined };
  };
  /** the build that completed each workflow task of a run, in order, and when */
  const tasksOf = async (workflowId: string, runId?: string) =>
    ((await lh.t.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []).flatMap((e) =>
      e.workflowTaskCompletedEventAttributes
        ? [{ build: e.workflowTaskCompletedEventAttributes.deploymentVersion?.buildId ?? 'unversioned', at: Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6) }]
        : [],
    );
  const taskBuilds = async (workflowId: string, runId?: string) => (await tasksOf(workflowId, runId)).map((t) => t.build);
  /** every run's tasks, oldest run first */
  const allTaskBuilds = async (workflowId: string) => (await Promise.all((await runsOf(lh.t.client, workflowId)).map((runId) => taskBuilds(workflowId, runId)))).flat();
  const initialized = (handle: { query<T>(q: string): Promise<T> }) =>
    eventually('the claim Initialized', async () => {
      const s = await handle.query<NodeClaimStatusView>('status');
      return s.phase === 'Initialized' ? s : undefined;
    }, 180_000);

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    deploymentName = `autonode-test-${lh.id}`;
    queues = { control: `${lh.taskQueues.control}-ver`, cloud: `${lh.taskQueues.cloud}-ver`, packing: `${lh.taskQueues.packing}-ver` };
  });
  afterAll(async () => {
    for (const child of builds.values()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 15_000))]);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    }
    await lh?.close();
  });

  it('a pinned claim stays on A while new claims go to B, moves to B at its next wait, and A drains', async () => {
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    startBuild('a');
    await makeCurrent('a');

    // under A: a claim (steady resyncs 45 s apart, so it is still asleep on A when B takes over) and the cluster's watch
    const first = `lc-${lh.id}-on-a`;
    const firstUid = await lh.createNodeClaim(first);
    const firstHandle = await lh.t.client.workflow.start('nodeClaimWorkflow', {
      taskQueue: queues.control,
      workflowId: nodeClaimWorkflowId(cluster.name, first),
      args: [{ cluster, taskQueues: queues, nodeClaim: { name: first, uid: firstUid }, timeouts: { resync: '1s', steadyResync: '45s', launchAttempt: '20s' } }],
    });
    const firstRun = firstHandle.firstExecutionRunId;
    const onA = await initialized(firstHandle);
    const watch = await lh.t.client.workflow.start('watchWorkflow', { taskQueue: queues.control, workflowId: `${watchWorkflowId(cluster.name)}-versions`, args: [{ cluster, taskQueues: queues, gcInterval: '2s', gcMinAge: '10m' }] });
    expect(await versionOf(firstHandle.workflowId)).toEqual({ buildId: 'a', behavior: VersioningBehavior.VERSIONING_BEHAVIOR_PINNED });
    await eventually('the watch on A', async () => ((await versionOf(watch.workflowId)).buildId === 'a' ? true : undefined));
    expect((await versionOf(watch.workflowId)).behavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE);

    // B deployed and made current
    startBuild('b');
    await makeCurrent('b');
    const bCurrentAt = Date.now();

    // new workflows go to B; the watch follows at its next task; the pinned claim stays on A
    const second = `lc-${lh.id}-on-b`;
    const secondUid = await lh.createNodeClaim(second);
    const secondHandle = await lh.t.client.workflow.start('nodeClaimWorkflow', {
      taskQueue: queues.control,
      workflowId: nodeClaimWorkflowId(cluster.name, second),
      // the watch may have started it already, seeing the new NodeClaim: either way it starts now, on B
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ cluster, taskQueues: queues, nodeClaim: { name: second, uid: secondUid }, timeouts: { resync: '1s', steadyResync: '45s', launchAttempt: '20s' } }],
    });
    await eventually('the watch on B', async () => ((await versionOf(watch.workflowId)).buildId === 'b' ? true : undefined), 60_000);
    await initialized(secondHandle);
    expect(await versionOf(secondHandle.workflowId)).toEqual({ buildId: 'b', behavior: VersioningBehavior.VERSIONING_BEHAVIOR_PINNED });
    expect(new Set(await taskBuilds(secondHandle.workflowId))).toEqual(new Set(['b']));

    // at its next wait the pinned claim continues as new onto B, with the same instance and node
    const moved = await eventually('the first claim’s workflow on B', async () => {
      const runs = await runsOf(lh.t.client, firstHandle.workflowId);
      const latest = runs[runs.length - 1];
      if (runs.length < 2 || latest === undefined || latest === firstRun) return undefined;
      const v = await versionOf(firstHandle.workflowId, latest);
      return v.buildId === 'b' ? { runs, ...v } : undefined;
    }, 120_000);
    expect(moved.behavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    // each run's tasks all ran on one build: A's runs (a long history may continue it as new
    // on A first, where it stays pinned), then B's — never a run that had tasks on both
    const buildsPerRun = await Promise.all(moved.runs.map(async (runId) => [...new Set(await taskBuilds(firstHandle.workflowId, runId))].join(',')));
    expect(buildsPerRun[0]).toBe('a');
    expect(buildsPerRun[buildsPerRun.length - 1]).toBe('b');
    expect(buildsPerRun.every((b) => b === 'a' || b === 'b')).toBe(true);
    expect(buildsPerRun).toEqual([...buildsPerRun].sort());
    // pinned: B was current while the claim woke on A and took its next step there
    const onAAfterB = (await Promise.all(moved.runs.slice(0, -1).map((runId) => tasksOf(firstHandle.workflowId, runId)))).flat().filter((t) => t.at > bCurrentAt);
    expect(onAAfterB.length).toBeGreaterThan(0);
    expect(new Set(onAAfterB.map((t) => t.build))).toEqual(new Set(['a']));
    const onB = await lh.t.client.workflow.getHandle(firstHandle.workflowId).query<NodeClaimStatusView>('status');
    expect(onB).toEqual(expect.objectContaining({ phase: 'Initialized', instance: onA.instance, nodeName: onA.nodeName }));
    // the watch followed B at its next task (within a run, or a run continued as new): A's tasks, then B's
    const watchTasks = await allTaskBuilds(watch.workflowId);
    expect(watchTasks[0]).toBe('a');
    expect(watchTasks[watchTasks.length - 1]).toBe('b');
    expect(watchTasks.indexOf('b')).toBeGreaterThan(watchTasks.lastIndexOf('a'));

    // A drained: no workflow is pinned to it any more; it can go
    await eventually('build A drained', async () => {
      const described = await service().describeWorkerDeploymentVersion({ namespace: lh.t.namespace, deploymentVersion: { deploymentName, buildId: 'a' } });
      return described.workerDeploymentVersionInfo?.drainageInfo?.status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED ? true : undefined;
    }, 120_000);
    const a = builds.get('a')!;
    a.kill('SIGTERM');
    await once(a, 'exit');

    // B alone ends both lives: instances terminated, one launch per claim in all
    for (const handle of [lh.t.client.workflow.getHandle(firstHandle.workflowId), secondHandle]) {
      await handle.executeUpdate('disrupt', { args: [{ reason: 'test done' }] });
      const result = (await handle.result()) as NodeClaimResult;
      expect(result.end.kind).toBe('disrupted');
      expect(await lh.instanceState(result.instance?.instanceId ?? 'missing')).toMatch(/shutting-down|terminated/);
    }
    expect(lh.h.proxy.count('CreateFleet')).toBe(2);
    await watch.cancel();
  });
});
