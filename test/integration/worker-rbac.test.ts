// Issue 16, Deployment: the workers get the management-cluster RBAC they need and nothing
// more. k8s/worker/worker.yaml's RBAC is applied for real to the stack's management API
// server; the workers run with a token of its ServiceAccount (TokenRequest) as their only
// management identity — the guest side keeps its own credentials (the admin kubeconfig the
// enablement reads from the management cluster, then autonode's own identity) — through
// the Autoprovision gate off and on, an enablement to steady state, a role change (a new
// guest token over the old Secret), a disable, a re-enable and the HostedCluster's deletion.
// Then the API server's audit log says what that identity did: no request was denied, and
// every (apiGroup, resource, verb) the manifests grant was used.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuthorizationV1Api, KubeConfig, PatchStrategy, loadAllYaml, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import { type Worker } from '@temporalio/worker';
import { z } from 'zod';
import { HOSTED_CLUSTERS, autonodeKubeconfigSecret } from '../../activities/enablement/activity';
import { managementSecretResolver } from '../../activities/cluster';
import { kubeClientsFromConfig, kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../core/enablement/management-watch';
import { enablementWorkflowId } from '../../core/lifecycle';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { LOCAL_RELEASE_IMAGE, createLocalHostedCluster } from '../../dev/autonode/hosted-cluster';
import { startManagementWatch } from '../../workers/management-watch';
import { createAutonodeWorkers, runWorkers } from '../../workers/workers';
import type { ManagementWatchStatus } from '../../workflows/management-watch';
import { type EnablementStatus } from '../../workflows/enablement';
import { installCrds } from '../support/crds';
import { conditionOf, readHostedCluster, roleEc2ClientFactory, workflowStatus } from '../support/enablement';
import { eventually } from '../support/eventually';
import { forceDeleteNodeClaims } from '../support/lifecycle';
import { describeGrant, describeRequest, grantsFor, rbacUsage, requestsOf, usageTable } from '../support/rbac-audit';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, workflowBundle, type TemporalHarness } from '../support/temporal';
import { uniqueNetworkOctet } from '../support/network';

jest.setTimeout(400_000);

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const WORKER = { namespace: 'autonode-system', name: 'autonode-worker' };
const USERNAME = `system:serviceaccount:${WORKER.namespace}:${WORKER.name}`;
/** the label k8s/worker/worker.yaml puts on the RoleBinding an operator copies into each HostedCluster namespace */
const PER_NAMESPACE = { key: 'autonode.io/binding', value: 'per-hostedcluster-namespace' };

const ObjectSchema = z.object({ apiVersion: z.string(), kind: z.string(), metadata: z.object({ name: z.string(), namespace: z.string().optional(), labels: z.record(z.string(), z.string()).optional() }).passthrough() }).passthrough();

/** worker.yaml's RBAC (not its Deployment), its per-namespace RoleBinding moved into `hcNamespace`. */
function workerRbac(hcNamespace: string): z.infer<typeof ObjectSchema>[] {
  const docs = z.array(ObjectSchema).parse(loadAllYaml(readFileSync(join(__dirname, '..', '..', 'k8s', 'worker', 'worker.yaml'), 'utf8')).filter((d) => d !== null));
  const perNamespace = docs.filter((d) => d.metadata.labels?.[PER_NAMESPACE.key] === PER_NAMESPACE.value);
  if (perNamespace.length !== 1 || perNamespace[0]?.kind !== 'RoleBinding') throw new Error(`worker.yaml should have one RoleBinding labelled ${PER_NAMESPACE.key}=${PER_NAMESPACE.value}`);
  return docs
    .filter((d) => d.kind !== 'Deployment')
    .map((d) => (perNamespace.includes(d) ? { ...d, metadata: { ...d.metadata, namespace: hcNamespace } } : d));
}

describe("the workers' management RBAC (k8s/worker/worker.yaml): sufficient and all used (real API server, its audit log)", () => {
  const stack = loadStackInfo();
  const id = randomUUID().slice(0, 6);
  const hc = { namespace: `rbac-${id}`, name: 'least', infraID: `rb-${id}`, region: stack.ec2.region, releaseImage: LOCAL_RELEASE_IMAGE };
  const ref = { namespace: hc.namespace, name: hc.name };
  const roleArn = (n: number) => `arn:aws:iam::123456789012:role/autonode-rbac-${id}-${n}`;
  const autoNode = (role: string) => ({ provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: role } } } });
  const admin = kubeClientsFromKubeconfigFile(stack.management.kubeconfigPath);
  const guest = kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath);
  const ec2ClientFor = roleEc2ClientFactory(stack);
  const taskQueues = { control: `rbac-${id}-control`, cloud: `rbac-${id}-cloud`, packing: `rbac-${id}-packing` };
  const applied = workerRbac(hc.namespace);
  let since: Date;
  let t: TemporalHarness;
  let workers: Worker[] = [];
  let running: Promise<void> | undefined;

  const setAutoNode = (value: unknown) => admin.customObjects.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, ...ref, body: { spec: { autoNode: value } } }, mergePatch);
  const gate = async (autoprovision: boolean) => {
    await startManagementWatch(t.client, { autoprovision, namespace: hc.namespace, taskQueues });
    await eventually(`the management watch in ${autoprovision ? 'Autoprovision' : 'report-only'} mode`, async () => (await t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).query<ManagementWatchStatus>('status')).autoprovision === autoprovision);
  };
  const enabled = () =>
    eventually('the enablement Enabled and reporting status.autoNode', async () => {
      const status = await t.client.workflow.getHandle(enablementWorkflowId(ref)).query<EnablementStatus>('status').catch(() => undefined);
      const h = await readHostedCluster(admin, ref);
      return status?.phase === 'Enabled' && h?.status?.autoNode ? status : undefined;
    }, 120_000);
  const stopWorkers = async () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await running;
    running = undefined;
  };

  beforeAll(async () => {
    if (!stack.management.auditLogPath) throw new Error('the local stack keeps no management audit log (dev/stack/launcher.ts: serviceAccountAudit)');
    since = new Date();
    await installCrds(stack.guest.kubeconfigPath);
    // the guest is this file's alone while it runs; another file's `default` class names another network
    const leftovers = (await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' })) as { items: { metadata: { name: string } }[] };
    await forceDeleteNodeClaims(guest, leftovers.items.map((c) => c.metadata.name));
    await guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: 'default' }).catch(() => undefined);
    await createClusterNetwork(ec2ClientFor({ name: hc.infraID, region: hc.region }), { clusterName: hc.infraID, zones: ['us-east-1a', 'us-east-1b'], octet: uniqueNetworkOctet() });
    // what HyperShift publishes (as the cluster's admin), then the workers' RBAC, as an operator applies it
    await createLocalHostedCluster(admin, readFileSync(stack.guest.kubeconfigPath, 'utf8'), hc);
    for (const object of applied) await admin.objects.patch(object as KubernetesObject, undefined, undefined, 'autonode-rbac-test', true, PatchStrategy.ServerSideApply);

    // the workers' only management identity: a token of worker.yaml's ServiceAccount
    const token = (await admin.core.createNamespacedServiceAccountToken({ ...WORKER, body: { spec: { audiences: [], expirationSeconds: 3600 } } })).status?.token;
    if (!token) throw new Error('TokenRequest returned no token');
    const server = admin.config.getCurrentCluster();
    if (!server?.caData) throw new Error('the management admin kubeconfig has no CA data');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'management', server: server.server, caData: server.caData, skipTLSVerify: false }],
      users: [{ name: USERNAME, token }],
      contexts: [{ name: 'worker', cluster: 'management', user: USERNAME }],
      currentContext: 'worker',
    });
    const management = kubeClientsFromConfig(kc);

    t = await temporalHarness();
    // the management watch is one per Temporal namespace: another file's is not this file's
    await t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('another test file left it').catch(() => undefined);
    workers = await createAutonodeWorkers({
      connection: t.connection,
      client: t.client,
      namespace: t.namespace,
      resolve: managementSecretResolver({ management, ec2ClientFor }),
      management,
      workflows: { workflowBundle: workflowBundle() },
      taskQueues,
    });
    running = runWorkers(workers);
  });

  afterAll(async () => {
    await t?.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('test over').catch(() => undefined);
    if ((await workflowStatus(t.client, enablementWorkflowId(ref)).catch(() => undefined)) === 'RUNNING') await t.client.workflow.getHandle(enablementWorkflowId(ref)).terminate('test over');
    await stopWorkers();
    await t?.close();
  });

  it('the ServiceAccount may list and watch HostedClusters in every namespace, as the production management watch does', async () => {
    // (the test's own watch serves its namespace only: other files' HostedClusters are not its to enable)
    const authz = admin.config.makeApiClient(AuthorizationV1Api);
    for (const verb of ['list', 'watch']) {
      const review = await authz.createSubjectAccessReview({
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: USERNAME, groups: ['system:serviceaccounts', `system:serviceaccounts:${WORKER.namespace}`, 'system:authenticated'], resourceAttributes: { group: HOSTED_CLUSTERS.group, resource: HOSTED_CLUSTERS.plural, verb } } },
      });
      expect({ verb, allowed: review.status?.allowed }).toEqual({ verb, allowed: true });
    }
  });

  it('gate off, gate on, steady state, a new role, disable, re-enable, deletion: nothing denied, every grant used', async () => {
    // gate off: spec.autoNode only gets AutoNodeEnabled=False/FeatureGateDisabled
    await gate(false);
    await setAutoNode(autoNode(roleArn(1)));
    await eventually('AutoNodeEnabled=False/FeatureGateDisabled', async () => conditionOf(await readHostedCluster(admin, ref), 'AutoNodeEnabled')?.reason === 'FeatureGateDisabled');

    // gate on: enabled through the management watch, to steady state
    await gate(true);
    const first = await enabled();
    expect(first.cluster).toBe(hc.infraID);
    const secretRef = autonodeKubeconfigSecret(ref);
    const written = await admin.core.readNamespacedSecret(secretRef);

    // a new role: a new guest token, written over the Secret the first enablement wrote
    await setAutoNode(autoNode(roleArn(2)));
    await eventually('the guest token Secret rewritten for the new role', async () => (await admin.core.readNamespacedSecret(secretRef)).metadata?.resourceVersion !== written.metadata?.resourceVersion);
    await enabled();

    // spec.autoNode removed: the teardown ends the enablement and removes its Secret
    await setAutoNode(null);
    await eventually('the enablement workflow completed', async () => (await workflowStatus(t.client, enablementWorkflowId(ref))) === 'COMPLETED', 180_000);
    await expect(admin.core.readNamespacedSecret(secretRef)).rejects.toThrow();

    // enabled again, then the HostedCluster deleted: the finalizer holds it until the teardown is done
    await setAutoNode(autoNode(roleArn(2)));
    await enabled();
    await admin.customObjects.deleteNamespacedCustomObject({ ...HOSTED_CLUSTERS, ...ref });
    await eventually('the HostedCluster gone', async () => (await readHostedCluster(admin, ref)) === undefined, 180_000);
    await eventually('the enablement workflow completed', async () => (await workflowStatus(t.client, enablementWorkflowId(ref))) === 'COMPLETED', 30_000);

    // the workers stop (their watch ends): every request they made is in the log now
    await t.client.workflow.getHandle(MANAGEMENT_WATCH_WORKFLOW_ID).terminate('test over');
    await stopWorkers();

    const auditLog = readFileSync(stack.management.auditLogPath ?? '', 'utf8');
    const grants = grantsFor(applied, WORKER);
    expect(grants.length).toBeGreaterThan(0);
    const usage = rbacUsage(grants, requestsOf(auditLog, USERNAME, since));
    console.log(`worker RBAC, requests per grant (${USERNAME}):\n${usageTable(usage)}\nnon-resource requests (every authenticated user's): ${[...new Set(usage.nonResource.map((r) => `${r.verb} ${r.requestURI}`))].join(', ') || 'none'}`);
    expect(usage.denied.map(describeRequest)).toEqual([]);
    expect(usage.unused.map((g) => `granted, never used: ${describeGrant(g)}`)).toEqual([]);
    // and nothing the workers did was allowed by some other role than worker.yaml's
    expect(usage.uncovered.map(describeRequest)).toEqual([]);
    expect(usage.used.length).toBe(grants.length);
  });
});
