// Issue 13, test 1: the two ways in and the three ways out, on the real stack. With the
// Autoprovision feature gate off, spec.autoNode alone starts nothing and the HostedCluster
// says so; with it on, the management watch enables the cluster, and removing spec.autoNode
// tears it down; enabled through the starter with the gate off, deleting the HostedCluster
// tears it down behind autonode's finalizer: 0 instances in moto, the HostedCluster gone,
// no workflow of the cluster running.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { type Worker } from '@temporalio/worker';
import { HOSTED_CLUSTERS } from '../../activities/enablement/activity';
import { createEc2CloudProvider } from '../../activities/cloud';
import { managementSecretResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { enablementWorkflowId } from '../../core/lifecycle';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { instanceUserData, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { clusterStatus, enableCluster, type ClusterCommandDeps } from '../../starter/commands/cluster';
import { startManagementWatch } from '../../workers/management-watch';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../core/enablement/management-watch';
import type { ManagementWatchStatus } from '../../workflows/management-watch';
import { type EnablementStatus } from '../../workflows/enablement';
import { installCrds } from '../support/crds';
import { aPoolWithWorkload, allPodsRunning, conditionOf, readHostedCluster, roleEc2ClientFactory, runningWorkflowsOf, workflowStatus } from '../support/enablement';
import { eventually } from '../support/eventually';
import { recordHistory, runsOf } from '../support/histories';
import { forceDeleteNodeClaims } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from '../support/temporal';
import { uniqueNetworkOctet } from '../support/network';

jest.setTimeout(400_000);

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('enablement by spec.autoNode and the Autoprovision gate, and HostedCluster deletion (real stack)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  // a namespace of its own: the management watch of this test serves only it
  const hc = { namespace: `gate-${id}`, name: 'gated', infraID: `gt-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  const ref = { namespace: hc.namespace, name: hc.name };
  const roleArn = `arn:aws:iam::123456789012:role/autonode-gate-${id}`;
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const ec2ClientFor = roleEc2ClientFactory(stack);
  const cloud = createEc2CloudProvider({ ec2: ec2ClientFor({ name: hc.infraID, region: hc.region }), cluster: { name: hc.infraID, region: hc.region } });
  const taskQueues = { control: 'autonode-control', cloud: 'autonode-cloud', packing: 'autonode-packing' };
  const pool = `gt-${id}`;
  const workload = { pool, className: 'default', taint: id, namespace: `gt-${id}`, replicas: 2 };
  let t: TemporalHarness;
  let workers: Worker[];
  let running: Promise<void>;
  let fleet: SimulatedKubeletFleet;
  let deps: ClusterCommandDeps;

  const setAutoNode = (autoNode: unknown) =>
    management.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, ...ref, body: { spec: { autoNode } } }, mergePatch);
  const autoNode = { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: roleArn } } } };
  const gate = async (autoprovision: boolean) => {
    await startManagementWatch(t.client, { autoprovision, namespace: hc.namespace, taskQueues });
    await eventually(`the management watch in ${autoprovision ? 'Autoprovision' : 'report-only'} mode`, async () => {
      const status = await t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).query<ManagementWatchStatus>('status');
      return status.autoprovision === autoprovision;
    });
  };

  beforeAll(async () => {
    await installCrds(stack.guest.kubeconfigPath);
    // The guest is this cluster's alone while the test runs (a teardown deletes every NodeClaim in it).
    const leftovers = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string } }[] };
    await forceDeleteNodeClaims(guest, leftovers.items.map((c) => c.metadata.name));
    await createClusterNetwork(ec2ClientFor({ name: hc.infraID, region: hc.region }), { clusterName: hc.infraID, zones: ['us-east-1a', 'us-east-1b'], octet: uniqueNetworkOctet() });
    await createLocalHostedCluster(management, readFileSync(stack.guest.kubeconfigPath, 'utf8'), hc);
    t = await temporalHarness();
    // a management watch another file's workers left running (on queues nobody polls now) is not this file's
    await t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('another test file left it').catch(() => undefined);
    // nor is a `default` node class another file's enablement made for its own network
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: 'default' }).catch(() => undefined);
    workers = await createAutonodeWorkers({
      connection: t.connection,
      client: t.client,
      namespace: t.namespace,
      resolve: managementSecretResolver({ management, ec2ClientFor }),
      management,
      workflows: { workflowBundle: workflowBundle() },
      nodeClaimDefaults: { timeouts: { resync: '1s', steadyResync: '2s' } },
      taskQueues,
    });
    running = runWorkers(workers);
    // every machine boots from its userData: the Ignition config the enablement reconciled
    fleet = new SimulatedKubeletFleet({
      listInstances: () => cloud.list(),
      userDataOf: instanceUserData(ec2ClientFor({ name: hc.infraID, region: hc.region })),
      region: hc.region,
      pollMs: 500,
    });
    fleet.start();
    deps = { temporal: t.client, management, io: { stdout: () => undefined, stderr: () => undefined }, pollMs: 300 };
    // a worker without the gate: the management watch runs in report-only mode
    await gate(false);
  });

  afterAll(async () => {
    // the management watch is a singleton on the run's Temporal: later files must not inherit it
    await t?.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('test over').catch(() => undefined);
    if ((await workflowStatus(t.client, enablementWorkflowId(ref)).catch(() => undefined)) === 'RUNNING') {
      await t.client.workflow.getHandle(enablementWorkflowId(ref)).terminate('test over');
    }
    await forceDeleteNodeClaims(guest, ((await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string } }[] }).items.map((c) => c.metadata.name)).catch(() => undefined);
    await guest.core.deleteNamespace({ name: workload.namespace }).catch(() => undefined);
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: pool }).catch(() => undefined);
    await fleet?.stop();
    for (const w of workers ?? []) w.shutdown();
    await running;
    await t?.close();
  });

  it('without the gate, spec.autoNode alone starts nothing, and the HostedCluster says what to do', async () => {
    await setAutoNode(autoNode);
    const reported = await eventually('AutoNodeEnabled=False/FeatureGateDisabled', async () => {
      const c = conditionOf(await readHostedCluster(management, ref), 'AutoNodeEnabled');
      return c?.reason === 'FeatureGateDisabled' ? c : undefined;
    });
    expect(reported.status).toBe('False');
    expect(reported.message).toContain('--feature-gates=Autoprovision=true');
    expect(reported.message).toContain(`autonode enable ${hc.namespace}/${hc.name}`);
    expect(await workflowStatus(t.client, enablementWorkflowId(ref))).toBeUndefined();
    expect((await readHostedCluster(management, ref))?.metadata.finalizers ?? []).not.toContain('autonode.io/enablement');
    // `autonode status` says the same
    const out: string[] = [];
    await clusterStatus({ ...deps, io: { stdout: (s) => void out.push(s), stderr: (s) => void out.push(s) } }, `${hc.namespace}/${hc.name}`, 'table');
    expect(out.join('')).toContain('FeatureGateDisabled');
    expect(out.join('')).toContain('--feature-gates=Autoprovision=true');
  });

  it('with the gate on, spec.autoNode enables the cluster; removing it tears everything down', async () => {
    await gate(true);
    const enabled = await eventually('the enablement workflow started by the management watch, Enabled', async () => {
      const status = await t.client.workflow.getHandle(enablementWorkflowId(ref)).query<EnablementStatus>('status');
      return status.phase === 'Enabled' ? status : undefined;
    }, 120_000);
    expect(enabled.cluster).toBe(hc.infraID);
    const h = await readHostedCluster(management, ref);
    expect(conditionOf(h, 'AutoNodeEnabled')).toEqual(expect.objectContaining({ status: 'True', reason: 'AutoNodeEnabled' }));
    expect(h?.metadata.finalizers).toContain('autonode.io/enablement');

    // the default EC2NodeClass the enablement created carries the cluster; a workload gets nodes
    await aPoolWithWorkload(guest, workload);
    await eventually('the workload Running on nodes autonode launched', () => allPodsRunning(guest, workload.namespace, workload.replicas), 180_000);
    expect((await cloud.list()).length).toBeGreaterThan(0);

    // spec.autoNode removed by hand (no starter): the watch asks for the teardown
    await setAutoNode(null);
    await eventually('the enablement workflow completed', async () => (await workflowStatus(t.client, enablementWorkflowId(ref))) === 'COMPLETED', 300_000);
    const result = (await t.client.workflow.getHandle(enablementWorkflowId(ref)).result()) as EnablementStatus;
    expect(result.phase).toBe('Disabled');
    expect(await cloud.list()).toEqual([]);
    const after = await readHostedCluster(management, ref);
    expect(after?.metadata.finalizers ?? []).not.toContain('autonode.io/enablement');
    expect(conditionOf(after, 'AutoNodeEnabled')).toEqual(expect.objectContaining({ status: 'False', reason: 'Disabled' }));
    // visibility lags a little behind the workflows' ends
    await eventually(`no workflow of ${hc.infraID} running`, async () => (await runningWorkflowsOf(t.client, hc.infraID)).length === 0, 30_000);
    // the committed enablement history test/unit/replay.test.ts replays (npm run
    // record:histories): its last run — steady reconciles, then spec.autoNode gone: the
    // teardown, completed. Here that run is its whole life, the enable too.
    await recordHistory('enablement-teardown', async () => {
      const runs = await runsOf(t.client, enablementWorkflowId(ref));
      return t.client.workflow.getHandle(enablementWorkflowId(ref), runs[runs.length - 1]).fetchHistory();
    });
  });

  it('enabled through the starter with the gate off, then the HostedCluster deleted: the finalizer holds it until no instance is left', async () => {
    await gate(false);
    const enabled = await enableCluster(deps, `${hc.namespace}/${hc.name}`, { roleArn, wait: true });
    expect(enabled?.phase).toBe('Enabled');
    // the workload from before is Pending since the teardown; the re-enabled cluster runs it again
    await eventually('the workload Running again', () => allPodsRunning(guest, workload.namespace, workload.replicas), 180_000);
    const launched = await cloud.list();
    expect(launched.length).toBeGreaterThan(0);
    // the report-only watch leaves a starter-enabled cluster alone
    expect(conditionOf(await readHostedCluster(management, ref), 'AutoNodeEnabled')).toEqual(expect.objectContaining({ status: 'True' }));

    await management.customObjects.deleteNamespacedCustomObject({ ...HOSTED_CLUSTERS, ...ref });
    const deleting = await readHostedCluster(management, ref);
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();
    expect(deleting?.metadata.finalizers).toContain('autonode.io/enablement');

    await eventually('the HostedCluster gone', async () => (await readHostedCluster(management, ref)) === undefined, 300_000);
    expect(await cloud.list()).toEqual([]);
    // the finalizer goes in the teardown's last activity but one: the workflow ends a moment later
    await eventually('the enablement workflow completed', async () => (await workflowStatus(t.client, enablementWorkflowId(ref))) === 'COMPLETED', 30_000);
    // visibility lags a little behind the workflows' ends
    await eventually(`no workflow of ${hc.infraID} running`, async () => (await runningWorkflowsOf(t.client, hc.infraID)).length === 0, 30_000);
    // nothing of autonode is left in the guest either
    await expect(guest.config.makeApiClient(RbacAuthorizationV1Api).readClusterRole({ name: 'autonode' })).rejects.toThrow(/404|not found/i);
    // the management watch so far (still running): report-only, the gate on (the watch
    // restarted in Autoprovision mode), off again; replayed by test/unit/replay.test.ts
    await recordHistory('management-watch-gate-changes', () => t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).fetchHistory());
  });
});
