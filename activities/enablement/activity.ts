/**
 * The enablement workflow's activities (task queue `autonode-control`): read and report
 * on a HostedCluster in the management cluster, and set a guest cluster up for autonode —
 * and take it down again. Secrets (the guest's admin kubeconfig, autonode's token, the
 * node bootstrap userData) are read and written here, management cluster to guest, and
 * never returned: results carry names, counts and hashes.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { type Condition } from '../../core/api';
import { conditionSchema } from '../../core/api/primitives';
import { RELEASE_METADATA_LABEL, releaseImagesFor, type ReleaseImages } from '../../core/enablement/release';
import { validateAutoNode } from '../../core/hostedcluster';
import { AUTONODE_NAMESPACE, autonodeKubeconfigSecret } from '../../core/hostedcluster/secrets';
import { parseQuantity, toMilliUnits } from '../../core/scheduling/quantity';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, disruptionWorkflowId, interruptionWorkflowId, provisionerWorkflowId, setCondition, watchWorkflowId, type ConditionUpdate } from '../../core/lifecycle';
import { type ClusterResolver } from '../cluster';
import { kubeClientsFromKubeconfigString, type KubeClients } from '../kube/clients';
import { isConflict, isNotFound } from '../kube/errors';
import { applyAll, autonodeKubeconfig, deleteAll, guestCrdManifests, guestRbacManifests, waitEstablished } from './guest';

export const HOSTED_CLUSTERS = { group: 'hypershift.openshift.io', version: 'v1beta1', plural: 'hostedclusters' } as const;
/** keeps a HostedCluster's deletion waiting until its instances are gone */
export const ENABLEMENT_FINALIZER = 'autonode.io/enablement';
/** where the local stack (and an operator without HyperShift's) keeps the release metadata ConfigMaps: autonode's own namespace */
export const RELEASE_METADATA_NAMESPACE = AUTONODE_NAMESPACE;
/** The EC2NodeClass every enabled cluster has (the seeds' NodePools name it). */
export const DEFAULT_NODE_CLASS = 'default';

export const HostedClusterRefSchema = z.object({ namespace: z.string().min(1), name: z.string().min(1) });
export type HostedClusterRef = z.infer<typeof HostedClusterRefSchema>;

/** HyperShift publishes the guest's admin kubeconfig as `<name>-admin-kubeconfig` in the HostedCluster's namespace. */
export const adminKubeconfigSecret = (hc: HostedClusterRef) => ({ namespace: hc.namespace, name: `${hc.name}-admin-kubeconfig`, key: 'kubeconfig' });
/** autonode's own guest identity, for the workers (ClusterRef.kubeconfigSecret) */
export { autonodeKubeconfigSecret } from '../../core/hostedcluster/secrets';
/** the node bootstrap payload the enablement puts into every EC2NodeClass (HyperShift's ignition userData) */
export const userDataSecret = (hc: HostedClusterRef) => ({ namespace: hc.namespace, name: `${hc.name}-autonode-user-data`, key: 'value' });

export type Observation =
  | { state: 'gone' }
  | { state: 'notConfigured'; deleting: boolean }
  | { state: 'invalid'; deleting: boolean; problems: { field: string; reason: string; message: string }[] }
  | { state: 'ok'; deleting: boolean; config: { infraID: string; region: string; roleARN: string; releaseImage: string; interruptionQueue?: string; generation?: number } };

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const MetaSchema = z.object({ metadata: z.object({ deletionTimestamp: z.unknown().optional(), finalizers: z.array(z.string()).optional(), uid: z.string().optional() }) });
const StoredStatusSchema = z.object({ status: z.object({ conditions: z.array(conditionSchema).optional() }).passthrough().optional() });

export interface EnablementActivityDeps {
  /** the management cluster, as the worker's own identity */
  management: KubeClients;
  /** the workers' resolver: autonode's guest identity and the cluster's cloud */
  resolve: ClusterResolver;
  temporal: Client;
  now?: () => Date;
  /** lifetime of autonode's guest token (default GUEST_TOKEN_SECONDS); the workflow renews it at half */
  guestTokenSeconds?: number;
}

export function createEnablementActivities(deps: EnablementActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const hostedClusters = deps.management.customObjects;

  async function readHostedCluster(hc: HostedClusterRef): Promise<unknown> {
    try {
      return await hostedClusters.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async function guestAdmin(hc: HostedClusterRef): Promise<KubeClients> {
    const ref = adminKubeconfigSecret(hc);
    const secret = await deps.management.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
    const encoded = secret.data?.[ref.key];
    if (!encoded) throw new Error(`Secret ${ref.namespace}/${ref.name} has no "${ref.key}": HyperShift publishes the guest's admin kubeconfig there`);
    return kubeClientsFromKubeconfigString(Buffer.from(encoded, 'base64').toString('utf8'));
  }

  async function setFinalizer(hc: HostedClusterRef, present: boolean): Promise<void> {
    const read = await readHostedCluster(hc);
    if (read === undefined) return;
    const finalizers = MetaSchema.parse(read).metadata.finalizers ?? [];
    const has = finalizers.includes(ENABLEMENT_FINALIZER);
    if (has === present) return;
    const next = present ? [...finalizers, ENABLEMENT_FINALIZER] : finalizers.filter((f) => f !== ENABLEMENT_FINALIZER);
    await hostedClusters.patchNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body: { metadata: { finalizers: next } } }, mergePatch);
  }

  return {
    /** What the HostedCluster asks for now (validated), and whether it is being deleted. */
    async observeHostedCluster(raw: { hostedCluster: HostedClusterRef }): Promise<Observation> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      const read = await readHostedCluster(hc);
      if (read === undefined) return { state: 'gone' };
      const deleting = MetaSchema.safeParse(read).data?.metadata.deletionTimestamp !== undefined;
      const validated = validateAutoNode(read);
      if (validated.status === 'notConfigured') return { state: 'notConfigured', deleting };
      if (validated.status === 'invalid') return { state: 'invalid', deleting, problems: validated.problems.map((p) => ({ field: p.field, reason: p.reason, message: p.message })) };
      const { infraID, region, roleARN, releaseImage, interruptionQueue, generation } = validated.config;
      return { state: 'ok', deleting, config: { infraID, region, roleARN, releaseImage, ...(interruptionQueue === undefined ? {} : { interruptionQueue }), ...(generation === undefined ? {} : { generation }) } };
    },

    /**
     * The guest gets autonode's CRDs and identity (server-side apply), and the management
     * cluster a Secret with a fresh token for that identity; the HostedCluster a finalizer.
     */
    async enableGuest(raw: { hostedCluster: HostedClusterRef }): Promise<{ kubeconfigSecret: { namespace: string; name: string; key: string }; tokenExpiresAt: string; tokenRenewAfter: string }> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      await setFinalizer(hc, true);
      const admin = await guestAdmin(hc);
      const crds = guestCrdManifests();
      await applyAll(admin, crds);
      await waitEstablished(admin, crds);
      await applyAll(admin, guestRbacManifests());
      const { kubeconfig, expiresAt, renewAfter } = await autonodeKubeconfig(admin, deps.guestTokenSeconds, now);
      const ref = autonodeKubeconfigSecret(hc);
      // No ownerReference to the HostedCluster: it is in another namespace, and the garbage
      // collector deletes a dependent whose owner is not in its own. The teardown deletes it.
      const body = {
        metadata: {
          name: ref.name,
          namespace: ref.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'autonode', 'autonode.io/hosted-cluster-namespace': hc.namespace, 'autonode.io/hosted-cluster-name': hc.name },
        },
        type: 'Opaque',
        data: { [ref.key]: Buffer.from(kubeconfig, 'utf8').toString('base64') },
      };
      try {
        await deps.management.core.createNamespacedSecret({ namespace: ref.namespace, body });
      } catch (err) {
        if (!isConflict(err)) throw err;
        await deps.management.core.replaceNamespacedSecret({ namespace: ref.namespace, name: ref.name, body });
      }
      return { kubeconfigSecret: ref, tokenExpiresAt: expiresAt, tokenRenewAfter: renewAfter };
    },

    /**
     * Every EC2NodeClass in the guest gets the release's AMI (by architecture) and the
     * cluster's userData; a guest without one gets `default`, selecting the cluster's
     * subnets and security groups by its discovery tag (`karpenter.sh/discovery: <infraID>`).
     */
    async reconcileNodeClasses(raw: { hostedCluster: HostedClusterRef; infraID: string; region: string; releaseImage: string }): Promise<{ images: ReleaseImages; userDataHash: string; created: string[]; updated: string[]; classes: number }> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      const images = await releaseImages(deps.management, raw.releaseImage, raw.region);
      const userData = await readUserData(deps.management, hc);
      const admin = await guestAdmin(hc);
      const api = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;
      const listed = z.object({ items: z.array(z.object({ metadata: z.object({ name: z.string() }), spec: z.record(z.string(), z.unknown()).optional() })) }).parse(await admin.customObjects.listClusterCustomObject(api));
      const amiSelectorTerms = Object.values(images).map((id) => ({ id }));
      const created: string[] = [];
      const updated: string[] = [];
      // The cluster's own class, kept beside any the admin made (HyperShift manages `default`;
      // an admin's class alone would leave pools that name `default` unplaceable).
      if (!listed.items.some((item) => item.metadata.name === DEFAULT_NODE_CLASS)) {
        const discovery = [{ tags: { 'karpenter.sh/discovery': raw.infraID } }];
        await admin.customObjects.createClusterCustomObject({
          ...api,
          body: {
            apiVersion: 'karpenter.k8s.aws/v1',
            kind: 'EC2NodeClass',
            metadata: { name: DEFAULT_NODE_CLASS, labels: { 'app.kubernetes.io/managed-by': 'autonode' } },
            spec: { amiFamily: 'Custom', amiSelectorTerms, subnetSelectorTerms: discovery, securityGroupSelectorTerms: discovery, ...(userData === undefined ? {} : { userData }) },
          },
        });
        created.push(DEFAULT_NODE_CLASS);
      }
      for (const item of listed.items) {
        const spec = item.spec ?? {};
        const wantUserData = userData !== undefined && spec.userData !== userData;
        const wantAmis = JSON.stringify(spec.amiSelectorTerms) !== JSON.stringify(amiSelectorTerms);
        if (!wantUserData && !wantAmis) continue;
        await admin.customObjects.patchClusterCustomObject(
          { ...api, name: item.metadata.name, body: { spec: { ...(wantAmis ? { amiSelectorTerms } : {}), ...(wantUserData ? { userData } : {}) } } },
          mergePatch,
        );
        updated.push(item.metadata.name);
      }
      return { images, userDataHash: userData === undefined ? '' : createHash('sha256').update(userData).digest('hex').slice(0, 12), created, updated, classes: listed.items.length + created.length };
    },

    /** The cluster's watch workflow (it starts the provisioner when pods are pending). */
    async startClusterWorkflows(raw: { cluster: unknown; taskQueues: unknown }): Promise<void> {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const taskQueues = TaskQueuesSchema.parse(raw.taskQueues);
      await deps.temporal.workflow.start('watchWorkflow', {
        taskQueue: taskQueues.control,
        workflowId: watchWorkflowId(cluster.name),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ cluster, taskQueues }],
      });
      await deps.temporal.workflow.start('disruptionWorkflow', {
        taskQueue: taskQueues.control,
        workflowId: disruptionWorkflowId(cluster.name),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ cluster, taskQueues }],
      });
    },

    /**
     * The cluster's interruption workflow polls `queue`, or — without one — does not run. A
     * workflow polling another queue is ended first (one with replacements in flight leaves
     * their nodes tainted; the claims' own workflows and the provisioner carry on).
     */
    async syncInterruption(raw: { cluster: unknown; taskQueues: unknown; queue?: string }): Promise<void> {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const taskQueues = TaskQueuesSchema.parse(raw.taskQueues);
      const queue = z.string().min(1).optional().parse(raw.queue);
      const handle = deps.temporal.workflow.getHandle(interruptionWorkflowId(cluster.name));
      const running = await handle.describe().then((d) => d.status.name === 'RUNNING', (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      });
      if (running) {
        const polling = await handle.query<{ queue: string }>('status').then((s) => s.queue);
        if (polling === queue) return;
        await handle.terminate(queue ? `the cluster's interruption queue is ${queue} now` : 'the cluster names no interruption queue now').catch((err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        });
      }
      if (!queue) return;
      await deps.temporal.workflow.start('interruptionWorkflow', {
        taskQueue: taskQueues.control,
        workflowId: interruptionWorkflowId(cluster.name),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ cluster, taskQueues, queue }],
      });
    },

    /** Conditions and `status.autoNode` (nodes, NodeClaims, vCPUs: what HyperShift reports for billing). */
    async reportHostedCluster(raw: { hostedCluster: HostedClusterRef; conditions: ConditionUpdate[]; generation?: number; cluster?: unknown; clear?: boolean }): Promise<{ nodeCount: number; nodeClaimCount: number; vCPUs: number } | undefined> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      const read = await readHostedCluster(hc);
      if (read === undefined) return undefined;
      let counts: { nodeCount: number; nodeClaimCount: number; vCPUs: number } | undefined;
      if (raw.cluster !== undefined) {
        const { guest } = await deps.resolve(ClusterRefSchema.parse(raw.cluster));
        const claims = z.object({ items: z.array(z.object({ status: z.object({ nodeName: z.string().optional(), capacity: z.record(z.string(), z.string()).optional() }).optional() })) }).parse(
          await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }),
        );
        const vCPUs = claims.items.reduce((n, c) => n + cpuCores(c.status?.capacity?.cpu), 0);
        counts = { nodeCount: claims.items.filter((c) => c.status?.nodeName).length, nodeClaimCount: claims.items.length, vCPUs };
      }
      let conditions: Condition[] = StoredStatusSchema.safeParse(read).data?.status?.conditions ?? [];
      if (raw.clear) conditions = conditions.filter((c) => !c.type.startsWith('AutoNode'));
      const at = now().toISOString();
      for (const update of raw.conditions) conditions = setCondition(conditions, update, at, raw.generation);
      const body = { status: { conditions, autoNode: raw.clear ? null : (counts ?? null) } };
      await hostedClusters.patchNamespacedCustomObjectStatus({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body }, mergePatch).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      return counts;
    },

    /**
     * Teardown, step 1: no new capacity. The provisioner is told to stop and stays running,
     * parked — terminating it would not do: the watcher's doorbell starts a provisioner
     * whenever pods are pending, and pods are pending while their nodes drain. Returns once
     * the provisioner says nothing more will be created.
     */
    async stopProvisioning(raw: { cluster: unknown; taskQueues?: unknown }): Promise<void> {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...(raw.taskQueues ?? {}) });
      // disruption and interruption first: a teardown deletes every claim itself, and replacements would be new capacity
      await deps.temporal.workflow.getHandle(disruptionWorkflowId(cluster.name)).terminate('autonode is being disabled for this cluster').catch(() => undefined);
      await deps.temporal.workflow.getHandle(interruptionWorkflowId(cluster.name)).terminate('autonode is being disabled for this cluster').catch(() => undefined);
      const handle = await deps.temporal.workflow.signalWithStart('provisionerWorkflow', {
        taskQueue: taskQueues.control,
        workflowId: provisionerWorkflowId(cluster.name),
        args: [{ cluster, taskQueues }],
        signal: 'stop',
        signalArgs: ['autonode is being disabled for this cluster'],
      });
      for (;;) {
        const status = await handle.query<{ stopped?: string }>('status');
        if (status.stopped !== undefined) return;
        Context.current().heartbeat();
        await sleepMs(250);
      }
    },

    /**
     * Teardown, step 2 (repeated): every NodeClaim deleted (each one's workflow drains its
     * node, PDB-aware, and terminates its instance); says what is left in the guest and in EC2.
     */
    async removeNodeClaims(raw: { hostedCluster: HostedClusterRef; cluster: unknown }): Promise<{ nodeClaims: number; instances: number }> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const api = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
      let nodeClaims = 0;
      try {
        const admin = await guestAdmin(hc);
        const listed = z.object({ items: z.array(z.object({ metadata: z.object({ name: z.string(), deletionTimestamp: z.unknown().optional() }) })) }).parse(await admin.customObjects.listClusterCustomObject(api));
        nodeClaims = listed.items.length;
        for (const claim of listed.items) {
          if (claim.metadata.deletionTimestamp !== undefined) continue;
          await admin.customObjects.deleteClusterCustomObject({ ...api, name: claim.metadata.name }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        }
      } catch (err) {
        // a guest already gone (its admin Secret deleted with the HostedCluster) has no claims to delete
        if (!isNotFound(err)) throw err;
      }
      const { cloud } = await deps.resolve(cluster);
      const instances = (await cloud.list()).length;
      return { nodeClaims, instances };
    },

    /** Teardown, last step: the watcher ends, autonode's identity (and CRDs if asked) leave the guest, the finalizer goes. */
    async disableGuest(raw: { hostedCluster: HostedClusterRef; cluster?: unknown; removeCrds?: boolean }): Promise<void> {
      const hc = HostedClusterRefSchema.parse(raw.hostedCluster);
      if (raw.cluster !== undefined) {
        const cluster = ClusterRefSchema.parse(raw.cluster);
        // the watcher first: it is what rings (and would restart) the provisioner
        await deps.temporal.workflow.getHandle(watchWorkflowId(cluster.name)).terminate('autonode disabled for this cluster').catch(() => undefined);
        await deps.temporal.workflow.getHandle(provisionerWorkflowId(cluster.name)).terminate('autonode disabled for this cluster').catch(() => undefined);
      }
      try {
        const admin = await guestAdmin(hc);
        await deleteAll(admin, guestRbacManifests());
        if (raw.removeCrds) await deleteAll(admin, guestCrdManifests());
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const ref = autonodeKubeconfigSecret(hc);
      await deps.management.core.deleteNamespacedSecret({ namespace: ref.namespace, name: ref.name }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      await setFinalizer(hc, false);
    },
  };
}

export type EnablementActivities = ReturnType<typeof createEnablementActivities>;

/** "4" → 4, "3500m" → 3.5 (any Kubernetes quantity; unreadable counts as 0) */
function cpuCores(text: string | undefined): number {
  const parsed = text === undefined ? undefined : parseQuantity(text);
  return parsed?.ok ? Number(toMilliUnits(parsed.quantity.nanos)) / 1000 : 0;
}

async function releaseImages(management: KubeClients, releaseImage: string, region: string): Promise<ReleaseImages> {
  const maps = await management.core.listNamespacedConfigMap({ namespace: RELEASE_METADATA_NAMESPACE, labelSelector: `${RELEASE_METADATA_LABEL}=true` });
  const map = maps.items.find((m) => m.data?.releaseImage === releaseImage);
  if (!map) throw new Error(`no release metadata for ${releaseImage}: expected a ConfigMap in ${RELEASE_METADATA_NAMESPACE} labelled ${RELEASE_METADATA_LABEL}=true with data.releaseImage = the HostedCluster's spec.release.image`);
  const images = releaseImagesFor(map.data?.stream ?? '', region);
  if (!images.ok) throw new Error(`release ${releaseImage}: ${images.reason}`);
  return images.images;
}

async function readUserData(management: KubeClients, hc: HostedClusterRef): Promise<string | undefined> {
  const ref = userDataSecret(hc);
  try {
    const secret = await management.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
    const encoded = secret.data?.[ref.key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
