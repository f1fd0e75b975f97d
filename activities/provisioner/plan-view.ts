// The packing activity's planning without the API server: one read of the cluster (a World,
// its validated pools and classes, their catalogs) planned as it is, or with some nodes gone
// — disruption's simulations. Nothing here does I/O: the solver is passed in (the activity's
// worker thread, or an in-process solve in `npm run bench:disruption`), and so are the
// Events (`tell`) and heartbeats. The activity reads, then calls these; so does the bench,
// on a World it builds itself, so the bench measures the code the product runs.
import { z } from 'zod';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import type { NodePool } from '../../core/api/nodepool';
import { moveDecision, MULTI_NODE_CANDIDATES, type CapacityType, type ConsolidationDecision, type ConsolidationSettings, type ReplacedNode, type ReplacementOption } from '../../core/disruption';
import type { CatalogResult } from '../../core/instancetypes';
import type { PackingInput, Plan } from '../../core/packing';
import { asPlannedCapacity, batchGateNeeded, claimTemplate, compactClaim, OptionLists, podNamesFit, podDisposition, poolUsage, type ClaimTemplate, type ClaimUsage, type HeldOffering, type PlannedBatch, type PoolStatus } from '../../core/provisioning';
import { type ConditionUpdate } from '../../core/lifecycle';
import { assembleObjects, type ObjectDocument } from '../../core/workloads/assemble';
import { type World } from './world';

export interface PoolEntry {
  pool: NodePool;
  uid: string;
  raw: unknown;
}

/** What every plan of one moment shares, read once. */
export interface Planning {
  batchId: string;
  region: string;
  world: World;
  pools: ReadonlyMap<string, PoolEntry>;
  classes: ReadonlyMap<string, EC2NodeClass>;
  /** NodePools / EC2NodeClasses skipped, each with why */
  skipped: readonly string[];
  /** NodePools that failed validation (their ValidationSucceeded=False) */
  invalid: readonly { name: string; why: string }[];
  typesByClass: ReadonlyMap<string, CatalogResult>;
  /** the offerings this plan held unavailable (the insufficient-capacity memory, an interrupted spot offering) */
  unavailable?: readonly HeldOffering[];
}

export type PodEventType = 'Normal' | 'Warning';

export interface PlanOptions {
  /** changes the world before planning: a disruption asks what its candidates' pods would need without them */
  view?: (world: World) => World;
  /** epoch ms: the packing input's clock */
  now: number;
  solve: (input: PackingInput) => Promise<Plan>;
  /** tells a pod what was planned for it (Nominated / FailedScheduling); absent: nobody is told (a simulation) */
  tell?: (pod: string, type: PodEventType, reason: string, message: string) => void;
  heartbeat?: (stage: string) => void;
  /** bytes of pod names the plan's claims may carry for nominations (PLANNED_PODS_BUDGET_BYTES); absent: none */
  podNamesBudget?: number;
}

/** The world as one plan sees it, assembled into the packing core's input. */
export interface AssembledView {
  world: World;
  /** the batch before its claims are known: counts, skipped, pool status without new claims */
  planned: PlannedBatch;
  usablePools: readonly PoolEntry[];
  /** each pool's status once these claims exist */
  statusAfter: (plannedClaims: readonly ClaimUsage[]) => PoolStatus[];
  /** undefined when nothing is waiting to be placed */
  packing?: PackingInput;
}

/**
 * The world (through `view`) as the packing core's input: pools whose node class has
 * instance types, each with its usage; pods waiting and pods bound; nodes as planned
 * capacity; live claims; node classes.
 */
export function assembleView(state: Planning, options: Pick<PlanOptions, 'view' | 'now'>): AssembledView {
  const { pools, classes, typesByClass } = state;
  const world = (options.view ?? ((w: World) => w))(state.world);
  const planned: PlannedBatch = {
    batchId: state.batchId,
    pending: world.provisionable.length,
    ...(world.awaiting > 0 ? { awaiting: world.awaiting } : {}),
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
  const live = world.nodeClaims.filter((c) => c.metadata.deletionTimestamp === undefined);
  const capacityByType = capacityOfTypes(typesByClass);
  const usage = poolUsage(live.map(claimUsage), (type) => capacityByType.get(type));
  const usablePools: PoolEntry[] = [];
  const conditionsOf = new Map<string, ConditionUpdate[]>();
  const statusAfter = (plannedClaims: readonly ClaimUsage[]): PoolStatus[] => {
    const after = poolUsage([...live.map(claimUsage), ...plannedClaims], (type) => capacityByType.get(type));
    return [...conditionsOf].map(([name, conditions]) => ({ name, conditions, resources: after.get(name) ?? { nodes: '0' } }));
  };
  for (const { name, why } of state.invalid) conditionsOf.set(name, [{ type: 'ValidationSucceeded', status: 'False', reason: 'InvalidNodePool', message: why }]);
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
  if (world.provisionable.length === 0) return { world, planned, usablePools, statusAfter };

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
  const { input: packing } = assembleObjects(documents, {
    region: state.region,
    now: options.now,
    catalog: (query) => typesByClass.get(query.nodeClassName) ?? { ok: false, reason: `EC2NodeClass ${query.nodeClassName} not found` },
  });
  return { world, planned, usablePools, statusAfter, packing };
}

/**
 * One plan over a read world: assembled, solved, and the claims made compact (pool
 * templates and option lists once each). `plan` is the solver's own, with every pod's
 * placement (undefined when nothing waited); the activity returns only `planned`.
 */
export async function planView(state: Planning, options: PlanOptions): Promise<{ planned: PlannedBatch; plan?: Plan; packing?: PackingInput }> {
  options.heartbeat?.('plan');
  const started = Date.now();
  const { planned, usablePools, statusAfter, packing } = assembleView(state, options);
  if (packing === undefined) {
    planned.poolStatus = statusAfter([]);
    return { planned };
  }
  const plan = await options.solve(packing);
  planned.solveMs = Date.now() - started;

  const tell = options.tell ?? (() => undefined);
  const podRequests = new Map(packing.pods.map((p) => [`${p.namespace}/${p.name}`, p.requests]));
  const poolByName = new Map(usablePools.map((p) => [p.pool.metadata.name ?? '', p]));
  const optionLists = new OptionLists();
  const templates = new Map<string, ClaimTemplate>();
  const namesSpent = { bytes: 0 };
  for (const claim of plan.nodeClaims) {
    const source = poolByName.get(claim.nodePool);
    if (!source) continue;
    if (!templates.has(claim.nodePool)) templates.set(claim.nodePool, claimTemplate(source.pool, source.uid));
    const withPodNames = options.podNamesBudget !== undefined && podNamesFit(claim.pods, namesSpent, options.podNamesBudget);
    const compact = compactClaim(claim, { batchId: state.batchId, optionLists, podRequests, withPodNames });
    planned.claims.push(compact);
    planned.pricePerHour += claim.price;
    for (const pod of claim.pods) {
      planned.nominated++;
      tell(pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${compact.name}`);
    }
  }
  for (const placement of plan.inFlightNodeClaims) {
    for (const pod of placement.pods) {
      planned.nominated++;
      tell(pod, 'Normal', 'Nominated', `Pod should schedule on: nodeclaim/${placement.name}`);
    }
  }
  // a provisioner batch's nodes (their pods are nominated) open together when its plan has topology rules
  if (options.podNamesBudget !== undefined && batchGateNeeded(plan.nodeClaims, packing.pods)) planned.batchGate = true;
  planned.onExistingNodes = plan.existingNodes.reduce((n, p) => n + p.pods.length, 0);
  for (const u of plan.unschedulable) {
    planned.unschedulable++;
    tell(u.pod, 'Warning', 'FailedScheduling', `Failed to schedule pod, ${u.reason}`);
  }
  planned.poolStatus = statusAfter(plan.nodeClaims.filter((c) => poolByName.has(c.nodePool)).map((c) => ({ nodePool: c.nodePool, instanceTypeOptions: c.instanceTypeOptions })));
  planned.templates = [...templates.values()];
  planned.optionLists = optionLists.lists;
  // only those among the claims' types travel on (a payload in the provisioner's history)
  const offered = new Set(planned.optionLists.flat());
  const held = (state.unavailable ?? []).filter((o) => offered.has(o.instanceType));
  if (held.length > 0) planned.unavailable = held.map((o) => ({ ...o }));
  planned.pricePerHour = Math.round(planned.pricePerHour * 1e6) / 1e6;
  return { planned, plan, packing };
}

/** Every instance type the catalogs offer, with its offerings and prices: what consolidation's price rules compare. */
export function replacementOptions(typesByClass: ReadonlyMap<string, CatalogResult>): Map<string, ReplacementOption> {
  const types = new Map<string, ReplacementOption>();
  for (const result of typesByClass.values()) if (result.ok) for (const t of result.instanceTypes) types.set(t.name, { instanceType: t.name, offerings: t.offerings });
  return types;
}

export interface MoveSimulationResult {
  planned: PlannedBatch;
  decision: ConsolidationDecision;
  /** the solver's plan: where every moving pod goes (undefined when nothing had to move) */
  plan?: Plan;
  /** what the solver was given (the moving pods, the rest of the cluster): for the LP bound of a re-pack */
  packing?: PackingInput;
}

/**
 * The candidates' pods planned without them, judged (core/disruption/consolidate.ts), the
 * plan narrowed to what the verdict keeps: each replacement launches only the options the
 * price rules kept, on the capacity types they allow.
 */
export async function simulateMove(
  state: Planning,
  leaving: readonly { nodeClaim: string; node: string }[],
  settings: ConsolidationSettings,
  options: Omit<PlanOptions, 'view' | 'tell'>,
): Promise<MoveSimulationResult> {
  const nodes = new Set(leaving.map((c) => c.node));
  const { planned, plan, packing } = await planView(state, { ...options, view: (world) => withoutNodes(world, nodes, { keepPending: true }) });
  // the pods that were pending before: they compete for the room the candidates' pods would take
  const pendingBefore = new Set(state.world.provisionable.map(podKeyOf));
  const unschedulable = (plan?.unschedulable ?? []).filter((u) => !pendingBefore.has(u.pod)).length;
  const pendingOnNewNodes = (plan?.nodeClaims ?? []).reduce((n, c) => n + c.pods.filter((p) => pendingBefore.has(p)).length, 0);
  const types = replacementOptions(state.typesByClass);
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
      unschedulable,
      pendingOnNewNodes,
      types,
    },
    settings,
  );
  const narrowed = decision.kind === 'replace' ? [{ claim: decision.claim, options: decision.options, capacityTypes: decision.capacityTypes }] : decision.kind === 'repack' ? decision.claims : [];
  for (const keep of narrowed) {
    planned.optionLists = [...planned.optionLists, keep.options];
    const list = planned.optionLists.length - 1;
    planned.claims = planned.claims.map((c) =>
      c.name !== keep.claim ? c : { ...c, options: list, requirements: [...c.requirements.filter((r) => r.key !== 'karpenter.sh/capacity-type'), { key: 'karpenter.sh/capacity-type', operator: 'In', values: keep.capacityTypes }] },
    );
  }
  if (decision.kind === 'repack') planned.pricePerHour = decision.pricePerHour;
  return { planned, decision, ...(plan ? { plan } : {}), ...(packing ? { packing } : {}) };
}

export interface MultiNodeSearch<T> {
  /** plans solved in the search */
  simulations: number;
  /** each prefix simulated, in order: its size, the new nodes its plan needed ($/h) and the verdict */
  tried: { size: number; claims: number; pricePerHour: number; verdict: string }[];
  /** the longest worthwhile prefix; empty when every size was rejected */
  candidates: T[];
  best?: MoveSimulationResult & { decision: Exclude<ConsolidationDecision, { kind: 'reject' }> };
  /** the last rejection's reason, when nothing was found */
  reason?: string;
  /** when nothing was found: some size was rejected only for now (moveDecision's transient) */
  transient?: true;
}

/**
 * Multi-node consolidation's search (multinodeconsolidation.go firstNConsolidationOption):
 * binary search over the prefix length of the ordered candidates, at least 2 and at most
 * 100 of them, for the longest whose pods can move as a worthwhile command.
 */
export async function multiNodeSearch<T>(candidates: readonly T[], simulate: (prefix: readonly T[]) => Promise<MoveSimulationResult>): Promise<MultiNodeSearch<T>> {
  const capped = candidates.slice(0, MULTI_NODE_CANDIDATES);
  let best: { size: number; result: NonNullable<MultiNodeSearch<T>['best']> } | undefined;
  let lastReject: string | undefined;
  let transient = false;
  let simulations = 0;
  const tried: MultiNodeSearch<T>['tried'] = [];
  let lo = 2;
  let hi = capped.length;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const result = await simulate(capped.slice(0, mid));
    simulations++;
    const { decision } = result;
    tried.push({ size: mid, claims: result.planned.claims.length, pricePerHour: result.planned.pricePerHour, verdict: decision.kind === 'reject' ? decision.reason : decision.kind });
    if (decision.kind === 'reject') {
      lastReject = decision.reason;
      if (decision.transient) transient = true;
      hi = mid - 1;
    } else {
      best = { size: mid, result: { ...result, decision } };
      lo = mid + 1;
    }
  }
  return best
    ? { simulations, tried, candidates: capped.slice(0, best.size), best: best.result }
    : { simulations, tried, candidates: [], reason: lastReject ?? 'fewer than 2 candidates', ...(transient ? { transient: true as const } : {}) };
}

const BoundPodSchema = z.object({ spec: z.object({ nodeName: z.string().nullish() }).passthrough() }).passthrough();

const UNSCHEDULABLE = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };

/**
 * The world with these nodes gone: their claims and nodes left out, and the pods that would
 * have to move (not DaemonSet or mirror pods, not finished) Pending in their stead. What stays
 * bound elsewhere still takes its room. With `keepPending` (a consolidation's simulation, as
 * Karpenter's SimulateScheduling) the pods already pending are planned with them; without it
 * (a drift or expiry replacement, launched for the moving pods only: the provisioner serves
 * the pending ones) the moving pods are the only ones the plan places.
 */
export function withoutNodes(world: World, leaving: ReadonlySet<string>, options: { keepPending?: boolean } = {}): World {
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
    provisionable: options.keepPending ? [...world.provisionable, ...moving] : moving,
    bound: world.bound.filter((p) => !leaving.has(nodeOf(p) ?? '')),
    nodes: world.nodes.filter((n) => !leaving.has((n as { metadata?: { name?: string } }).metadata?.name ?? '')),
    nodeClaims: world.nodeClaims.filter((c) => !leaving.has(c.status?.nodeName ?? '')),
  };
}

const podKeyOf = (pod: unknown): string => {
  const metadata = (pod as { metadata?: { namespace?: unknown; name?: unknown } }).metadata;
  return `${typeof metadata?.namespace === 'string' ? metadata.namespace : 'default'}/${typeof metadata?.name === 'string' ? metadata.name : ''}`;
};

const nameOf = (object: unknown): string => (typeof object === 'object' && object !== null && 'metadata' in object && typeof object.metadata === 'object' && object.metadata !== null && 'name' in object.metadata && typeof object.metadata.name === 'string' ? object.metadata.name : '');

/** Every instance type's capacity, from the node classes' catalogs (a launching claim's usage is its largest option). */
function capacityOfTypes(typesByClass: ReadonlyMap<string, CatalogResult>): Map<string, Record<string, string>> {
  const capacity = new Map<string, Record<string, string>>();
  for (const types of typesByClass.values()) if (types.ok) for (const t of types.instanceTypes) capacity.set(t.name, { ...t.capacity });
  return capacity;
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
