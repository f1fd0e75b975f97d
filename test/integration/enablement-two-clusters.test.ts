// Issue 13, test 2: two hosted clusters served at once by one set of workers, each with its
// own guest API server and its own role (moto accounts 123456789012 and 210987654321) — each
// one's instances, NodeClaims, nodeclaim workflows and CSRs stay its own, and taking one
// down leaves the other running. A third HostedCluster whose guest cannot be reached is
// reported Degraded and disturbs neither.
//
// The second guest is a real one (dev/stack/extra-guest.ts: its own etcd, kube-apiserver,
// controller-manager, scheduler, kwok), not a second NodePool in the shared guest: two
// clusters sharing one API server would share pods, NodePools and NodeClaims, which no two
// hosted clusters do.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { paginateDescribeInstances, type EC2Client } from '@aws-sdk/client-ec2';
import { CertificatesV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Worker } from '@temporalio/worker';
import { HOSTED_CLUSTERS } from '../../activities/enablement/activity';
import { createEc2CloudProvider, type CloudProvider } from '../../activities/cloud';
import { managementSecretResolver } from '../../activities/cluster';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { parseCsr } from '../../activities/kube/csr';
import { enablementWorkflowId } from '../../core/lifecycle';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { startExtraGuest, type ExtraGuest } from '../../dev/stack/extra-guest';
import { instanceUserData, SimulatedKubeletFleet } from '../../dev/simkubelet';
import { disableCluster, enableCluster, type ClusterCommandDeps } from '../../starter/commands/cluster';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import { type EnablementStatus } from '../../workflows/enablement';
import { aPoolWithWorkload, allPodsRunning, conditionOf, readHostedCluster, roleEc2ClientFactory, runningWorkflowsOf, workflowStatus } from '../support/enablement';
import { installCrds } from '../support/crds';
import { eventually } from '../support/eventually';
import { forceDeleteNodeClaims } from '../support/lifecycle';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from '../support/temporal';
import { uniqueNetworkOctet } from '../support/network';

jest.setTimeout(600_000);

interface Cluster {
  key: 'a' | 'b';
  hc: { namespace: string; name: string; infraID: string; region: string; releaseImage: string };
  roleArn: string;
  account: string;
  guest: KubeClients;
  guestKubeconfig: string;
  ec2: EC2Client;
  cloud: CloudProvider;
  fleet?: SimulatedKubeletFleet;
}

const nodeClaimsIn = async (guest: KubeClients) =>
  ((await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string }; status?: { providerID?: string; nodeName?: string } }[] }).items;

/** Every instance the credentials can see, tagged or not: what the role's account holds. Every
 * page of it: the shared account holds the other files' instances too, and EC2 (moto as well)
 * answers 100 reservations a page — one page once missed this cluster's. */
async function everyInstance(ec2: EC2Client): Promise<{ id: string; owner: string; tags: Record<string, string> }[]> {
  const seen: { id: string; owner: string; tags: Record<string, string> }[] = [];
  for await (const page of paginateDescribeInstances({ client: ec2 }, { Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down'] }] })) {
    for (const r of page.Reservations ?? []) for (const i of r.Instances ?? []) seen.push({ id: i.InstanceId ?? '', owner: r.OwnerId ?? '', tags: Object.fromEntries((i.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])) });
  }
  return seen;
}

/** What a cluster that did not get its pods Running shows: claims, pods, pool, class, instances. */
async function explain(c: Cluster): Promise<void> {
  const say = (line: string) => process.stderr.write(`[cluster ${c.key}] ${line}\n`);
  const claims = (await c.guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }).catch((e: unknown) => ({ error: String(e) }))) as unknown;
  say(`NodeClaims: ${JSON.stringify(claims).slice(0, 3000)}`);
  const pods = await c.guest.core.listPodForAllNamespaces().catch(() => undefined);
  for (const p of pods?.items ?? []) say(`pod ${p.metadata?.namespace}/${p.metadata?.name}: ${p.status?.phase} ${JSON.stringify(p.status?.conditions ?? [])}`);
  const events = await c.guest.core.listEventForAllNamespaces().catch(() => undefined);
  for (const e of (events?.items ?? []).slice(-30)) say(`event ${e.involvedObject.kind}/${e.involvedObject.name}: ${e.reason}: ${e.message}`);
  for (const plural of ['nodepools', 'ec2nodeclasses']) {
    const group = plural === 'nodepools' ? 'karpenter.sh' : 'karpenter.k8s.aws';
    say(`${plural}: ${JSON.stringify(await c.guest.customObjects.listClusterCustomObject({ group, version: 'v1', plural }).catch((e: unknown) => String(e))).slice(0, 3000)}`);
  }
  say(`instances: ${JSON.stringify(await everyInstance(c.ec2).catch((e: unknown) => String(e)))}`);
  say(`nodes: ${JSON.stringify((await c.guest.core.listNode().catch(() => undefined))?.items.map((n) => n.metadata?.name))}`);
}

describe('two hosted clusters at once, with different roles, and a broken third (real stack, two guest API servers)', () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const namespace = `two-${id}`;
  const management = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const ec2ClientFor = roleEc2ClientFactory(stack);
  const taskQueues = { control: 'autonode-control', cloud: 'autonode-cloud', packing: 'autonode-packing' };
  const broken = { namespace, name: 'broken', infraID: `tc-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  const brokenRole = `arn:aws:iam::123456789012:role/autonode-broken-${id}`;
  let guestB: ExtraGuest;
  let clusters: Cluster[] = [];
  let t: TemporalHarness;
  let workers: Worker[];
  let running: Promise<void>;
  let deps: ClusterCommandDeps;

  const aCluster = (key: 'a' | 'b', account: string, guestKubeconfig: string): Cluster => {
    const hc = { namespace, name: key === 'a' ? 'alpha' : 'beta', infraID: `t${key}-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
    const roleArn = `arn:aws:iam::${account}:role/autonode-${key}-${id}`;
    const ec2 = ec2ClientFor({ name: hc.infraID, region: hc.region, credentialsRef: roleArn });
    return { key, hc, roleArn, account, guest: kubeClientsFromKubeconfigFile(guestKubeconfig), guestKubeconfig, ec2, cloud: createEc2CloudProvider({ ec2, cluster: { name: hc.infraID, region: hc.region } }) };
  };
  const workloadOf = (c: Cluster) => ({ pool: `two-${c.key}-${id}`, className: `two-${c.key}-${id}`, taint: `${c.key}-${id}`, namespace: `two-${c.key}-${id}`, replicas: 2 });

  const since = Date.now() - 1_000;

  beforeAll(async () => {
    guestB = await startExtraGuest(stack, { name: `guest-b-${id}`, log: (line) => process.stderr.write(`[guest-b] ${line}\n`) });
    clusters = [aCluster('a', '123456789012', stack.guest.kubeconfigPath), aCluster('b', '210987654321', guestB.kubeconfigPath)];
    const [a] = clusters;
    await installCrds(stack.guest.kubeconfigPath);
    // the shared guest is cluster a's alone while this runs (a teardown deletes every NodeClaim in it)
    // (just-installed CRDs answer 429 "storage is (re)initializing" for a moment)
    if (a) await forceDeleteNodeClaims(a.guest, (await eventually('NodeClaims served by the shared guest', () => nodeClaimsIn(a.guest), 30_000)).map((c) => c.metadata.name));
    for (const c of clusters) {
      // each network in its role's account: what the role creates lands there (moto models accounts)
      await createClusterNetwork(c.ec2, { clusterName: c.hc.infraID, zones: ['us-east-1a', 'us-east-1b'], octet: uniqueNetworkOctet() });
      await createLocalHostedCluster(management, readFileSync(c.guestKubeconfig, 'utf8'), c.hc);
    }
    // the third cluster's admin kubeconfig names a guest nobody serves
    const unreachable = readFileSync(stack.guest.kubeconfigPath, 'utf8').replace(new URL(stack.guest.server).host, '127.0.0.1:9');
    // (its node userData cannot be made in a guest nobody serves: a placeholder, never booted)
    await createLocalHostedCluster(management, unreachable, broken, { userData: '{"ignition":{"version":"3.4.0"}}' });
    t = await temporalHarness();
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
    for (const c of clusters) {
      // each fleet sees only its role's instances; each machine joins the guest its userData names
      c.fleet = new SimulatedKubeletFleet({
        listInstances: () => c.cloud.list(),
        userDataOf: instanceUserData(c.ec2),
        region: c.hc.region,
        pollMs: 500,
        onEvent: (e) => {
          if (e.type === 'failed') process.stderr.write(`[cluster ${c.key}] simulated kubelet on ${e.instanceId} failed: ${String(e.error)}\n`);
        },
      });
      c.fleet.start();
    }
    deps = { temporal: t.client, management, io: { stdout: () => undefined, stderr: () => undefined }, pollMs: 300, waitMs: 240_000 };
  });

  afterAll(async () => {
    for (const hc of t ? [...clusters.map((c) => c.hc), broken] : []) {
      if ((await workflowStatus(t.client, enablementWorkflowId(hc)).catch(() => undefined)) === 'RUNNING') await t.client.workflow.getHandle(enablementWorkflowId(hc)).terminate('test over');
    }
    // the broken cluster's finalizer: nothing could ever be set up in a guest nobody serves
    await management.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace, name: broken.name, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
    for (const c of clusters) {
      await c.fleet?.stop();
      await forceDeleteNodeClaims(c.guest, (await nodeClaimsIn(c.guest).catch(() => [])).map((n) => n.metadata.name)).catch(() => undefined);
    }
    const a = clusters[0];
    if (a) {
      await a.guest.core.deleteNamespace({ name: workloadOf(a).namespace }).catch(() => undefined);
      await a.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: workloadOf(a).pool }).catch(() => undefined);
    }
    for (const w of workers ?? []) w.shutdown();
    await running;
    await t?.close();
    await guestB?.stop();
  });

  it('each cluster runs its workload on its own instances, NodeClaims and CSRs; the broken one is Degraded and alone', async () => {
    const [enabledA, enabledB, enabledBroken] = await Promise.all([
      ...clusters.map((c) => enableCluster(deps, `${c.hc.namespace}/${c.hc.name}`, { roleArn: c.roleArn, wait: true })),
      enableCluster(deps, `${broken.namespace}/${broken.name}`, { roleArn: brokenRole, wait: true }),
    ]);
    expect(enabledA?.phase).toBe('Enabled');
    expect(enabledB?.phase).toBe('Enabled');
    expect(enabledBroken?.phase).toBe('Degraded');

    for (const c of clusters) {
      const w = workloadOf(c);
      const discovery = [{ tags: { 'karpenter.sh/discovery': c.hc.infraID } }];
      await c.guest.customObjects.createClusterCustomObject({
        group: 'karpenter.k8s.aws',
        version: 'v1',
        plural: 'ec2nodeclasses',
        body: { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: w.className }, spec: { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }], subnetSelectorTerms: discovery, securityGroupSelectorTerms: discovery } },
      });
      // each enablement puts the release's AMI into its own guest's class; the pool comes after:
      // a batch planned while the class is not ready is not planned again when it becomes ready
      // (no doorbell rings for a node class; noticed, left for the provisioner's owner)
      await eventually(`cluster ${c.key}'s class on the release AMI`, async () => {
        const read = (await c.guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: w.className })) as { spec: { amiSelectorTerms: { id?: string }[] } };
        return read.spec.amiSelectorTerms[0]?.id === 'ami-00722494a4a3fa2af';
      }, 60_000);
      await aPoolWithWorkload(c.guest, w);
    }
    for (const c of clusters) {
      await eventually(`cluster ${c.key}'s workload Running`, () => allPodsRunning(c.guest, workloadOf(c).namespace, 2), 240_000).catch(async (err: unknown) => {
        await explain(c);
        throw err;
      });
    }

    for (const c of clusters) {
      const other = clusters.find((o) => o !== c);
      if (!other) throw new Error('two clusters expected');
      // the role's account holds this cluster's instances and none of the other's
      const seen = await everyInstance(c.ec2);
      const mine = seen.filter((i) => i.tags[`kubernetes.io/cluster/${c.hc.infraID}`] === 'owned');
      expect(mine.length).toBeGreaterThan(0);
      expect(seen.filter((i) => `kubernetes.io/cluster/${other.hc.infraID}` in i.tags)).toEqual([]);
      for (const i of mine) expect(i.owner).toBe(c.account);
      // every NodeClaim of the guest is backed by one of those instances, and has a workflow of this cluster
      const claims = await nodeClaimsIn(c.guest);
      expect(claims.length).toBeGreaterThan(0);
      const ids = new Set(mine.map((i) => i.id));
      for (const claim of claims) expect(ids.has(claim.status?.providerID?.split('/').pop() ?? '')).toBe(true);
      for (const claim of claims) expect(await workflowStatus(t.client, `autonode/${c.hc.infraID}/nodeclaim/${claim.metadata.name}`)).toBeDefined();
      // the guest's kubelet CSRs are its own nodes', each approved (by autonode's identity in that guest)
      const nodeNames = new Set(claims.map((n) => n.status?.nodeName).filter((n): n is string => n !== undefined));
      const csrs = (await c.guest.config.makeApiClient(CertificatesV1Api).listCertificateSigningRequest()).items
        // the shared guest keeps other files' CSRs: only those of this test's time
        .filter((r) => r.spec.signerName.startsWith('kubernetes.io/kube') && (r.metadata?.creationTimestamp?.getTime() ?? 0) >= since);
      const approved = csrs.filter((r) => r.status?.conditions?.some((x) => x.type === 'Approved'));
      expect(approved.length).toBeGreaterThanOrEqual(2 * nodeNames.size);
      for (const r of approved) expect(nodeNames).toContain((parseCsr(r).subject.commonName ?? '').replace(/^system:node:/, ''));
    }

    // the broken cluster: Degraded with the reason, nothing of it anywhere
    const h = await readHostedCluster(management, broken);
    expect(conditionOf(h, 'AutoNodeDegraded')).toEqual(expect.objectContaining({ status: 'True', reason: 'ReconcileFailed' }));
    expect(conditionOf(h, 'AutoNodeDegraded')?.message).toMatch(/ECONNREFUSED|connect/i);
    expect(await runningWorkflowsOf(t.client, broken.infraID)).toEqual([]);
    for (const c of clusters) expect((await everyInstance(c.ec2)).filter((i) => `kubernetes.io/cluster/${broken.infraID}` in i.tags)).toEqual([]);
  });

  it('taking one cluster down leaves the other running', async () => {
    const [a, b] = clusters;
    if (!a || !b) throw new Error('two clusters expected');
    const bInstancesBefore = (await b.cloud.list()).map((i) => i.instanceId).sort();
    const bClaimsBefore = (await nodeClaimsIn(b.guest)).map((c) => c.metadata.name).sort();
    const disabled = (await disableCluster(deps, `${a.hc.namespace}/${a.hc.name}`, { wait: true })) as EnablementStatus | undefined;
    expect(disabled?.phase).toBe('Disabled');
    expect(await a.cloud.list()).toEqual([]);
    expect(await nodeClaimsIn(a.guest)).toEqual([]);
    // b: the same instances and claims, its pods still Running, its workflow Enabled
    expect((await b.cloud.list()).map((i) => i.instanceId).sort()).toEqual(bInstancesBefore);
    expect((await nodeClaimsIn(b.guest)).map((c) => c.metadata.name).sort()).toEqual(bClaimsBefore);
    expect(await allPodsRunning(b.guest, workloadOf(b).namespace, 2)).toBe(true);
    expect((await t.client.workflow.getHandle(enablementWorkflowId(b.hc)).query<EnablementStatus>('status')).phase).toBe('Enabled');

    const disabledB = (await disableCluster(deps, `${b.hc.namespace}/${b.hc.name}`, { wait: true })) as EnablementStatus | undefined;
    expect(disabledB?.phase).toBe('Disabled');
    expect(await b.cloud.list()).toEqual([]);
    for (const c of clusters) await eventually(`no workflow of ${c.hc.infraID} running`, async () => (await runningWorkflowsOf(t.client, c.hc.infraID)).length === 0, 30_000);
  });
});
