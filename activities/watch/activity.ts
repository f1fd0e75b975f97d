import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { nodesNamedBy } from '../../core/csr/csr';
import {
  nodeClaimWorkflowId,
  provisionerWorkflowId,
  type ClusterRef,
  type NodeClaimWorkflowInput,
  type TaskQueues,
} from '../../core/lifecycle';
import { StoredNodeClaimSchema } from '../../core/api/nodeclaim';
import { podDisposition } from '../../core/provisioning';
import type { ProvisionerWorkflowInput } from '../../workflows/provisioner';
import { type ClusterResolver } from '../cluster';
import { startNodeClaimLifecycle } from '../nodeclaim/start';
import { InvalidCsrError, csrState, tryParse } from '../kube/csr';
import { listWatch, type ListWatchOptions } from '../kube/list-watch';
import { createGcFailureEventActivities } from './gc-failure-event';
import { ClusterEventRouter, type WatchAction, type WatchEventType } from './router';

export interface WatchActivityDeps {
  resolve: ClusterResolver;
  temporal: Client;
  /** lifecycle settings for the workflows this watcher starts */
  nodeClaimDefaults?: Pick<NodeClaimWorkflowInput, 'timeouts' | 'csrPolicy'>;
  heartbeatMs?: number;
  stallMs?: number;
  /** at most one provisioner doorbell per this many ms */
  doorbellMs?: number;
  /** settings for the provisioner workflow the watcher starts (batch windows, ...) */
  provisionerDefaults?: Omit<ProvisionerWorkflowInput, 'cluster' | 'taskQueues' | 'carried'>;
}

/** Calls `ring` at most once per `ms`: the first ring schedules it, later ones join. */
export function coalescedDoorbell(ms: number, ring: () => Promise<void>) {
  let timer: NodeJS.Timeout | undefined;
  return {
    ring() {
      timer ??= setTimeout(() => {
        timer = undefined;
        void ring();
      }, ms);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

const MetaSchema = z.object({
  name: z.string(),
  uid: z.string().optional(),
  deletionTimestamp: z.unknown().optional(),
  annotations: z.record(z.string(), z.string()).optional().nullable(),
});
const PoolGenerationSchema = z.object({ metadata: z.object({ name: z.string(), generation: z.number().optional() }) });
const NodeClassSummarySchema = PoolGenerationSchema.extend({
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() }).optional(),
});

/** One summary per object name: `changed` says whether an event moved it (a deletion never rings). */
export function summaryTracker() {
  const seen = new Map<string, string>();
  return {
    changed(type: string, name: string, summary: string): boolean {
      if (type === 'DELETED') {
        seen.delete(name);
        return false;
      }
      if (seen.get(name) === summary) return false;
      seen.set(name, summary);
      return true;
    },
  };
}

/** The watcher reads only a claim's identity and status, from the one NodeClaim schema. */
const WatchedNodeClaimSchema = StoredNodeClaimSchema.pick({ metadata: true, status: true }).extend({
  metadata: StoredNodeClaimSchema.shape.metadata.partial({ uid: true, resourceVersion: true }),
});
const NodeEventSchema = z.object({
  metadata: MetaSchema,
  spec: z.object({ providerID: z.string().optional(), taints: z.array(z.object({ key: z.string(), effect: z.string() })).optional().nullable() }).optional(),
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional().nullable() }).optional(),
});

/**
 * The cluster watcher: lists then watches NodeClaims, Nodes and CSRs in one guest cluster
 * and turns transitions into workflow starts and id-only signals. Runs until cancelled;
 * heartbeats its progress so a dead worker is noticed and the activity restarted.
 * The watch workflow's other Kubernetes activity, the GC failure Event, comes along so it
 * runs where the watcher does (the control queue).
 */
export function createWatchActivities(deps: WatchActivityDeps) {
  return {
    ...createGcFailureEventActivities({ guestFor: async (cluster) => (await deps.resolve(cluster)).guest }),
    async watchCluster(cluster: ClusterRef, taskQueues: TaskQueues): Promise<void> {
      const ctx = Context.current();
      const { guest } = await deps.resolve(cluster);
      const router = new ClusterEventRouter();
      const progress: Record<string, string> = {};
      const abort = new AbortController();
      ctx.cancellationSignal.addEventListener('abort', () => abort.abort(), { once: true });
      const beat = setInterval(() => ctx.heartbeat({ resourceVersions: progress }), deps.heartbeatMs ?? 5_000);
      const log = (line: string) => ctx.log.warn(`watch ${cluster.name}: ${line}`);

      const act = async (actions: WatchAction[]) => {
        for (const action of actions) {
          const workflowId = nodeClaimWorkflowId(cluster.name, action.nodeClaim);
          if (action.kind === 'start') {
            await startNodeClaimLifecycle(deps.temporal, { cluster, taskQueues, nodeClaim: { name: action.nodeClaim, uid: action.uid }, defaults: deps.nodeClaimDefaults });
            continue;
          }
          try {
            const handle = deps.temporal.workflow.getHandle(workflowId);
            if (action.signal === 'csrCreated') await handle.signal(action.signal, action.arg);
            else await handle.signal(action.signal);
          } catch (err) {
            // The claim's life already ended: nothing to tell.
            if (!(err instanceof WorkflowNotFoundError)) throw err;
          }
        }
      };
      // Pending pods ring the provisioner's doorbell: no pod travels, the batch reads them
      // itself. Coalesced: at most one signal per `doorbellMs`, however many pods changed.
      const doorbell = coalescedDoorbell(deps.doorbellMs ?? 250, async () => {
        try {
          await deps.temporal.workflow.signalWithStart('provisionerWorkflow', {
            taskQueue: taskQueues.control,
            workflowId: provisionerWorkflowId(cluster.name),
            args: [{ cluster, taskQueues, ...deps.provisionerDefaults }],
            signal: 'podsPending',
            signalArgs: [],
          });
        } catch (err) {
          log(`ringing the provisioner: ${err instanceof Error ? err.message : String(err)}`);
        }
      });
      const pools = summaryTracker();
      const nodeClasses = summaryTracker();
      /** One collection, listed then watched, its progress in the heartbeat under `key`. */
      const watchCollection = (o: { key: string; path: string; onEvent: ListWatchOptions['onEvent']; onRelist?: ListWatchOptions['onRelist'] }) =>
        listWatch({
          watch: guest.watch,
          signal: abort.signal,
          ...(deps.stallMs ? { stallMs: deps.stallMs } : {}),
          log,
          onProgress: (rv) => (progress[o.key] = rv),
          path: o.path,
          list: () => guest.getJson(o.path),
          onEvent: o.onEvent,
          ...(o.onRelist ? { onRelist: o.onRelist } : {}),
        });
      const eventType = (t: string): WatchEventType => (t === 'DELETED' ? 'DELETED' : t === 'MODIFIED' ? 'MODIFIED' : 'ADDED');

      try {
        await Promise.all([
          watchCollection({
            key: 'nodeclaims',
            path: '/apis/karpenter.sh/v1/nodeclaims',
            onRelist: (names) => act(router.reconcileClaims(names)),
            onEvent: async ({ type, object }) => {
              const claim = WatchedNodeClaimSchema.parse(object);
              await act(
                router.onNodeClaim(eventType(type), {
                  name: claim.metadata.name,
                  uid: claim.metadata.uid ?? '',
                  deleting: claim.metadata.deletionTimestamp !== undefined,
                  ...(claim.status?.providerID ? { providerID: claim.status.providerID } : {}),
                  ...(claim.metadata.annotations ? { annotations: claim.metadata.annotations } : {}),
                }),
              );
            },
          }),
          watchCollection({
            key: 'pods',
            path: '/api/v1/pods',
            onRelist: async () => doorbell.ring(),
            onEvent: async ({ type, object }) => {
              if (type !== 'DELETED' && podDisposition(object) === 'provisionable') doorbell.ring();
            },
          }),
          watchCollection({
            key: 'nodepools',
            path: '/apis/karpenter.sh/v1/nodepools',
            onRelist: async () => doorbell.ring(),
            onEvent: async ({ type, object }) => {
              // A new or changed pool (its spec: the generation moves; not its status, which
              // the provisioner writes itself) is reported on and may place waiting pods.
              const pool = PoolGenerationSchema.safeParse(object);
              if (pool.success && pools.changed(type, pool.data.metadata.name, String(pool.data.metadata.generation))) doorbell.ring();
            },
          }),
          watchCollection({
            key: 'ec2nodeclasses',
            path: '/apis/karpenter.k8s.aws/v1/ec2nodeclasses',
            onEvent: async ({ type, object }) => {
              // Pods a pool could not take while its class was missing or unready wait for no
              // new pod: the class that appears, turns Ready or changes rings for them.
              const nodeClass = NodeClassSummarySchema.safeParse(object);
              if (!nodeClass.success) return;
              const ready = nodeClass.data.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
              if (nodeClasses.changed(type, nodeClass.data.metadata.name, `${nodeClass.data.metadata.generation}/${ready}`)) doorbell.ring();
            },
          }),
          watchCollection({
            key: 'nodes',
            path: '/api/v1/nodes',
            onEvent: async ({ type, object }) => {
              const node = NodeEventSchema.parse(object);
              await act(
                router.onNode(eventType(type), {
                  name: node.metadata.name,
                  ...(node.spec?.providerID ? { providerID: node.spec.providerID } : {}),
                  deleting: node.metadata.deletionTimestamp !== undefined && node.metadata.deletionTimestamp !== null,
                  ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
                  taints: (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`),
                }),
              );
            },
          }),
          watchCollection({
            key: 'csrs',
            path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
            onRelist: async (names) => router.reconcileCsrs(names),
            onEvent: async ({ type, object }) => {
              const csr = tryParse(object);
              const name = csr instanceof InvalidCsrError ? csr.csrName : csr.name;
              const nodeNames = csr instanceof InvalidCsrError ? csr.namedNodes : nodesNamedBy(csr);
              await act(router.onCsr(eventType(type), { name, nodeNames, pending: csrState(object).phase === 'pending' }));
            },
          }),
        ]);
      } finally {
        doorbell.stop();
        clearInterval(beat);
        abort.abort();
      }
      ctx.cancellationSignal.throwIfAborted();
    },
  };
}

export type WatchActivities = ReturnType<typeof createWatchActivities>;
