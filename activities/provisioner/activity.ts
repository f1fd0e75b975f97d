import { HEARTBEAT_EVERY_MS, heartbeatingAll, heartbeatStage as heartbeat } from '../heartbeat';
import { asyncLocalStorage } from '@temporalio/activity';
import { type Client } from '@temporalio/client';
import pLimit from 'p-limit';
import { z } from 'zod';
import { parseJsonWith } from '../../core/json';
import type { CatalogResult } from '../../core/instancetypes';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Condition } from '../../core/api';
import { conditionSchema } from '../../core/api/primitives';
import { ClusterRefSchema, TaskQueuesSchema, provisionerWorkflowId, setCondition, unavailableOfferingKey, type ConditionUpdate, type NodeClaimWorkflowInput } from '../../core/lifecycle';
import { sameShape, type ConsolidationDecision, type ConsolidationSettings, type DecidedShape } from '../../core/disruption';
import { batchResult, batchToCreate, type BatchResult, type CreatedClaims, type PlannedBatch, type PoolStatus, claimManifest, PLANNED_PODS_BUDGET_BYTES, type ClaimTemplate, type CompactClaim } from '../../core/provisioning';
import { type ClusterResolver } from '../cluster';
import { startNodeClaimLifecycle } from '../nodeclaim/start';
import { type KubeClients } from '../kube/clients';
import { apiStatus, isConflict, isNotFound } from '../kube/errors';
import { createEventSink, type EventSink } from '../kube/event-sink';
import { createEventRecorder, type RecordEvent } from '../kube/events';
import { ResolutionCache, cloudCatalog } from './catalog';
import { RESOLUTION_MAX_STALE_MS } from '../cloud/resolution-cache';
import { multiNodeSearch, planView, simulateMove, withoutNodes, type MoveSimulationResult, type PlanOptions, type Planning, type PodEventType } from './plan-view';
import { newNodesBound } from '../../core/packing/bound';
import { createSolverThread, type SolverThread } from './solver-thread';
import { validateKarpenterObjects } from './validate';
import { readWorld, type World } from './world';
import { activityLog } from '../log';
import { summariseCluster, type AutonodeMetrics, type SchedulingController } from '../metrics';
import { listItems } from '../kube/lists';

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
  /** where claims created and scheduling durations are counted, and the cluster's state observed */
  metrics?: AutonodeMetrics;
  /** how often every activity heartbeats (default HEARTBEAT_EVERY_MS) */
  heartbeatMs?: number;
}

/** Offerings held unavailable: the provisioner's insufficient-capacity memory, an interrupted spot offering. */
const HeldOfferingsSchema = z.array(z.object({ instanceType: z.string(), zone: z.string(), capacityType: z.enum(['spot', 'on-demand']) })).default([]);

export const ProvisionBatchInputSchema = z.object({
  cluster: ClusterRefSchema,
  taskQueues: TaskQueuesSchema,
  /** the batch's id: its claims carry it, so a retried batch finds them instead of making twins */
  batchId: z.string().min(1),
  /** offerings held unavailable (insufficient capacity seen recently) */
  unavailable: HeldOfferingsSchema,
});
export type ProvisionBatchInput = z.input<typeof ProvisionBatchInputSchema>;

export const CreateClaimsInputSchema = z.object({
  cluster: ClusterRefSchema,
  taskQueues: TaskQueuesSchema,
  batchId: z.string().min(1),
  templates: z.array(z.custom<ClaimTemplate>((v) => typeof v === 'object' && v !== null && 'pool' in v)),
  optionLists: z.array(z.array(z.string())),
  claims: z.array(z.custom<CompactClaim>((v) => typeof v === 'object' && v !== null && 'name' in v)),
  poolStatus: z.array(z.object({ name: z.string(), conditions: z.array(z.custom<ConditionUpdate>()), resources: z.record(z.string(), z.string()) })).default([]),
  /** offerings the plan held unavailable: each claim carries those of its instance types to its launch */
  unavailable: HeldOfferingsSchema,
  /** the claims' nodes open together (core/provisioning/batch-gate.ts) */
  batchGate: z.literal(true).optional(),
});
export type CreateClaimsInput = z.input<typeof CreateClaimsInputSchema>;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const PoolMetaSchema = z.object({ metadata: z.object({ name: z.string(), uid: z.string(), generation: z.number().optional() }) });
const nodeClaimsApi = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
// Every provisioner activity heartbeats every HEARTBEAT_EVERY_MS, whatever step it is in:
// reading a large cluster, a throttled EC2 catalog, solving or creating claims may each
// outlast the workflow's heartbeat timeout (20 s) on a loaded worker, and a live worker must
// not be taken for dead — its step would be retried from the start, and time out again.
export interface MultiNodeSimulation {
  /** plans solved in the search */
  simulations: number;
  /** the candidates of the command found (the longest worthwhile prefix); none when rejected */
  candidates: { nodeClaim: string; node: string }[];
  /** each prefix simulated, in order: its size, the new nodes its plan needed ($/h) and the verdict */
  tried: { size: number; claims: number; pricePerHour: number; verdict: string }[];
  planned?: PlannedBatch;
  decision: ConsolidationDecision;
  /** a re-pack's LP lower bound ($/h) for the same pods on the same remaining cluster */
  lpBoundPerHour?: number;
}

/**
 * The provisioner's activities (task queue `autonode-packing`). `planBatch` reads the
 * world, plans with the packing core and tells the pods (Nominated / FailedScheduling
 * Events); `createClaims` creates the planned NodeClaims by name, starts their workflows
 * and writes the NodePools' status. Both are idempotent per batch; between them the plan
 * is in the workflow's history.
 */
export function createProvisionerActivities(deps: ProvisionerActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const solver = deps.solver ?? createSolverThread();
  // packing plans on a class resolution up to minutes old rather than wait on EC2 (resolution-cache.ts)
  const resolutions = new ResolutionCache(15_000, Date.now, RESOLUTION_MAX_STALE_MS);
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

  /**
   * What every plan of one moment shares, read once: the world, the validated pools and
   * classes, their catalogs. A disruption simulates several views of it without reading again.
   */
  async function readPlanning(raw: ProvisionBatchInput, options: { provisionerMemory?: boolean } = {}) {
    const parsed = ProvisionBatchInputSchema.parse(raw);
    heartbeat('read: held offerings');
    const input = options.provisionerMemory ? { ...parsed, unavailable: mergeHeld(parsed.unavailable, await provisionerMemory(deps.temporal, parsed.cluster.name, now())) } : parsed;
    heartbeat('read: cluster');
    const { guest, cloud } = await deps.resolve(input.cluster);
    const event = createEventRecorder(guest.core);
    // the state gauges see the cluster as listed, before any view changes it (summarised only with metrics)
    const onListed = (lists: Parameters<typeof summariseCluster>[0]) => deps.metrics?.observeCluster(input.cluster.name, summariseCluster(lists));
    const world = await readWorld(guest, { onListed });
    heartbeat('validate');
    const { pools, classes, invalidClasses, skipped, invalid } = await validateKarpenterObjects(world, { event, guest, now: now() });
    heartbeat('catalog');
    // an invalid class is reported by name, not as missing
    const typesByClass = new Map<string, CatalogResult>([...invalidClasses, ...(await cloudCatalog(cloud, classes, input.unavailable, { scope: input.cluster.name, resolutions }))]);
    const planning: Planning = { batchId: input.batchId, region: input.cluster.region, world, pools, classes, skipped, invalid, typesByClass, unavailable: input.unavailable };
    return { ...planning, input, event };
  }
  type ReadPlanning = Awaited<ReturnType<typeof readPlanning>>;

  /**
   * How this worker plans: on its solver thread, heartbeating while it solves, each solve
   * timed into the scheduling-duration metric under `controller` (plan-view.ts is the rest).
   */
  const planOptions = (cluster: string, controller: SchedulingController): Omit<PlanOptions, 'view' | 'tell'> => ({
    now: now().getTime(),
    heartbeat,
    solve: async (packing) => {
      heartbeat('solve');
      const started = Date.now();
      try {
        return await solver.solve(packing, { guided: deps.guided ?? true });
      } finally {
        deps.metrics?.schedulingDuration.observe({ cluster, controller }, (Date.now() - started) / 1000);
      }
    },
  });

  /** Reads, solves and says (unless `quiet`) what it planned; `view` changes the world first. */
  async function planWith(raw: ProvisionBatchInput, options: { controller: SchedulingController; view?: (world: World) => World; quiet?: boolean; provisionerMemory?: boolean }): Promise<PlannedBatch> {
    const state = await readPlanning(raw, { provisionerMemory: options.provisionerMemory ?? false });
    // a simulation tells no pod anything; a batch's Events go through the cluster's background sink
    // (at 5k pods they take ~20 s, which must not hold the packing worker or the next batch)
    const sink = options.quiet ? undefined : sinkFor(state.input.cluster.name, state.event);
    const { planned } = await planView(state, {
      ...planOptions(state.input.cluster.name, options.controller),
      // a provisioner batch's pods are nominated to their claim's node at registration; a
      // disruption's replacements are for pods still bound elsewhere, which nothing nominates
      ...(options.controller === 'provisioner' ? { podNamesBudget: PLANNED_PODS_BUDGET_BYTES } : {}),
      ...(options.view ? { view: options.view } : {}),
      ...(sink ? { tell: (pod: string, type: PodEventType, reason: string, message: string) => podEvent(sink, pod, type, reason, message) } : {}),
    });
    return planned;
  }

  async function createClaims(raw: CreateClaimsInput): Promise<CreatedClaims> {
    const input = CreateClaimsInputSchema.parse(raw);
    const { guest } = await deps.resolve(input.cluster);
    const out: CreatedClaims = { created: [], resumed: [], refused: [] };
    const reason = creationReason();
    const templates = new Map(input.templates.map((t) => [t.pool, t]));
    const limit = pLimit(16);
    await Promise.all(
      input.claims.map((claim) =>
        limit(async () => {
          const template = templates.get(claim.pool);
          if (!template) throw new Error(`batch ${input.batchId}: claim ${claim.name} names pool ${claim.pool}, which has no template in the batch`);
          const manifest = claimManifest(claim, template, input.optionLists[claim.options] ?? [], input.batchId, input.unavailable, { batchGate: input.batchGate === true });
          let stored: unknown;
          try {
            stored = await guest.customObjects.createClusterCustomObject({ ...nodeClaimsApi, body: manifest });
            out.created.push(claim.name);
            // Counted here, once per claim: only one create of a name succeeds, and a retried
            // batch that finds its claim (409 below) does not count it again.
            deps.metrics?.nodeClaimsCreated.inc({ cluster: input.cluster.name, reason, nodepool: claim.pool });
            activityLog('info', 'NodeClaim created', { cluster: input.cluster.name, nodeclaim: claim.name, nodepool: claim.pool, reason });
          } catch (err) {
            if (isConflict(err)) {
              // made by an earlier attempt of this batch: finish it (its workflow may not have started)
              stored = await guest.customObjects.getClusterCustomObject({ ...nodeClaimsApi, name: claim.name });
              out.resumed.push(claim.name);
            } else if (isRefusal(err)) {
              // the API server will not take it (its schema, an admission policy): no retry makes it right
              out.refused.push(`${claim.name}: ${apiMessage(err)}`);
              return;
            } else throw err;
          }
          const { uid } = StoredUidSchema.parse(stored).metadata;
          await startNodeClaimLifecycle(deps.temporal, { cluster: input.cluster, taskQueues: input.taskQueues, nodeClaim: { name: claim.name, uid }, defaults: deps.nodeClaimDefaults });
          heartbeat('create');
        }),
      ),
    );
    out.created.sort();
    out.resumed.sort();
    out.refused.sort();
    // NodePool status: this batch's conditions, and resources counting the claims just made
    // (Karpenter counts a claim from its creation). The stored conditions are read again here.
    if (input.poolStatus.length > 0) {
      const pools = listItems(await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' }));
      const rawByName = new Map(pools.flatMap((raw) => { const name = PoolMetaSchema.safeParse(raw).data?.metadata.name; return name === undefined ? [] : [[name, raw] as const]; }));
      await writePoolStatus(guest, input.poolStatus.flatMap((p) => (rawByName.has(p.name) ? [{ ...p, raw: rawByName.get(p.name) }] : [])), now());
    }
    return out;
  }

  /** The candidates' pods planned without them, judged, the plan narrowed to what the verdict keeps (plan-view.ts). */
  async function simulateMoveOn(state: ReadPlanning, leaving: readonly { nodeClaim: string; node: string }[], settings: ConsolidationSettings): Promise<MoveSimulationResult> {
    return simulateMove(state, leaving, settings, planOptions(state.input.cluster.name, 'disruption'));
  }

  /**
   * A re-pack's LP lower bound (core/packing/bound.ts `newNodesBound`): the pods its plan put
   * on new nodes, on the types of the pools it opened — what no set of new nodes there can
   * beat for them, reported beside the re-pack's price. Only for re-packs: the solver's own plan and input stay here; the
   * workflow's history carries only the compact batch.
   */
  const withBound = ({ planned, decision, packing, plan }: MoveSimulationResult): { planned: PlannedBatch; decision: ConsolidationDecision; lpBoundPerHour?: number } =>
    decision.kind === 'repack' && packing && plan ? { planned, decision, lpBoundPerHour: Math.round(newNodesBound(packing, plan) * 1e6) / 1e6 } : { planned, decision };

  const planBatch = (raw: ProvisionBatchInput) => planWith(raw, { controller: 'provisioner' });

  return heartbeatingAll({
    planBatch,
    /**
     * Disruption's simulation: the replacement NodeClaims the pods on `nodes` would need if
     * those nodes were gone (their pods placed on the rest of the cluster first), planned as
     * a batch — its claims are created by `createClaims` like any batch's, by name.
     */
    async planReplacements(raw: ProvisionBatchInput & { nodes: string[] }): Promise<PlannedBatch> {
      const leaving = new Set(z.array(z.string()).parse(raw.nodes));
      return planWith(raw, { controller: 'disruption', view: (world) => withoutNodes(world, leaving), quiet: true, provisionerMemory: true });
    },
    /**
     * Single-node consolidation's simulation: the candidate's pods planned without it, and
     * the verdict on the plan (core/disruption/consolidate.ts). A replacement's claim is
     * narrowed to the options the price rules kept (and to spot when forced), so what is
     * launched is what was judged cheaper.
     */
    async simulateConsolidation(raw: ProvisionBatchInput & { nodeClaim: string; node: string; spotToSpot?: boolean; manyToMany?: { minSavings: number } }): Promise<{ planned: PlannedBatch; decision: ConsolidationDecision; lpBoundPerHour?: number }> {
      const state = await readPlanning(raw, { provisionerMemory: true });
      return withBound(await simulateMoveOn(state, [{ nodeClaim: raw.nodeClaim, node: raw.node }], { spotToSpot: raw.spotToSpot ?? false, ...(raw.manyToMany ? { manyToMany: raw.manyToMany } : {}) }));
    },
    /**
     * Multi-node consolidation (multinodeconsolidation.go): the longest prefix of the
     * ordered candidates (at least 2, at most 100) whose pods can move as a worthwhile
     * command, found by binary search over one read of the cluster. With `manyToMany` a
     * command may launch several new nodes (see repackDecision); without, at most one.
     */
    async simulateMultiNodeConsolidation(raw: ProvisionBatchInput & { candidates: { nodeClaim: string; node: string }[]; spotToSpot?: boolean; manyToMany?: { minSavings: number } }): Promise<MultiNodeSimulation> {
      const state = await readPlanning(raw, { provisionerMemory: true });
      const settings = { spotToSpot: raw.spotToSpot ?? false, ...(raw.manyToMany ? { manyToMany: raw.manyToMany } : {}) };
      const search = await multiNodeSearch(raw.candidates, (prefix) => simulateMoveOn(state, prefix, settings));
      return search.best
        ? { simulations: search.simulations, tried: search.tried, candidates: search.candidates, ...withBound(search.best), decision: search.best.decision }
        : { simulations: search.simulations, tried: search.tried, candidates: [], decision: { kind: 'reject', reason: search.reason ?? 'fewer than 2 candidates', ...(search.transient ? { transient: true as const } : {}) } };
    },
    /**
     * A consolidation command's validation (validation.go): after the delay, the same
     * candidates simulated again over a fresh read must still give a command of the shape
     * decided (core/disruption/consolidate.ts `sameShape`), or the command is dropped.
     */
    async revalidateConsolidation(
      raw: ProvisionBatchInput & { candidates: { nodeClaim: string; node: string }[]; decided: DecidedShape; spotToSpot?: boolean; manyToMany?: { minSavings: number } },
    ): Promise<{ ok: true } | { ok: false; reason: string }> {
      const state = await readPlanning(raw, { provisionerMemory: true });
      const settings = { spotToSpot: raw.spotToSpot ?? false, ...(raw.manyToMany ? { manyToMany: raw.manyToMany } : {}) };
      const { decision } = await simulateMoveOn(state, raw.candidates, settings);
      return sameShape(raw.decided, decision);
    },
    createClaims,
    /** Both steps in one activity: the provisioner's histories from before `plan-then-create` still call it. */
    async provisionBatch(raw: ProvisionBatchInput): Promise<BatchResult> {
      const input = ProvisionBatchInputSchema.parse(raw);
      const planned = await planBatch(input);
      const made = await createClaims({ cluster: input.cluster, taskQueues: input.taskQueues, ...batchToCreate(planned) });
      return batchResult(planned, made);
    },
  }, deps.heartbeatMs ?? HEARTBEAT_EVERY_MS);
}

export type ProvisionerActivities = ReturnType<typeof createProvisionerActivities>;

type HeldOffering = z.infer<typeof HeldOfferingsSchema>[number];
const PROVISIONER_QUERY_TIMEOUT_MS = 5_000;
const ProvisionerMemorySchema = z.object({
  unavailableOfferings: z.array(z.object({ instanceType: z.string(), zone: z.string(), capacityType: z.string(), until: z.string() })).default([]),
});

/**
 * The offerings the cluster's provisioner holds unavailable right now (its `status` query):
 * a disruption or interruption replacement is planned with the same memory of insufficient
 * capacity as a provisioner batch, instead of walking into an offering a launch just found
 * exhausted. No provisioner (never rung), or no answer within 5 s: nothing held, and the
 * launch's own fallback applies.
 */
export async function provisionerMemory(temporal: Pick<Client, 'workflow'>, cluster: string, at: Date, timeoutMs = PROVISIONER_QUERY_TIMEOUT_MS): Promise<HeldOffering[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      temporal.workflow.getHandle(provisionerWorkflowId(cluster)).query('status'),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs); }),
    ]);
    const held = ProvisionerMemorySchema.parse(answer).unavailableOfferings;
    return held
      .filter((o) => Date.parse(o.until) > at.getTime() && (o.capacityType === 'spot' || o.capacityType === 'on-demand'))
      .map((o) => ({ instanceType: o.instanceType, zone: o.zone, capacityType: o.capacityType === 'spot' ? 'spot' as const : 'on-demand' as const }));
  } catch (err) {
    activityLog('info', 'the provisioner\'s unavailable offerings could not be read; planning without them', { cluster, error: err instanceof Error ? err.message : String(err) });
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/** Both lists, each offering once. */
export function mergeHeld(a: readonly HeldOffering[], b: readonly HeldOffering[]): HeldOffering[] {
  const seen = new Map<string, HeldOffering>();
  for (const o of [...a, ...b]) seen.set(unavailableOfferingKey(o), o);
  return [...seen.values()];
}

export { withoutNodes };

/**
 * Why claims are created (the `reason` of karpenter_nodeclaims_created_total): the workflow
 * that asked says it — the disruption workflow creates replacements, the provisioner (and a
 * call outside any workflow) provisions. Karpenter's disruption reasons (drifted,
 * underutilized, …) are not in createClaims' input, so replacements say `disruption`.
 */
function creationReason(): 'provisioning' | 'disruption' {
  return asyncLocalStorage.getStore()?.info.workflowType === 'disruptionWorkflow' ? 'disruption' : 'provisioning';
}

/** 400/403/404/422 on create: the object as planned will never be accepted, however often it is sent. */
const isRefusal = (err: unknown): boolean => [400, 403, 404, 422].includes(apiStatus(err) ?? 0);
const ApiStatusMessageSchema = z.object({ message: z.string() });
const apiMessage = (err: unknown): string => {
  const body = typeof err === 'object' && err !== null && 'body' in err ? err.body : undefined;
  const status = typeof body === 'string' ? parseJsonWith(ApiStatusMessageSchema, body) : ApiStatusMessageSchema.safeParse(body).data;
  return status?.message ?? (err instanceof Error ? err.message : String(err));
};

function podEvent(sink: EventSink, pod: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
  const [namespace, name] = pod.split('/');
  if (!namespace || !name) return;
  sink.emit({ involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace, name }, type, reason, message });
}

const StoredUidSchema = z.object({ metadata: z.object({ uid: z.string() }) });

const StoredConditionsSchema = z.object({ status: z.object({ conditions: z.array(conditionSchema).optional() }).optional() });

/**
 * NodePool status: `resources` (counting claims still launching, with `nodes`: the NODES
 * column) and the conditions that say whether the pool is used (READY column). `raw` is the
 * pool as last read: its other conditions are kept.
 */
async function writePoolStatus(guest: KubeClients, pools: readonly (PoolStatus & { raw: unknown })[], at: Date): Promise<void> {
  const nowIso = at.toISOString();
  await Promise.all(
    pools.map(async ({ name, raw, conditions: updates, resources }) => {
      let conditions: Condition[] = StoredConditionsSchema.safeParse(raw).data?.status?.conditions ?? [];
      for (const update of updates) conditions = setCondition(conditions, update, nowIso);
      const failed = updates.find((u) => u.status === 'False');
      conditions = setCondition(conditions, failed ? { type: 'Ready', status: 'False', reason: failed.reason, message: failed.message ?? '' } : { type: 'Ready', status: 'True', reason: 'Ready', message: '' }, nowIso);
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
