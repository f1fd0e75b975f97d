import { AppsV1Api, CoreV1Api, KubeConfig, PatchStrategy, PolicyV1Api, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { listWatch } from '../../activities/kube/list-watch';
import { type StoredNodeClaim } from '../../core/api/nodeclaim';
import { bundledOnDemandPrices } from '../../core/instancetypes/catalog';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { type DisruptionWorkflowInput } from '../../workflows/disruption';
import { type LifecycleHarness } from './lifecycle';
import { loadStackInfo } from './stack';

// Builders for disruption tests on the real stack (test/integration/disruption*.test.ts):
// NodePools on the harness's node class, Deployments pinned to them, the cluster's
// disruption workflow with short delays, and a watch that records, event by event, how
// many of a Deployment's pods are available.

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const nodePools = { group: 'karpenter.sh', version: 'v1', plural: 'nodepools' } as const;

export interface PoolOptions {
  disruption: Record<string, unknown>;
  /** template labels (a change drifts every node) */
  labels?: Record<string, string>;
  /** instance types the pool may launch (default m5.large: with the harness's kubelet reservations, 1500m allocatable) */
  types?: string[];
  /** default Never */
  expireAfter?: string;
  nodeClass?: string;
}

export interface DeploymentOptions {
  replicas: number;
  pool: string;
  /** per pod (default 1500m: one per m5.large) */
  cpu?: string;
}

export type DisruptionKit = ReturnType<typeof disruptionKit>;

/** The builders, bound to one harness and one namespace (created by the caller). */
export function disruptionKit(lh: LifecycleHarness, namespace: string) {
  const apps = lh.guest.config.makeApiClient(AppsV1Api);
  const policy = lh.guest.config.makeApiClient(PolicyV1Api);

  const claimsOf = async (pool: string) => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
  const podsOf = async (app: string) => (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;

  return {
    apps,
    policy,
    claimsOf,
    podsOf,

    /** A NodePool on the harness's node class; its nodes carry a taint only this file's pods tolerate. */
    async createPool(name: string, o: PoolOptions): Promise<void> {
      await lh.guest.customObjects.createClusterCustomObject({
        ...nodePools,
        body: {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodePool',
          metadata: { name },
          spec: {
            disruption: o.disruption,
            template: {
              metadata: { labels: o.labels ?? {} },
              spec: {
                nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.nodeClass ?? lh.nodeClassName },
                requirements: [
                  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: o.types ?? ['m5.large'] },
                  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                ],
                taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
                expireAfter: o.expireAfter ?? 'Never',
              },
            },
          },
        },
      });
    },

    /** JSON merge patch of a NodePool's spec (arrays, such as budgets, are replaced whole). */
    async patchPool(name: string, spec: Record<string, unknown>): Promise<void> {
      await lh.guest.customObjects.patchClusterCustomObject({ ...nodePools, name, body: { spec } }, mergePatch);
    },

    /** Deletes a pool's Deployment, the pool and its claims, and waits for the claims to go. */
    async removePool(name: string, app: string): Promise<void> {
      await apps.deleteNamespacedDeployment({ namespace, name: app }).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ ...nodePools, name }).catch(() => undefined);
      for (const c of await claimsOf(name)) await lh.claims.delete(c.metadata.name).catch(() => undefined);
      await eventuallyQuiet(async () => (await claimsOf(name)).length === 0, 180_000);
    },

    async deploy(name: string, o: DeploymentOptions): Promise<void> {
      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name },
          spec: {
            replicas: o.replicas,
            selector: { matchLabels: { app: name } },
            template: {
              metadata: { labels: { app: name } },
              spec: {
                nodeSelector: { 'karpenter.sh/nodepool': o.pool },
                tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
                containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: o.cpu ?? '1500m', memory: '512Mi' } } }],
              },
            },
          },
        },
      });
    },

    async scale(name: string, replicas: number): Promise<void> {
      await apps.patchNamespacedDeploymentScale({ namespace, name, body: { spec: { replicas } } }, mergePatch);
    },

    /** The cluster's disruption workflow (one per cluster: a second call finds the first), polling every 2 s, validating after 3 s. */
    startDisruption(extra: Partial<DisruptionWorkflowInput> = {}) {
      const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
      const input: DisruptionWorkflowInput = { cluster, taskQueues: lh.taskQueues, pollInterval: '2s', validationDelay: '3s', ...extra };
      return lh.t.client.workflow.start('disruptionWorkflow', {
        taskQueue: lh.taskQueues.control,
        workflowId: disruptionWorkflowId(cluster.name),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [input],
      });
    },
  };
}

export const initialized = (c: StoredNodeClaim) => c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ?? false;
export const instanceIdOf = (c: StoredNodeClaim) => c.status?.providerID?.split('/').pop();
export const instanceTypeOf = (c: StoredNodeClaim) => c.metadata.labels?.['node.kubernetes.io/instance-type'];
export const isRunningOn = (nodes: ReadonlySet<string | undefined>) => (p: V1Pod) => p.status?.phase === 'Running' && p.metadata?.deletionTimestamp === undefined && nodes.has(p.spec?.nodeName);

/**
 * What a set of on-demand claims costs, USD per hour, by the bundled price table (the one the
 * workers plan with when no Pricing API answers, as on the local stack). Throws for a claim
 * that is not on-demand or whose type has no price: the sum would mean nothing.
 */
export function onDemandCostPerHour(claims: readonly StoredNodeClaim[]): number {
  const prices = bundledOnDemandPrices().onDemand;
  let sum = 0;
  for (const c of claims) {
    const type = instanceTypeOf(c);
    const price = type ? prices[type] : undefined;
    if (c.metadata.labels?.['karpenter.sh/capacity-type'] !== 'on-demand' || price === undefined) {
      throw new Error(`NodeClaim ${c.metadata.name} (${type}, ${c.metadata.labels?.['karpenter.sh/capacity-type']}) has no on-demand price`);
    }
    sum += price;
  }
  return Math.round(sum * 1e6) / 1e6;
}

async function eventuallyQuiet(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const PodSchema = z.object({
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).nullish(), deletionTimestamp: z.string().nullish() }),
  spec: z.object({ nodeName: z.string().nullish() }).nullish(),
  status: z
    .object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string().nullish() })).nullish() })
    .nullish(),
});

/** One pod as the availability watch last saw it. */
export interface WatchedPod {
  /** Ready=True and not being deleted: what a PodDisruptionBudget counts as healthy */
  healthy: boolean;
  deleting: boolean;
  /** the API server marked it DisruptionTarget (EvictionByEvictionAPI): it was evicted, not deleted */
  evicted: boolean;
  node?: string;
}

export interface AvailabilityWatch {
  /** pods now, by name (deleted ones are dropped) */
  pods(): ReadonlyMap<string, WatchedPod>;
  healthy(): number;
  /** from now on, `fewestHealthy` is the minimum over every event */
  startRecording(): void;
  /** the fewest healthy pods seen after an event since `startRecording`, and when */
  fewestHealthy(): { healthy: number; at: string } | undefined;
  /** every pod seen evicted through the Eviction API since the watch began */
  evicted(): string[];
  /** pods deleted (gone or given a deletionTimestamp) without an eviction, since `startRecording` */
  deletedWithoutEviction(): string[];
  stop(): Promise<void>;
}

/**
 * Watches one app's pods in a namespace and keeps, event by event, the count of healthy
 * ones (Ready, not being deleted: what a PodDisruptionBudget counts). A poll would miss
 * the moment between an eviction and the replacement's readiness; a watch does not.
 */
export async function watchAvailability(namespace: string, app: string): Promise<AvailabilityWatch> {
  const kc = new KubeConfig();
  kc.loadFromFile(loadStackInfo().guest.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const pods = new Map<string, WatchedPod>();
  const evicted = new Set<string>();
  const deletedPlain = new Set<string>();
  let recording = false;
  let fewest: { healthy: number; at: string } | undefined;
  const count = () => [...pods.values()].filter((p) => p.healthy).length;
  const abort = new AbortController();
  let listed!: () => void;
  const firstList = new Promise<void>((r) => (listed = r));
  const done = listWatch({
    watch: new Watch(kc),
    path: `/api/v1/namespaces/${namespace}/pods`,
    list: () => core.listNamespacedPod({ namespace }),
    signal: abort.signal,
    stallMs: 60_000,
    onRelist: async () => listed(),
    onEvent: async ({ type, object }) => {
      const pod = PodSchema.safeParse(object);
      if (!pod.success || pod.data.metadata.labels?.app !== app) return;
      const name = pod.data.metadata.name;
      const conditions = pod.data.status?.conditions ?? [];
      const wasEvicted = conditions.some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'EvictionByEvictionAPI');
      if (wasEvicted) evicted.add(name);
      const deleting = type === 'DELETED' || !!pod.data.metadata.deletionTimestamp;
      if (recording && deleting && !wasEvicted && !evicted.has(name)) deletedPlain.add(name);
      if (type === 'DELETED') pods.delete(name);
      else {
        const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
        pods.set(name, { healthy: ready && !deleting, deleting, evicted: wasEvicted || evicted.has(name), ...(pod.data.spec?.nodeName ? { node: pod.data.spec.nodeName } : {}) });
      }
      if (recording) {
        const healthy = count();
        if (fewest === undefined || healthy < fewest.healthy) fewest = { healthy, at: new Date().toISOString() };
      }
    },
  });
  await firstList;
  return {
    pods: () => pods,
    healthy: count,
    startRecording() {
      recording = true;
      fewest = { healthy: count(), at: new Date().toISOString() };
    },
    fewestHealthy: () => fewest,
    evicted: () => [...evicted].sort(),
    deletedWithoutEviction: () => [...deletedPlain].sort(),
    async stop() {
      abort.abort();
      await done;
    },
  };
}
