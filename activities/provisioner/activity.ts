import { Context } from '@temporalio/activity';
import { type Client } from '@temporalio/client';
import pLimit from 'p-limit';
import { z } from 'zod';
import type { NodePool } from '../../core/api/nodepool';
import type { CatalogResult } from '../../core/instancetypes';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Condition } from '../../core/api';
import { conditionSchema } from '../../core/api/primitives';
import { ClusterRefSchema, TaskQueuesSchema, setCondition, type ConditionUpdate, type NodeClaimWorkflowInput } from '../../core/lifecycle';
import { asPlannedCapacity, nodeClaimManifest, poolUsage, type ClaimUsage } from '../../core/provisioning';
import { assembleObjects, catalogQueryFor, type ObjectDocument } from '../../core/workloads/assemble';
import { NodeClassInputSchema } from '../cloud';
import { type ClusterResolver } from '../cluster';
import { startNodeClaimLifecycle } from '../nodeclaim/start';
import { type KubeClients } from '../kube/clients';
import { isConflict, isNotFound } from '../kube/errors';
import { createEventSink, type EventSink } from '../kube/event-sink';
import { createEventRecorder, type RecordEvent } from '../kube/events';
import { createSolverThread, type SolverThread } from './solver-thread';
import { validateKarpenterObjects } from './validate';
import { readWorld, type World } from './world';

export interface ProvisionerActivityDeps {
  resolve: ClusterResolver;
  /** starts each new claim's nodeclaim workflow at once */
  temporal: Client;
  /** where solves run: a worker thread of its own (default), HiGHS loaded there once */
  solver?: SolverThread;
  /** LP-guided plans (HiGHS); false: greedy only */
  guided?: boolean;
  nodeClaimDefaults?: Pick<NodeClaimWorkflowInput, 'timeouts' | 'csrPolicy'>;
  now?: () => Date;
}

export const ProvisionBatchInputSchema = z.object({
  cluster: ClusterRefSchema,
  taskQueues: TaskQueuesSchema,
  /** the batch's id: its claims carry it, so a retried batch finds them instead of making twins */
  batchId: z.string().min(1),
  /** offerings held unavailable (insufficient capacity seen recently) */
  unavailable: z.array(z.object({ instanceType: z.string(), zone: z.string(), capacityType: z.enum(['spot', 'on-demand']) })).default([]),
});
export type ProvisionBatchInput = z.input<typeof ProvisionBatchInputSchema>;

/** Compact on purpose (it is a payload in the provisioner's history): counts and names. */
export interface BatchResult {
  batchId: string;
  pending: number;
  created: string[];
  /** claims of this batch that already existed (a retried batch) */
  resumed: string[];
  nominated: number;
  onExistingNodes: number;
  unschedulable: number;
  pricePerHour: number;
  solveMs: number;
  /** NodePools / EC2NodeClasses skipped, each with why */
  skipped: string[];
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The provisioner's one activity (task queue `autonode-packing`): read the world, plan
 * with the packing core, create the NodeClaims and start their workflows, tell the pods
 * (Nominated / FailedScheduling Events) and the NodePools (status). Idempotent per batch.
 */
export function createProvisionerActivities(deps: ProvisionerActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const solver = deps.solver ?? createSolverThread();
  // one background event sink per cluster, for the worker's lifetime
  const sinks = new Map<string, EventSink>();
  const sinkFor = (cluster: string, record: RecordEvent) => {
    let sink = sinks.get(cluster);
    if (!sink) {
      sink = createEventSink(record, {
        onError: (err) => process.stderr.write(`autonode provisioner: writing a pod Event for ${cluster} failed: ${err instanceof Error ? err.message : String(err)}\n`),
        onDrop: (n) => n % 1000 === 1 && process.stderr.write(`autonode provisioner: ${n} pod Events for ${cluster} dropped (queue full)\n`),
      });
      sinks.set(cluster, sink);
    }
    return sink;
  };
  return {
    async provisionBatch(raw: ProvisionBatchInput): Promise<BatchResult> {
      const input = ProvisionBatchInputSchema.parse(raw);
      const heartbeat = (stage: string) => Context.current().heartbeat({ stage });
      const { guest, cloud } = await deps.resolve(input.cluster);
      const event = createEventRecorder(guest.core);
      heartbeat('read');
      const world = await readWorld(guest);
      const result: BatchResult = { batchId: input.batchId, pending: world.provisionable.length, created: [], resumed: [], nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [] };

      const { pools, classes, invalidClasses, skipped, invalid } = await validateKarpenterObjects(world, { event, guest, now: now() });
      result.skipped.push(...skipped);
      // Each node class: is it ready, in which zones, and its instance types from the cloud.
      const typesByClass = new Map<string, CatalogResult>(invalidClasses);
      for (const [name, nodeClass] of classes) {
        const query = catalogQueryFor(name, nodeClass);
        if ('unsupported' in query) {
          typesByClass.set(name, { ok: false, reason: `amiFamily ${query.unsupported} is not supported` });
          continue;
        }
        const resolution = await cloud.resolveNodeClass(NodeClassInputSchema.parse({ name, spec: nodeClass.spec }));
        if (!resolution.ready) {
          const why = resolution.conditions.filter((c) => c.status !== 'True').map((c) => `${c.type}: ${c.message}`).join('; ');
          typesByClass.set(name, { ok: false, reason: `EC2NodeClass ${name} is not ready: ${why}` });
          continue;
        }
        const zones = [...new Set(resolution.subnets.map((s) => s.zone))].sort();
        const instanceTypes = await cloud.instanceTypes({
          amiFamily: query.amiFamily,
          ...(query.kubelet ? { kubelet: stripUndefined(query.kubelet) } : {}),
          ...(query.rootVolumeSize ? { rootVolumeSize: query.rootVolumeSize } : {}),
          zones,
          unavailable: input.unavailable,
        });
        typesByClass.set(name, { ok: true, warnings: [], instanceTypes, skipped: [] });
      }
      heartbeat('plan');

      const capacityByType = new Map<string, Record<string, string>>();
      for (const types of typesByClass.values()) if (types.ok) for (const t of types.instanceTypes) capacityByType.set(t.name, { ...t.capacity });
      const live = world.nodeClaims.filter((c) => c.metadata.deletionTimestamp === undefined);
      const usage = poolUsage(live.map(claimUsage), (type) => capacityByType.get(type));
      const usablePools: { pool: NodePool; uid: string; raw: unknown }[] = [];
      const statuses: PoolStatusUpdate[] = invalid.map(({ name, raw, why }) => ({ name, raw, conditions: [{ type: 'ValidationSucceeded', status: 'False', reason: 'InvalidNodePool', message: why }] }));
      for (const [name, entry] of pools) {
        const className = entry.pool.spec.template.spec.nodeClassRef.name;
        const classResult = typesByClass.get(className) ?? { ok: false as const, reason: `EC2NodeClass ${className} (spec.template.spec.nodeClassRef.name) does not exist` };
        const valid: ConditionUpdate = { type: 'ValidationSucceeded', status: 'True', reason: 'ValidationSucceeded', message: '' };
        if (!classResult.ok) {
          result.skipped.push(`NodePool ${name}: ${classResult.reason}`);
          statuses.push({ name, raw: entry.raw, conditions: [valid, { type: 'NodeClassReady', status: 'False', reason: 'NodeClassNotReady', message: classResult.reason }] });
          continue;
        }
        statuses.push({ name, raw: entry.raw, conditions: [valid, { type: 'NodeClassReady', status: 'True', reason: 'NodeClassReady', message: '' }] });
        usablePools.push(entry);
      }

      if (world.provisionable.length === 0) {
        await writePoolStatus(guest, statuses, usage, now());
        return result;
      }
      const startupTaintsOf = new Map(live.map((c) => [c.status?.nodeName ?? '', c.spec.startupTaints ?? []]));
      const documents: ObjectDocument[] = [
        ...world.provisionable.map((object) => ({ where: 'pod', object })),
        ...world.bound.map((object) => ({ where: 'pod', object })),
        ...world.nodes.map((object) => ({ where: 'node', object: asPlannedCapacity(object, startupTaintsOf.get(nameOf(object)) ?? []) })),
        ...world.daemonSets.map((object) => ({ where: 'daemonset', object })),
        ...live.map((claim) => ({ where: 'nodeclaim', object: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', ...claim } })),
        ...usablePools.map(({ raw, pool }) => ({ where: 'nodepool', object: withUsage(raw, usage.get(pool.metadata.name ?? '') ?? {}) })),
        ...[...classes.values()].map((object) => ({ where: 'ec2nodeclass', object })),
      ];
      const started = Date.now();
      const { input: packing } = assembleObjects(documents, {
        region: input.cluster.region,
        now: now().getTime(),
        catalog: (query) => typesByClass.get(query.nodeClassName) ?? { ok: false, reason: `EC2NodeClass ${query.nodeClassName} not found` },
      });
      const plan = await solver.solve(packing, { guided: deps.guided ?? true });
      result.solveMs = Date.now() - started;
      heartbeat('create');

      // Each NodeClaim, then its workflow at once (capacity is what pods wait for); Events last.
      const requestsByPod = new Map(packing.pods.map((p) => [`${p.namespace}/${p.name}`, p.requests]));
      const poolByName = new Map(usablePools.map((p) => [p.pool.metadata.name ?? '', p]));
      const limit = pLimit(16);
      const claimNames = new Map<number, string>();
      const createdHere = new Set<number>();
      const nodeClaims = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
      await Promise.all(
        plan.nodeClaims.map((planned, index) =>
          limit(async () => {
            const source = poolByName.get(planned.nodePool);
            if (!source) return;
            const manifest = nodeClaimManifest(planned, { pool: source.pool, poolUid: source.uid }, { batchId: input.batchId, podRequests: requestsByPod });
            const name = manifest.metadata.name;
            claimNames.set(index, name);
            let stored: unknown;
            try {
              stored = await guest.customObjects.createClusterCustomObject({ ...nodeClaims, body: manifest });
              result.created.push(name);
              createdHere.add(index);
            } catch (err) {
              // the same claim of the same batch, made by an earlier attempt of this activity
              if (!isConflict(err)) throw err;
              stored = await guest.customObjects.getClusterCustomObject({ ...nodeClaims, name });
              result.resumed.push(name);
            }
            result.pricePerHour += planned.price;
            const { uid } = StoredUidSchema.parse(stored).metadata;
            await startNodeClaimLifecycle(deps.temporal, { cluster: input.cluster, taskQueues: input.taskQueues, nodeClaim: { name, uid }, defaults: deps.nodeClaimDefaults });
          }),
        ),
      );
      // Per-pod Events are written in the background (the cluster's event sink): at 5k pods
      // they take ~20 s, which must not hold the packing worker or delay the next batch.
      const sink = sinkFor(input.cluster.name, event);
      plan.nodeClaims.forEach((planned, index) => {
        const claim = claimNames.get(index);
        if (!claim) return;
        for (const pod of planned.pods) {
          result.nominated++;
          podEvent(sink, pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${claim}`);
        }
      });
      for (const placement of plan.inFlightNodeClaims) {
        for (const pod of placement.pods) {
          result.nominated++;
          podEvent(sink, pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${placement.name}`);
        }
      }
      result.onExistingNodes = plan.existingNodes.reduce((n, p) => n + p.pods.length, 0);
      for (const u of plan.unschedulable) {
        result.unschedulable++;
        podEvent(sink, u.pod, 'Warning', 'FailedScheduling', `Failed to schedule pod, ${u.reason}`);
      }
      result.created.sort();
      result.resumed.sort();
      result.pricePerHour = Math.round(result.pricePerHour * 1e6) / 1e6;

      // status.resources counted with the claims just made
      const after = poolUsage(
        [...live.map(claimUsage), ...plan.nodeClaims.filter((_, i) => createdHere.has(i)).map((c) => ({ nodePool: c.nodePool, instanceTypeOptions: c.instanceTypeOptions }))],
        (type) => capacityByType.get(type),
      );
      await writePoolStatus(guest, statuses, after, now());
      return result;
    },
  };
}

export type ProvisionerActivities = ReturnType<typeof createProvisionerActivities>;

const nameOf = (object: unknown): string => (typeof object === 'object' && object !== null && 'metadata' in object && typeof object.metadata === 'object' && object.metadata !== null && 'name' in object.metadata && typeof object.metadata.name === 'string' ? object.metadata.name : '');

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function claimUsage(claim: World['nodeClaims'][number]): ClaimUsage {
  const options = claim.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type' && r.operator === 'In')?.values ?? [];
  return { nodePool: claim.metadata.labels?.['karpenter.sh/nodepool'] ?? '', capacity: claim.status?.capacity, instanceTypeOptions: options };
}

function withUsage(raw: unknown, usage: Record<string, string>): unknown {
  if (typeof raw !== 'object' || raw === null) return raw;
  const status = 'status' in raw && typeof raw.status === 'object' && raw.status !== null ? raw.status : {};
  return { ...raw, status: { ...status, resources: usage } };
}

function podEvent(sink: EventSink, pod: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
  const [namespace, name] = pod.split('/');
  if (!namespace || !name) return;
  sink.emit({ involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace, name }, type, reason, message });
}

const StoredUidSchema = z.object({ metadata: z.object({ uid: z.string() }) });

/** What a NodePool's status says after a batch. */
interface PoolStatusUpdate {
  name: string;
  raw: unknown;
  conditions: ConditionUpdate[];
}

const StoredConditionsSchema = z.object({ status: z.object({ conditions: z.array(conditionSchema).optional() }).optional() });

/**
 * NodePool status: `resources` (counting claims still launching, with `nodes`: the NODES
 * column) and the conditions that say whether the pool is used (READY column).
 */
async function writePoolStatus(guest: KubeClients, pools: readonly PoolStatusUpdate[], usage: ReadonlyMap<string, Record<string, string>>, at: Date): Promise<void> {
  const nowIso = at.toISOString();
  await Promise.all(
    pools.map(async ({ name, raw, conditions: updates }) => {
      let conditions: Condition[] = StoredConditionsSchema.safeParse(raw).data?.status?.conditions ?? [];
      for (const update of updates) conditions = setCondition(conditions, update, nowIso);
      const failed = updates.find((u) => u.status === 'False');
      conditions = setCondition(conditions, failed ? { type: 'Ready', status: 'False', reason: failed.reason, message: failed.message ?? '' } : { type: 'Ready', status: 'True', reason: 'Ready', message: '' }, nowIso);
      const resources = usage.get(name) ?? { nodes: '0' };
      const body = { status: { resources, conditions } };
      try {
        await guest.customObjects.patchClusterCustomObjectStatus({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name, body }, mergePatch);
      } catch (err) {
        // deleted since it was read: nothing to report on
        if (!isNotFound(err)) throw err;
      }
    }),
  );
}
