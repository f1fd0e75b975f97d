// HostedCluster enablement on the real stack: a HostedCluster in the management API
// server (with the admin kubeconfig Secret, userData Secret and release metadata HyperShift
// would publish), `autonode enable` through the starter, the enablement workflow on the
// real Temporal server with workers that reach the guest only through the Secret it writes
// and EC2 only through the cluster's role (STS AssumeRole on moto) — then pods become nodes,
// and `autonode disable` takes every instance away.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DescribeImagesCommand } from '@aws-sdk/client-ec2';
import { HOSTED_CLUSTERS, RELEASE_METADATA_NAMESPACE, adminKubeconfigSecret, autonodeKubeconfigSecret } from '../../activities/enablement/activity';
import { RELEASE_METADATA_LABEL } from '../../core/enablement/release';
import { disruptionWorkflowId, provisionerWorkflowId, watchWorkflowId } from '../../core/lifecycle';
import { type DisruptionStatus } from '../../workflows/disruption';
import { createAssumeRoleCredentialsFactory, createEc2ClientFactory, createEc2CloudProvider, createStsClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { managementSecretResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { instanceUserData, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { clusterStatus, disableCluster, enableCluster, type ClusterCommandDeps } from '../../starter/commands/cluster';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import { type EnablementStatus } from '../../workflows/enablement';
import { installCrds } from '../support/crds';
import { aPoolWithWorkload } from '../support/enablement';
import { eventually } from '../support/eventually';
import { forceDeleteNodeClaims } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from '../support/temporal';
import { uniqueNetworkOctet } from '../support/network';
import { type Worker } from '@temporalio/worker';

jest.setTimeout(600_000);

describe('HostedCluster enablement through the starter (real stack)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const hc = { namespace: `clusters-${id}`, name: 'dev', infraID: `en-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  // a role in moto's default account: the network made below with the test keys is the role's too
  const roleArn = `arn:aws:iam::123456789012:role/autonode-${id}`;
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const out: string[] = [];
  let t: TemporalHarness;
  let workers: Worker[];
  let running: Promise<void>;
  let fleet: SimulatedKubeletFleet;
  let deps: ClusterCommandDeps;
  const ec2ClientFor = createEc2ClientFactory({
    endpoint: stack.ec2.endpoint,
    credentialsFor: createAssumeRoleCredentialsFactory({
      stsFor: createStsClientFactory({ endpoint: stack.ec2.endpoint, endpointPolicy: 'loopback-only', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } }),
      withoutRole: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    }),
    endpointPolicy: 'loopback-only',
  });
  const cloud = createEc2CloudProvider({ ec2: ec2ClientFor({ name: hc.infraID, region: hc.region }), cluster: { name: hc.infraID, region: hc.region } });
  const taskQueues = { control: 'autonode-control', cloud: 'autonode-cloud', packing: 'autonode-packing' };

  beforeAll(async () => {
    await installCrds(stack.guest.kubeconfigPath);
    // The guest is this cluster's alone (as a hosted cluster is): claims other test files left
    // (their workflows gone) would hold the teardown forever.
    const leftovers = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string } }[] };
    await forceDeleteNodeClaims(guest, leftovers.items.map((c) => c.metadata.name));
    await createClusterNetwork(ec2ClientFor({ name: hc.infraID, region: hc.region }), { clusterName: hc.infraID, zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: uniqueNetworkOctet() });
    await createLocalHostedCluster(management, readFileSync(stack.guest.kubeconfigPath, 'utf8'), hc);
    t = await temporalHarness();
    // The production wiring: the guest through the Secret enablement writes, EC2 through the role.
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
    // no fallback: a machine joins only with the userData the enablement put into its class
    fleet = new SimulatedKubeletFleet({
      listInstances: () => cloud.list(),
      userDataOf: instanceUserData(ec2ClientFor({ name: hc.infraID, region: hc.region })),
      region: hc.region,
      pollMs: 500,
    });
    fleet.start();
    deps = { temporal: t.client, management, io: { stdout: (s) => void out.push(s), stderr: (s) => void out.push(s) }, pollMs: 300 };
  });
  afterAll(async () => {
    // the guest is shared with the next files: its pool, class, pods and default class must not outlive it
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: `en-${id}` }).catch(() => undefined);
    await guest.core.deleteNamespace({ name: `en-${id}` }).catch(() => undefined);
    for (const name of [`en-${id}`, 'default']) {
      await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name }).catch(() => undefined);
    }
    await fleet?.stop();
    for (const w of workers ?? []) w.shutdown();
    await running;
    await t?.close();
  });

  const readHc = async () => (await management.customObjects.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name })) as {
    metadata: { finalizers?: string[] };
    status?: { conditions?: { type: string; status: string; reason: string; message: string }[]; autoNode?: { nodeCount: number; nodeClaimCount: number; vCPUs: number } | null };
  };
  const condition = (h: Awaited<ReturnType<typeof readHc>>, type: string) => h.status?.conditions?.find((c) => c.type === type);

  it('an invalid roleARN is reported on the HostedCluster, and nothing is set up', async () => {
    const bad = { ...hc, name: 'broken' };
    await createLocalHostedCluster(management, readFileSync(stack.guest.kubeconfigPath, 'utf8'), bad);
    // the starter refuses a malformed ARN itself …
    await expect(enableCluster(deps, `${bad.namespace}/${bad.name}`, { roleArn: 'arn:aws:iam::12:role/x' })).rejects.toThrow(/--role-arn/);
    // … and a HostedCluster edited by hand gets the condition from the workflow
    await management.customObjects.patchNamespacedCustomObject(
      { ...HOSTED_CLUSTERS, namespace: bad.namespace, name: bad.name, body: { spec: { autoNode: { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: 'arn:aws:iam::12:role/x' } } } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await t.client.workflow.start('enablementWorkflow', { taskQueue: taskQueues.control, workflowId: `autonode/${bad.namespace}/${bad.name}`, args: [{ hostedCluster: { namespace: bad.namespace, name: bad.name } }] });
    const stored = await eventually('AutoNodeEnabled=False on the broken HostedCluster', async () => {
      const read = (await management.customObjects.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: bad.namespace, name: bad.name })) as Awaited<ReturnType<typeof readHc>>;
      const c = condition(read, 'AutoNodeEnabled');
      return c?.status === 'False' ? { read, c } : undefined;
    });
    expect(stored.c.reason).toBe('InvalidRoleARN');
    expect(stored.c.message).toContain('spec.autoNode.provisionerConfig.karpenter.aws.roleARN');
    expect(stored.read.metadata.finalizers ?? []).not.toContain('autonode.io/enablement');
    const status = await t.client.workflow.getHandle(`autonode/${bad.namespace}/${bad.name}`).query<EnablementStatus>('status');
    expect(status.phase).toBe('Invalid');
    expect(status.cluster).toBeUndefined();
    await t.client.workflow.getHandle(`autonode/${bad.namespace}/${bad.name}`).terminate('test over');
  });

  it('enable → the guest is set up and its node classes follow the release; pods become nodes; disable → nothing left', async () => {
    const enabled = await enableCluster(deps, `${hc.namespace}/${hc.name}`, { roleArn, wait: true });
    expect(enabled?.phase).toBe('Enabled');
    expect(enabled?.cluster).toBe(hc.infraID);

    // the HostedCluster says so, and keeps its deletion waiting for the teardown
    const h = await readHc();
    expect(condition(h, 'AutoNodeEnabled')).toEqual(expect.objectContaining({ status: 'True', reason: 'AutoNodeEnabled' }));
    expect(h.metadata.finalizers).toContain('autonode.io/enablement');
    // the workers' guest identity is a Secret in the management cluster, not in any payload
    const secret = await management.core.readNamespacedSecret(autonodeKubeconfigSecret(hc));
    expect(Buffer.from(secret.data?.kubeconfig ?? '', 'base64').toString()).toContain('system:serviceaccount:kube-system:autonode');
    const history = JSON.stringify(await t.client.workflow.getHandle(`autonode/${hc.namespace}/${hc.name}`).fetchHistory());
    expect(history).not.toContain('token:');
    const admin = await management.core.readNamespacedSecret({ namespace: hc.namespace, name: adminKubeconfigSecret(hc).name });
    expect(history).not.toContain(admin.data?.kubeconfig ?? 'none');

    // an admin's EC2NodeClass with a wrong AMI and userData is corrected within 10 s (to the
    // Ignition config HyperShift published for the cluster, which the kubelets below boot from)
    const publishedSecret = await management.core.readNamespacedSecret({ namespace: hc.namespace, name: `${hc.name}-autonode-user-data` });
    const published = Buffer.from(publishedSecret.data?.value ?? '', 'base64').toString('utf8');
    expect(published).toContain('"ignition"');
    const className = `en-${id}`;
    await guest.customObjects.createClusterCustomObject({
      group: 'karpenter.k8s.aws',
      version: 'v1',
      plural: 'ec2nodeclasses',
      body: {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: className },
        spec: { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }], userData: 'wrong', subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': hc.infraID } }], securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': hc.infraID } }] },
      },
    });
    const created = Date.now();
    const corrected = await eventually('the release AMI and the cluster userData in the admin’s class', async () => {
      const read = (await guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: className })) as { spec: { amiSelectorTerms: { id?: string }[]; userData?: string } };
      return read.spec.amiSelectorTerms[0]?.id === 'ami-00722494a4a3fa2af' && read.spec.userData === published ? read : undefined;
    }, 60_000);
    expect(corrected.spec.amiSelectorTerms).toEqual([{ id: 'ami-00722494a4a3fa2af' }]);
    // how soon is a measurement (the enablement resyncs every 5 s), not a timed assertion
    console.log(`enablement: the admin's EC2NodeClass was corrected ${((Date.now() - created) / 1000).toFixed(1)} s after it was created`);
    // the cluster's own `default` class is kept beside the admin's (the seeds' pools name it)
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: 'default' });
    const again = await eventually('the default EC2NodeClass made again', async () => {
      const read = (await guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: 'default' }).catch(() => undefined)) as { spec: { amiSelectorTerms: { id?: string }[]; subnetSelectorTerms: unknown[] } } | undefined;
      return read;
    }, 60_000);
    expect(again.spec.amiSelectorTerms).toEqual([{ id: 'ami-00722494a4a3fa2af' }]);
    expect(again.spec.subnetSelectorTerms).toEqual([{ tags: { 'karpenter.sh/discovery': hc.infraID } }]);

    // pending pods become nodes through the cluster's own workflows
    const pool = `en-${id}`;
    const namespace = `en-${id}`;
    await aPoolWithWorkload(guest, { pool, className, taint: id, namespace, replicas: 4 });
    await eventually('every pod Running', async () => {
      const pods = (await guest.core.listNamespacedPod({ namespace })).items;
      return pods.length === 4 && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
    }, 180_000);
    const launched = await cloud.list();
    expect(launched.length).toBeGreaterThan(0);
    // launched with the release's AMI, in the cluster's (the role's) account
    for (const instance of launched) expect(instance.imageId).toBe('ami-00722494a4a3fa2af');
    const reported = await eventually('status.autoNode counts', async () => {
      const read = await readHc();
      return (read.status?.autoNode?.nodeCount ?? 0) > 0 ? read.status?.autoNode : undefined;
    }, 30_000);
    expect(reported?.nodeClaimCount).toBeGreaterThan(0);
    expect(reported?.vCPUs).toBeGreaterThan(0);

    out.length = 0;
    await clusterStatus(deps, undefined, 'table');
    expect(out.join('')).toMatch(new RegExp(`${hc.namespace}/${hc.name}\\s+Enabled\\s+${hc.infraID}`));
    // one cluster in detail: its pools and claims, read as autonode's identity, with planned prices
    out.length = 0;
    await clusterStatus(deps, `${hc.namespace}/${hc.name}`, 'table');
    const detail = out.join('');
    expect(detail).toMatch(new RegExp(`${pool}\\s+${className}\\s+\\d+\\s+\\d+\\s+\\d+\\.\\d{4}`));
    expect(detail).toMatch(new RegExp(`${pool}-[a-z0-9]{5}\\s+${pool}\\s+Initialized\\s+m5\\.x?large\\s+us-east-1[a-c]\\s+on-demand\\s+0\\.\\d{4}`));
    expect(detail).toMatch(/NodeClaim\(s\), \d+\.\d{4} \$\/h as planned/);

    // a release upgrade: the HostedCluster names a release whose stream metadata has another
    // AMI — the enablement moves every EC2NodeClass to it, and disruption sees the nodes drift
    const images = await ec2ClientFor({ name: hc.infraID, region: hc.region }).send(new DescribeImagesCommand({ Filters: [{ Name: 'architecture', Values: ['x86_64'] }] }));
    const nextAmi = images.Images?.find((i) => i.ImageId !== 'ami-00722494a4a3fa2af' && (i.Platform ?? '').toLowerCase() !== 'windows')?.ImageId;
    expect(nextAmi).toBeDefined();
    const nextRelease = 'quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64';
    await management.core.createNamespacedConfigMap({
      namespace: RELEASE_METADATA_NAMESPACE,
      body: {
        metadata: { name: `release-next-${id}`, namespace: RELEASE_METADATA_NAMESPACE, labels: { [RELEASE_METADATA_LABEL]: 'true' } },
        data: { releaseImage: nextRelease, stream: JSON.stringify({ stream: 'rhcos-4.19', architectures: { x86_64: { images: { aws: { regions: { [hc.region]: { image: nextAmi } } } } } } }) },
      },
    });
    await management.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body: { spec: { release: { image: nextRelease } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await eventually('the admin’s class on the new release’s AMI', async () => {
      const read = (await guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: className })) as { spec: { amiSelectorTerms: { id?: string }[] } };
      return read.spec.amiSelectorTerms[0]?.id === nextAmi ? true : undefined;
    }, 60_000);
    await eventually('the pool’s nodes Drifted (AMIDrift)', async () => {
      const listed = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { labels?: Record<string, string> }; status?: { conditions?: { type: string; status: string; reason?: string }[] } }[] };
      return listed.items.some((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool && c.status?.conditions?.some((x) => x.type === 'Drifted' && x.status === 'True' && x.reason === 'AMIDrift')) ? true : undefined;
    }, 90_000);
    // …and replaces them on the new AMI, one at a time; the teardown below starts from a quiet cluster
    await eventually('the drifted nodes replaced and disruption idle', async () => {
      const listed = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { labels?: Record<string, string>; deletionTimestamp?: string }; status?: { imageID?: string; conditions?: { type: string; status: string }[] } }[] };
      const mine = listed.items.filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
      const settled = mine.length > 0 && mine.every((c) => c.metadata.deletionTimestamp === undefined && c.status?.imageID === nextAmi && c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True'));
      if (!settled) return undefined;
      const disruption = await t.client.workflow.getHandle(disruptionWorkflowId(hc.infraID)).query<DisruptionStatus>('status');
      return disruption.inFlight === undefined ? true : undefined;
    }, 300_000);

    // disable: every claim drained and terminated, then autonode leaves. A claim's workflow
    // that continues as new during the teardown starts a run under its old id; only an id not
    // seen before disabling is a claim the teardown created.
    const claimPrefix = `autonode/${hc.infraID}/nodeclaim/${pool}-`;
    const claimsBefore = new Set<string>();
    for await (const w of t.client.workflow.list({ query: `WorkflowType = 'nodeClaimWorkflow'` })) {
      if (w.workflowId.startsWith(claimPrefix)) claimsBefore.add(w.workflowId);
    }
    const disabling = new Date();
    const disabled = await disableCluster(deps, `${hc.namespace}/${hc.name}`, { wait: true });
    expect(disabled?.phase).toBe('Disabled');
    expect(await cloud.list()).toEqual([]);
    const claims = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { labels?: Record<string, string> } }[] };
    expect(claims.items.filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool)).toEqual([]);
    const after = await readHc();
    expect(after.metadata.finalizers ?? []).not.toContain('autonode.io/enablement');
    expect(condition(after, 'AutoNodeEnabled')).toEqual(expect.objectContaining({ status: 'False', reason: 'Disabled' }));
    expect(after.status?.autoNode ?? null).toBeNull();
    await expect(management.core.readNamespacedSecret(autonodeKubeconfigSecret(hc))).rejects.toThrow();
    const watch = await t.client.workflow.getHandle(watchWorkflowId(hc.infraID)).describe();
    expect(watch.status.name).not.toBe('RUNNING');
    expect((await t.client.workflow.getHandle(provisionerWorkflowId(hc.infraID)).describe()).status.name).not.toBe('RUNNING');
    // the pods went Pending again as their nodes drained: the teardown provisioned nothing for them
    const startedSince: string[] = [];
    for await (const w of t.client.workflow.list({ query: `WorkflowType = 'nodeClaimWorkflow' AND StartTime > '${disabling.toISOString()}'` })) {
      // this test's pods' claims (another file's leftover pool in the shared guest is not this test's)
      if (w.workflowId.startsWith(claimPrefix) && !claimsBefore.has(w.workflowId)) startedSince.push(w.workflowId);
    }
    expect(startedSince).toEqual([]);
  });
});
