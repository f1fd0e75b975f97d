/**
 * The management-cluster watch (task queue `autonode-control`): lists and watches
 * HostedClusters and, per core/enablement/management-watch.ts, starts, wakes or tears down
 * their enablement workflows — or, with the Autoprovision feature gate off, says on the
 * HostedCluster that `spec.autoNode` alone does nothing. Long-running, heartbeating; the
 * management watch workflow restarts it when it fails and when the gate changes.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { z } from 'zod';
import { conditionSchema } from '../../core/api/primitives';
import { assertNever } from '../../core/assert';
import { FEATURE_GATE_DISABLED_REASON, decideHostedCluster, type ManagementAction, type ObservedHostedCluster } from '../../core/enablement/management-watch';
import { TaskQueuesSchema, defaultTaskQueues, enablementWorkflowId, setCondition } from '../../core/lifecycle';
import { type KubeClients } from '../kube/clients';
import { isNotFound } from '../kube/errors';
import { listWatch } from '../kube/list-watch';
import { ENABLEMENT_FINALIZER, HOSTED_CLUSTERS } from './activity';

export interface ManagementWatchDeps {
  management: KubeClients;
  temporal: Client;
  heartbeatMs?: number;
  stallMs?: number;
  now?: () => Date;
}

export const ManagementWatchInputSchema = z.object({
  autoprovision: z.boolean(),
  /** serve only HostedClusters in this namespace (default: every namespace) */
  namespace: z.string().min(1).optional(),
  taskQueues: TaskQueuesSchema.partial().optional(),
});
export type ManagementWatchInput = z.infer<typeof ManagementWatchInputSchema>;

const WatchedSchema = z.object({
  metadata: z.object({
    name: z.string(),
    namespace: z.string(),
    generation: z.number().optional(),
    deletionTimestamp: z.unknown().optional(),
    finalizers: z.array(z.string()).optional(),
  }),
  spec: z.object({ autoNode: z.unknown().optional() }).passthrough().optional(),
  status: z.object({ conditions: z.array(conditionSchema).optional() }).passthrough().optional(),
});

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function createManagementWatchActivities(deps: ManagementWatchDeps) {
  const now = deps.now ?? (() => new Date());
  const hostedClusters = deps.management.customObjects;

  async function running(hc: { namespace: string; name: string }): Promise<boolean> {
    try {
      return (await deps.temporal.workflow.getHandle(enablementWorkflowId(hc)).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  async function writeEnabledCondition(hc: ObservedHostedCluster, conditions: z.infer<typeof conditionSchema>[], update: { status: 'False'; reason: string; message: string } | undefined): Promise<void> {
    const next = update === undefined
      ? conditions.filter((c) => !(c.type === 'AutoNodeEnabled' && c.reason === FEATURE_GATE_DISABLED_REASON))
      : setCondition(conditions, { type: 'AutoNodeEnabled', ...update }, now().toISOString());
    await hostedClusters
      .patchNamespacedCustomObjectStatus({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name, body: { status: { conditions: next } } }, mergePatch)
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  return {
    /**
     * Runs until cancelled. Acts on a HostedCluster when what matters to autonode changed
     * (generation, deletion, the gate) — not on every status write, autonode's own included —
     * and on every one after a (re)list, so a restart misses nothing: every action is idempotent.
     */
    async watchHostedClusters(raw: unknown): Promise<void> {
      const input = ManagementWatchInputSchema.parse(raw);
      const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
      const ctx = Context.current();
      const abort = new AbortController();
      ctx.cancellationSignal.addEventListener('abort', () => abort.abort(), { once: true });
      let resourceVersion = '';
      const beat = setInterval(() => ctx.heartbeat({ resourceVersion }), deps.heartbeatMs ?? 5_000);
      const log = (line: string) => ctx.log.warn(`management watch: ${line}`);
      /** what each HostedCluster looked like when last acted on (namespace/name → signature) */
      const seen = new Map<string, string>();

      const act = async (hc: ObservedHostedCluster, action: ManagementAction, conditions: z.infer<typeof conditionSchema>[]) => {
        const workflowId = enablementWorkflowId(hc);
        switch (action.kind) {
          case 'enable':
          case 'finishTeardown':
            await deps.temporal.workflow.signalWithStart('enablementWorkflow', {
              taskQueue: taskQueues.control,
              workflowId,
              args: [{ hostedCluster: { namespace: hc.namespace, name: hc.name }, taskQueues }],
              ...(action.kind === 'enable' ? { signal: 'hostedClusterChanged', signalArgs: [] } : { signal: 'disable', signalArgs: [{}] }),
            });
            return;
          case 'wake':
          case 'disable':
            try {
              if (action.kind === 'wake') await deps.temporal.workflow.getHandle(workflowId).signal('hostedClusterChanged');
              else await deps.temporal.workflow.getHandle(workflowId).signal('disable', {});
            } catch (err) {
              if (!(err instanceof WorkflowNotFoundError)) throw err;
            }
            return;
          case 'reportGateOff':
            await writeEnabledCondition(hc, conditions, { status: 'False', reason: FEATURE_GATE_DISABLED_REASON, message: action.message });
            return;
          case 'clearGateOff':
            await writeEnabledCondition(hc, conditions, undefined);
            return;
          case 'none':
            return;
          default:
            return assertNever(action);
        }
      };

      const onObject = async (type: string, object: unknown) => {
        const parsed = WatchedSchema.safeParse(object);
        if (!parsed.success) {
          log(`ignoring an unreadable HostedCluster: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
          return;
        }
        const { metadata, spec, status } = parsed.data;
        const key = `${metadata.namespace}/${metadata.name}`;
        if (type === 'DELETED') {
          seen.delete(key);
          return;
        }
        const conditions = status?.conditions ?? [];
        const hc: ObservedHostedCluster = {
          namespace: metadata.namespace,
          name: metadata.name,
          autoNode: spec?.autoNode !== undefined && spec.autoNode !== null,
          deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
          finalized: (metadata.finalizers ?? []).includes(ENABLEMENT_FINALIZER),
          ...(conditions.find((c) => c.type === 'AutoNodeEnabled') ? { enabledReason: conditions.find((c) => c.type === 'AutoNodeEnabled')?.reason } : {}),
        };
        const signature = JSON.stringify([metadata.generation, hc.autoNode, hc.deleting, hc.finalized, hc.enabledReason === FEATURE_GATE_DISABLED_REASON]);
        if (seen.get(key) === signature) return;
        const action = decideHostedCluster(hc, { autoprovision: input.autoprovision, running: await running(hc) });
        await act(hc, action, conditions);
        seen.set(key, signature);
      };

      const path = input.namespace
        ? `/apis/${HOSTED_CLUSTERS.group}/${HOSTED_CLUSTERS.version}/namespaces/${input.namespace}/${HOSTED_CLUSTERS.plural}`
        : `/apis/${HOSTED_CLUSTERS.group}/${HOSTED_CLUSTERS.version}/${HOSTED_CLUSTERS.plural}`;
      try {
        await listWatch({
          watch: deps.management.watch,
          signal: abort.signal,
          ...(deps.stallMs ? { stallMs: deps.stallMs } : {}),
          log,
          path,
          list: async () => {
            // a relist acts on every HostedCluster again (a restart may have missed changes)
            seen.clear();
            return input.namespace
              ? hostedClusters.listNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: input.namespace })
              : hostedClusters.listClusterCustomObject(HOSTED_CLUSTERS);
          },
          onEvent: (event) => onObject(event.type, event.object),
          onProgress: (rv) => (resourceVersion = rv),
        });
      } finally {
        clearInterval(beat);
      }
      // listWatch returns only when aborted: the workflow cancelled this activity
      ctx.cancellationSignal.throwIfAborted();
    },
  };
}

export type ManagementWatchActivities = ReturnType<typeof createManagementWatchActivities>;
