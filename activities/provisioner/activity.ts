import { Context, asyncLocalStorage } from '@temporalio/activity';
import { type Client } from '@temporalio/client';
import pLimit from 'p-limit';
import { z } from 'zod';
import type { NodePool } from '../../core/api/nodepool';
import type { CatalogResult } from '../../core/instancetypes';
import type { Plan } from '../../core/packing';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Condition } from '../../core/api';
import { conditionSchema } from '../../core/api/primitives';
import { ClusterRefSchema, TaskQueuesSchema, setCondition, type ConditionUpdate, type NodeClaimWorkflowInput } from '../../core/lifecycle';
import { MULTI_NODE_CANDIDATES, moveDecision, type CapacityType, type ConsolidationDecision, type ConsolidationSettings, type ReplacedNode, type ReplacementOption } from '../../core/disruption';
import { OptionLists, podDisposition, batchResult, batchToCreate, type BatchResult, type CreatedClaims, type PlannedBatch, type PoolStatus, asPlannedCapacity, claimManifest, claimTemplate, compactClaim, poolUsage, type ClaimTemplate, type ClaimUsage, type CompactClaim } from '../../core/provisioning';
import { assembleObjects, type ObjectDocument } from '../../core/workloads/assemble';
import { type ClusterResolver } from '../cluster';
import { startNodeClaimLifecycle } from '../nodeclaim/start';
import { type KubeClients } from '../kube/clients';
import { apiStatus, isConflict, isNotFound } from '../kube/errors';
import { createEventSink, type EventSink } from '../kube/event-sink';
import { createEventRecorder, type RecordEvent } from '../kube/events';
import { ResolutionCache, cloudCatalog } from './catalog';
import { createSolverThread, type SolverThread } from './solver-thread';
import { validateKarpenterObjects } from './validate';
import { readWorld, type World } from './world';
import { activityLog } from '../log';
import { summariseCluster, type AutonodeMetrics, type SchedulingController } from '../metrics';

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

export const CreateClaimsInputSchema = z.object({
  cluster: ClusterRefSchema,
  taskQueues: TaskQueuesSchema,
  batchId: z.string().min(1),
  templates: z.array(z.custom<ClaimTemplate>((v) => typeof v === 'object' && v !== null && 'pool' in v)),
  optionLists: z.array(z.array(z.string())),
  claims: z.array(z.custom<CompactClaim>((v) => typeof v === 'object' && v !== null && 'name' in v)),
  poolStatus: z.array(z.object({ name: z.string(), conditions: z.array(z.custom<ConditionUpdate>()), resources: z.record(z.string(), z.string()) })).default([]),
});
export type CreateClaimsInput = z.input<typeof CreateClaimsInputSchema>;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const PoolMetaSchema = z.object({ metadata: z.object({ name: z.string(), uid: z.string(), generation: z.number().optional() }) });
const nodeClaimsApi = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
/** while the solver thread works, the activity still says it is alive */
const SOLVE_HEARTBEAT_MS = 5_000;
export interface MultiNodeSimulation {
  /** plans solved in the search */
  simulations: number;
  /** the candidates of the command found (the longest worthwhile prefix); none when rejected */
  candidates: { nodeClaim: string; node: string }[];
  /** each prefix simulated, in order: its size, the new nodes its plan needed ($/h) and the verdict */
  tried: { size: number; claims: number; pricePerHour: number; verdict: string }[];
  planned?: PlannedBatch;
  decision: ConsolidationDecision;
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
  const resolutions = new ResolutionCache();
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
  async function readPlanning(raw: ProvisionBatchInput) {
    const input = ProvisionBatchInputSchema.parse(raw);
    Context.current().heartbeat({ stage: 'read' });
    const { guest, cloud } = await deps.resolve(input.cluster);
    const event = createEventRecorder(guest.core);
    // the state gauges see the cluster as listed, before any view changes it (summarised only with metrics)
    const onListed = (lists: Parameters<typeof summariseCluster>[0]) => deps.metrics?.observeCluster(input.cluster.name, summariseCluster(lists));
    const world = await readWorld(guest, { onListed });
    const { pools, classes, invalidClasses, skipped, invalid } = await validateKarpenterObjects(world, { event, guest, now: now() });
    // an invalid class is reported by name, not as missing
    const typesByClass = new Map<string, CatalogResult>([...invalidClasses, ...(await cloudCatalog(cloud, classes, input.unavailable, { scope: input.cluster.name, resolutions }))]);
    return { input, event, world, pools, classes, skipped, invalid, typesByClass };
  }
  type Planning = Awaited<ReturnType<typeof readPlanning>>;
  /** `controller`: who plans (the scheduling-duration metric's label); `view` changes the world first; `quiet` tells no pod */
  interface PlanOptions {
    controller: SchedulingController;
    view?: (world: World) => World;
    quiet?: boolean;
  }

  /** Reads, solves and says (unless `quiet`) what it planned; `view` changes the world first. */
  async function planWith(raw: ProvisionBatchInput, options: PlanOptions): Promise<PlannedBatch> {
    return planView(await readPlanning(raw), options);
  }

  /**
   * One plan over a read world. `view` changes the world before planning: a disruption asks
   * what its candidates' pods would need without them.
   */
  async function planView(state: Planning, options: PlanOptions): Promise<PlannedBatch> {
    const { input, event, pools, classes, typesByClass } = state;
    const heartbeat = (stage: string) => Context.current().heartbeat({ stage });
    const world = (options.view ?? ((w: World) => w))(state.world);
    const planned: PlannedBatch = {
      batchId: input.batchId,
      pending: world.provisionable.length,
      nominated: 0,
      onExistingNodes: 0,
      unschedulable: 0,
      pricePerHour: 0,
      solveMs: 0,
      skipped: [...state.skipped],
      templates: [],
      optionLists: [],
      claims: [],
      poolStatus: [],
    };
    const invalid = state.invalid;
    heartbeat('plan');

    const live = world.nodeClaims.filter((c) => c.metadata.deletionTimestamp === undefined);
    const capacityByType = capacityOfTypes(typesByClass);
    const usage = poolUsage(live.map(claimUsage), (type) => capacityByType.get(type));
    const usablePools: { pool: NodePool; uid: string; raw: unknown }[] = [];
    const conditionsOf = new Map<string, ConditionUpdate[]>();
    // each pool's status once the planned claims exist
    const statusAfter = (plannedClaims: readonly ClaimUsage[]): PoolStatus[] => {
      const after = poolUsage([...live.map(claimUsage), ...plannedClaims], (type) => capacityByType.get(type));
      return [...conditionsOf].map(([name, conditions]) => ({ name, conditions, resources: after.get(name) ?? { nodes: '0' } }));
    };
    for (const { name, why } of invalid) conditionsOf.set(name, [{ type: 'ValidationSucceeded', status: 'False', reason: 'InvalidNodePool', message: why }]);
    for (const [name, entry] of pools) {
      const className = entry.pool.spec.template.spec.nodeClassRef.name;
      const classResult = typesByClass.get(className) ?? { ok: false as const, reason: `EC2NodeClass ${className} (spec.template.spec.nodeClassRef.name) does not exist` };
      const valid: ConditionUpdate = { type: 'ValidationSucceeded', status: 'True', reason: 'ValidationSucceeded', message: '' };
      if (!classResult.ok) {
        planned.skipped.push(`NodePool ${name}: ${classResult.reason}`);
        conditionsOf.set(name, [valid, { type: 'NodeClassReady', status: 'False', reason: 'NodeClassNotReady', message: classResult.reason }]);
        continue;
      }
      conditionsOf.set(name, [valid, { type: 'NodeClassReady', status: 'True', reason: 'NodeClassReady', message: '' }]);
      usablePools.push(entry);
    }
    if (world.provisionable.length === 0) {
      planned.poolStatus = statusAfter([]);
      return planned;
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
    const beat = setInterval(() => heartbeat('solve'), SOLVE_HEARTBEAT_MS);
    let plan: Plan;
    try {
      plan = await solver.solve(packing, { guided: deps.guided ?? true });
    } finally {
      clearInterval(beat);
    }
    planned.solveMs = Date.now() - started;
    deps.metrics?.schedulingDuration.observe({ cluster: input.cluster.name, controller: options.controller }, planned.solveMs / 1000);

    // The claims, compact; then the pods are told (in the background: at 5k pods the
    // Events take ~20 s, which must not hold the packing worker or the next batch).
    const podRequests = new Map(packing.pods.map((p) => [`${p.namespace}/${p.name}`, p.requests]));
    const poolByName = new Map(usablePools.map((p) => [p.pool.metadata.name ?? '', p]));
    const optionLists = new OptionLists();
    const templates = new Map<string, ClaimTemplate>();
    // a simulation tells no pod anything
    const sink: EventSink = options.quiet ? SILENT : sinkFor(input.cluster.name, event);
    for (const claim of plan.nodeClaims) {
      const source = poolByName.get(claim.nodePool);
      if (!source) continue;
      if (!templates.has(claim.nodePool)) templates.set(claim.nodePool, claimTemplate(source.pool, source.uid));
      const compact = compactClaim(claim, { batchId: input.batchId, optionLists, podRequests });
      planned.claims.push(compact);
      planned.pricePerHour += claim.price;
      for (const pod of claim.pods) {
        planned.nominated++;
        podEvent(sink, pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${compact.name}`);
      }
    }
    for (const placement of plan.inFlightNodeClaims) {
      for (const pod of placement.pods) {
        planned.nominated++;
        podEvent(sink, pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${placement.name}`);
      }
    }
    planned.onExistingNodes = plan.existingNodes.reduce((n, p) => n + p.pods.length, 0);
    for (const u of plan.unschedulable) {
      planned.unschedulable++;
      podEvent(sink, u.pod, 'Warning', 'FailedScheduling', `Failed to schedule pod, ${u.reason}`);
    }
    planned.poolStatus = statusAfter(plan.nodeClaims.filter((c) => poolByName.has(c.nodePool)).map((c) => ({ nodePool: c.nodePool, instanceTypeOptions: c.instanceTypeOptions })));
    planned.templates = [...templates.values()];
    planned.optionLists = optionLists.lists;
    planned.pricePerHour = Math.round(planned.pricePerHour * 1e6) / 1e6;
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
          const manifest = claimManifest(claim, template, input.optionLists[claim.options] ?? [], input.batchId);
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
          Context.current().heartbeat({ stage: 'create' });
        }),
      ),
    );
    out.created.sort();
    out.resumed.sort();
    out.refused.sort();
    // NodePool status: this batch's conditions, and resources counting the claims just made
    // (Karpenter counts a claim from its creation). The stored conditions are read again here.
    if (input.poolStatus.length > 0) {
      const pools = ListSchema.parse(await guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' })).items;
      const rawByName = new Map(pools.flatMap((raw) => { const name = PoolMetaSchema.safeParse(raw).data?.metadata.name; return name === undefined ? [] : [[name, raw] as const]; }));
      await writePoolStatus(guest, input.poolStatus.flatMap((p) => (rawByName.has(p.name) ? [{ ...p, raw: rawByName.get(p.name) }] : [])), now());
    }
    return out;
  }

  /** The candidates' pods planned without them, judged (core/disruption/consolidate.ts), the plan narrowed to what the verdict keeps. */
  async function simulateMove(state: Planning, leaving: readonly { nodeClaim: string; node: string }[], settings: ConsolidationSettings): Promise<{ planned: PlannedBatch; decision: ConsolidationDecision }> {
    const nodes = new Set(leaving.map((c) => c.node));
    const planned = await planView(state, { controller: 'disruption', view: (world) => withoutNodes(world, nodes), quiet: true });
    const types = new Map<string, ReplacementOption>();
    for (const result of state.typesByClass.values()) if (result.ok) for (const t of result.instanceTypes) types.set(t.name, { instanceType: t.name, offerings: t.offerings });
    const claims = new Map(state.world.nodeClaims.map((c) => [c.metadata.name, c]));
    const priceOf = (name: string): ReplacedNode | undefined => {
      const labels = claims.get(name)?.metadata.labels ?? {};
      const current = types.get(labels['node.kubernetes.io/instance-type'] ?? '')?.offerings.find((o) => o.zone === labels['topology.kubernetes.io/zone'] && o.capacityType === labels['karpenter.sh/capacity-type']);
      return current && current.price > 0 ? { price: current.price, capacityType: current.capacityType } : undefined;
    };
    const capacityTypesOf = (requirements: readonly { key: string; operator: string; values?: string[] | undefined }[]): CapacityType[] => {
      const r = requirements.find((x) => x.key === 'karpenter.sh/capacity-type' && x.operator === 'In');
      return (r?.values ?? ['spot', 'on-demand']).filter((v): v is CapacityType => v === 'spot' || v === 'on-demand');
    };
    const decision = moveDecision(
      {
        candidates: leaving.map((c) => priceOf(c.nodeClaim)),
        claims: planned.claims.map((c) => ({ name: c.name, options: planned.optionLists[c.options] ?? [], capacityTypes: capacityTypesOf(c.requirements) })),
        unschedulable: planned.unschedulable,
        types,
      },
      settings,
    );
    // each replacement launches only what the price rules kept
    const narrowed = decision.kind === 'replace' ? [{ claim: decision.claim, options: decision.options, capacityTypes: decision.capacityTypes }] : decision.kind === 'repack' ? decision.claims : [];
    for (const keep of narrowed) {
      planned.optionLists = [...planned.optionLists, keep.options];
      const list = planned.optionLists.length - 1;
      planned.claims = planned.claims.map((c) =>
        c.name !== keep.claim ? c : { ...c, options: list, requirements: [...c.requirements.filter((r) => r.key !== 'karpenter.sh/capacity-type'), { key: 'karpenter.sh/capacity-type', operator: 'In', values: keep.capacityTypes }] },
      );
    }
    if (decision.kind === 'repack') planned.pricePerHour = decision.pricePerHour;
    return { planned, decision };
  }

  const planBatch = (raw: ProvisionBatchInput) => planWith(raw, { controller: 'provisioner' });

  return {
    planBatch,
    /**
     * Disruption's simulation: the replacement NodeClaims the pods on `nodes` would need if
     * those nodes were gone (their pods placed on the rest of the cluster first), planned as
     * a batch — its claims are created by `createClaims` like any batch's, by name.
     */
    async planReplacements(raw: ProvisionBatchInput & { nodes: string[] }): Promise<PlannedBatch> {
      const leaving = new Set(z.array(z.string()).parse(raw.nodes));
      return planWith(raw, { controller: 'disruption', view: (world) => withoutNodes(world, leaving), quiet: true });
    },
    /**
     * Single-node consolidation's simulation: the candidate's pods planned without it, and
     * the verdict on the plan (core/disruption/consolidate.ts). A replacement's claim is
     * narrowed to the options the price rules kept (and to spot when forced), so what is
     * launched is what was judged cheaper.
     */
    async simulateConsolidation(raw: ProvisionBatchInput & { nodeClaim: string; node: string; spotToSpot?: boolean; manyToMany?: { minSavings: number } }): Promise<{ planned: PlannedBatch; decision: ConsolidationDecision }> {
      const state = await readPlanning(raw);
      return simulateMove(state, [{ nodeClaim: raw.nodeClaim, node: raw.node }], { spotToSpot: raw.spotToSpot ?? false, ...(raw.manyToMany ? { manyToMany: raw.manyToMany } : {}) });
    },
    /**
     * Multi-node consolidation (multinodeconsolidation.go): the longest prefix of the
     * ordered candidates (at least 2, at most 100) whose pods can move as a worthwhile
     * command, found by binary search over one read of the cluster. With `manyToMany` a
     * command may launch several new nodes (see repackDecision); without, at most one.
     */
    async simulateMultiNodeConsolidation(raw: ProvisionBatchInput & { candidates: { nodeClaim: string; node: string }[]; spotToSpot?: boolean; manyToMany?: { minSavings: number } }): Promise<MultiNodeSimulation> {
      const state = await readPlanning(raw);
      const settings = { spotToSpot: raw.spotToSpot ?? false, ...(raw.manyToMany ? { manyToMany: raw.manyToMany } : {}) };
      const candidates = raw.candidates.slice(0, MULTI_NODE_CANDIDATES);
      let best: { size: number; planned: PlannedBatch; decision: Exclude<ConsolidationDecision, { kind: 'reject' }> } | undefined;
      let lastReject: string | undefined;
      let simulations = 0;
      const tried: MultiNodeSimulation['tried'] = [];
      let lo = 2;
      let hi = candidates.length;
      while (lo <= hi) {
        const mid = Math.floor((lo + hi) / 2);
        const { planned, decision } = await simulateMove(state, candidates.slice(0, mid), settings);
        simulations++;
        tried.push({ size: mid, claims: planned.claims.length, pricePerHour: planned.pricePerHour, verdict: decision.kind === 'reject' ? decision.reason : decision.kind });
        if (decision.kind === 'reject') {
          lastReject = decision.reason;
          hi = mid - 1;
        } else {
          best = { size: mid, planned, decision };
          lo = mid + 1;
        }
      }
      return best
        ? { simulations, tried, candidates: candidates.slice(0, best.size), planned: best.planned, decision: best.decision }
        : { simulations, tried, candidates: [], decision: { kind: 'reject', reason: lastReject ?? 'fewer than 2 candidates' } };
    },
    createClaims,
    /** Both steps in one activity: the provisioner's histories from before `plan-then-create` still call it. */
    async provisionBatch(raw: ProvisionBatchInput): Promise<BatchResult> {
      const input = ProvisionBatchInputSchema.parse(raw);
      const planned = await planBatch(input);
      const made = await createClaims({ cluster: input.cluster, taskQueues: input.taskQueues, ...batchToCreate(planned) });
      return batchResult(planned, made);
    },
  };
}

export type ProvisionerActivities = ReturnType<typeof createProvisionerActivities>;

const BoundPodSchema = z.object({ spec: z.object({ nodeName: z.string().nullish() }).passthrough() }).passthrough();

/**
 * The world with these nodes gone: their claims and nodes left out, and the pods that would
 * have to move (not DaemonSet or mirror pods, not finished) Pending in their stead — the only
 * pods the plan places. What stays bound elsewhere still takes its room.
 */
export function withoutNodes(world: World, leaving: ReadonlySet<string>): World {
  const nodeOf = (pod: unknown) => BoundPodSchema.safeParse(pod).data?.spec.nodeName ?? undefined;
  const moving = world.bound
    .filter((p) => leaving.has(nodeOf(p) ?? '') && podDisposition({ ...(p as object), spec: {}, status: UNSCHEDULABLE }) === 'provisionable')
    .map((p) => {
      const pod = p as { spec: Record<string, unknown> };
      const { nodeName: _nodeName, ...spec } = pod.spec;
      return { ...pod, spec, status: UNSCHEDULABLE };
    });
  return {
    ...world,
    provisionable: moving,
    bound: world.bound.filter((p) => !leaving.has(nodeOf(p) ?? '')),
    nodes: world.nodes.filter((n) => !leaving.has((n as { metadata?: { name?: string } }).metadata?.name ?? '')),
    nodeClaims: world.nodeClaims.filter((c) => !leaving.has(c.status?.nodeName ?? '')),
  };
}

/**
 * Why claims are created (the `reason` of karpenter_nodeclaims_created_total): the workflow
 * that asked says it — the disruption workflow creates replacements, the provisioner (and a
 * call outside any workflow) provisions. Karpenter's disruption reasons (drifted,
 * underutilized, …) are not in createClaims' input, so replacements say `disruption`.
 */
function creationReason(): 'provisioning' | 'disruption' {
  return asyncLocalStorage.getStore()?.info.workflowType === 'disruptionWorkflow' ? 'disruption' : 'provisioning';
}

const SILENT: EventSink = { emit: () => undefined, drained: async () => undefined };

const UNSCHEDULABLE = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };

const nameOf = (object: unknown): string => (typeof object === 'object' && object !== null && 'metadata' in object && typeof object.metadata === 'object' && object.metadata !== null && 'name' in object.metadata && typeof object.metadata.name === 'string' ? object.metadata.name : '');

const ListSchema = z.object({ items: z.array(z.unknown()) });

/** Every instance type's capacity, from the node classes' catalogs (a launching claim's usage is its largest option). */
function capacityOfTypes(typesByClass: ReadonlyMap<string, CatalogResult>): Map<string, Record<string, string>> {
  const capacity = new Map<string, Record<string, string>>();
  for (const types of typesByClass.values()) if (types.ok) for (const t of types.instanceTypes) capacity.set(t.name, { ...t.capacity });
  return capacity;
}

/** 400/403/404/422 on create: the object as planned will never be accepted, however often it is sent. */
const isRefusal = (err: unknown): boolean => [400, 403, 404, 422].includes(apiStatus(err) ?? 0);
const apiMessage = (err: unknown): string => {
  const body = typeof err === 'object' && err !== null && 'body' in err ? err.body : undefined;
  const parsed = z.object({ message: z.string() }).safeParse(typeof body === 'string' ? safeJson(body) : body);
  return parsed.success ? parsed.data.message : err instanceof Error ? err.message : String(err);
};
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

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
