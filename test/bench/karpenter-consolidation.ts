// A port of Karpenter's consolidation (sigs.k8s.io/karpenter v1.15.0, pkg/controllers/
// disruption: controller.go's method order, emptiness.go, multinodeconsolidation.go,
// singlenodeconsolidation.go, consolidation.go computeConsolidation, types.go NewCandidate,
// helpers.go SimulateScheduling; read in the Go module cache), the baseline of
// `npm run bench:disruption`'s fragmented scenario. Each simulation shows the Karpenter
// scheduler port (core/packing/baseline/karpenter-loop.ts) the same packing input autonode's
// planner gets (plan-view.ts assembleView on the world without the candidates).
//
// As in Karpenter:
//  - order: emptiness, then multi-node, then single-node; the first method with a command wins;
//  - candidates: nodes with pods to move (empty ones are emptiness's), sorted by
//    SavingsRatio = price / (1 + Σ eviction cost) descending (consolidation.go sortCandidates;
//    every pod costs 1 here); single-node interleaves pools (one pool here: same order);
//  - multi-node: budget filter, then firstNConsolidationOption's binary search exactly —
//    min 1, max = min(100, n − 1) when n ≤ 100 else 100, prefix = candidates[0 : mid+1] (so
//    up to 101 nodes when more than 100 are candidates); a replace must survive
//    filterOutSameInstanceType; 1-minute limit, then the last command found;
//  - single-node: candidates in order, the first command wins; 3-minute limit, then nothing;
//  - computeConsolidation: any pod left unscheduled → no command; no new claim → delete;
//    more than one → no command; one → its options ordered by price and truncated to 60
//    (SimulateScheduling's TruncateInstanceTypes), kept only where the worst launch price
//    (WorstLaunchPrice: the dearest compatible offering of the first capacity type in
//    reserved, spot, on-demand order that has one) is below the candidates' summed price;
//    spot candidates with a spot-capable replacement need SpotToSpotConsolidation (off);
//    OD → [OD, spot] is forced to spot.
// Where it differs (the bench's in-memory cluster has no time, no API, one pool):
//  - no validation after 15 s (nothing changes in between here) and no command queue: a
//    command is carried out at once, every node stays consolidatable (no consolidateAfter,
//    no nomination, no isUnderConsolidateAfter skip in the scheduler);
//  - IsConsolidated: the run ends at the first round in which no method finds a command;
//  - the timeouts are wall-clock on this (slower, JavaScript) port, checked before each
//    simulation and after it (a simulation that ends past the limit counts as cancelled);
//  - Go's sort.Slice is not stable: equal SavingsRatios are ordered by node name here;
//  - the scheduler is karpenter-loop.ts, whose own differences from Karpenter's are in its
//    header (existing nodes by name then in-flight; pods by cpu, memory, name);
//  - minValues, reserved capacity, DRA and PDBs do not occur in the scenario.
import { LabelKey } from '../../core/scheduling/labels';
import { inValues, matches, type Requirement } from '../../core/scheduling/requirement';
import type { Requirements } from '../../core/scheduling/requirements';
import { runKarpenterLoop, type LoopClaim } from '../../core/packing/baseline/karpenter-loop';
import type { PoolType } from '../../core/packing/pools';
import { assembleView, withoutNodes } from '../../activities/provisioner/plan-view';
import { applyCommand, BENCH_NOW, movedBy, planningOf, podsByNode, worldOf, type ClusterCommand, type Launch, type SimCluster, type SimNode } from './disruption-cluster';
import type { CommandKind, FixedPoint } from './disruption-autonode';

/** scheduling.MaxInstanceTypes */
const MAX_INSTANCE_TYPES = 60;
const MULTI_NODE_LIMIT = 100;

export interface KarpenterOptions {
  /** MultiNodeConsolidationTimeoutDuration: 1 minute */
  multiTimeoutMs: number;
  /** SingleNodeConsolidationTimeoutDuration: 3 minutes */
  singleTimeoutMs: number;
  maxRounds: number;
  onRound?: (round: number, cluster: SimCluster, kind?: CommandKind) => void;
}

interface Candidate {
  node: SimNode;
  pods: readonly string[];
  /** the candidate's offering price (ResolveOfferingPrice) */
  price: number;
}

type Outcome =
  | { kind: 'noop'; reason: string }
  | { kind: 'delete'; command: ClusterCommand }
  /** `capacityType`: the claim's, or spot when forced */
  | { kind: 'replace'; command: ClusterCommand; claim: LoopClaim; options: PoolType[]; capacityType: Requirement | undefined };

/** 1 + Σ max(0, EvictionCost) over reschedulable pods: 1 + pods here (no deletion cost, no priority). */
const savingsRatio = (c: Candidate) => c.price / (1 + c.pods.length);

function sortCandidates(candidates: Candidate[]): Candidate[] {
  return candidates.sort((a, b) => savingsRatio(b) - savingsRatio(a) || a.node.name.localeCompare(b.node.name));
}

const compatible = (o: { zone: string; capacityType: string }, zone: Requirement | undefined, capacityType: Requirement | undefined) =>
  (zone === undefined || matches(zone, o.zone)) && (capacityType === undefined || matches(capacityType, o.capacityType));

/** cloudprovider Offerings.WorstLaunchPrice: the dearest compatible offering of the first capacity type (reserved, spot, on-demand) that has one. */
export function worstLaunchPrice(type: PoolType, zone: Requirement | undefined, capacityType: Requirement | undefined): number {
  for (const ct of ['reserved', 'spot', 'on-demand']) {
    const prices = type.offerings.filter((o) => o.capacityType === ct && compatible(o, zone, capacityType)).map((o) => o.price);
    if (prices.length > 0) return Math.max(...prices);
  }
  return Number.MAX_VALUE;
}

const cheapestCompatible = (type: PoolType, zone: Requirement | undefined, capacityType: Requirement | undefined): number =>
  Math.min(Number.MAX_VALUE, ...type.offerings.filter((o) => compatible(o, zone, capacityType)).map((o) => o.price));

/** The replacement's launch: CreateFleet's lowest-price on-demand pick among the options left. */
function launchOf(claim: LoopClaim, options: readonly PoolType[], capacityTypes: Requirement | undefined): Launch {
  const zone = claim.requirements[LabelKey.zone];
  let best: Launch | undefined;
  for (const type of options) {
    for (const o of type.offerings) {
      if (!compatible(o, zone, capacityTypes)) continue;
      if (best === undefined || o.price < best.price) best = { instanceType: type.name, zone: o.zone, capacityType: o.capacityType === 'spot' ? 'spot' : 'on-demand', price: o.price, pods: [...claim.pods] };
    }
  }
  if (!best) throw new Error(`Karpenter's replacement ${claim.id} has no offering left`);
  return best;
}

/** consolidation.go computeConsolidation, simulating with karpenter-loop.ts. */
function computeConsolidation(cluster: SimCluster, state: ReturnType<typeof planningOf>, candidates: readonly Candidate[]): Outcome {
  const names = new Set(candidates.map((c) => c.node.name));
  const { packing } = assembleView(state, { view: (world) => withoutNodes(world, names), now: BENCH_NOW });
  const remove = candidates.map((c) => c.node.name);
  if (packing === undefined) return { kind: 'delete', command: { remove, launch: [], moves: [] } };
  const run = runKarpenterLoop(packing);
  if (run === undefined) throw new Error('the Karpenter loop without a budget always finishes');
  if (run.unschedulable.length > 0) return { kind: 'noop', reason: `${run.unschedulable.length} pod(s) would not schedule` };
  const moves = run.existing.filter((n) => n.placed.length > 0).map((n) => ({ node: n.name, pods: [...n.placed] }));
  if (run.claims.length === 0) return { kind: 'delete', command: { remove, launch: [], moves } };
  if (run.claims.length > 1) return { kind: 'noop', reason: `Can't remove without creating ${run.claims.length} candidates` };
  const claim = run.claims[0]!;
  const zone = claim.requirements[LabelKey.zone];
  let capacityType = claim.requirements[LabelKey.capacityType];
  const candidatePrice = candidates.reduce((s, c) => s + c.price, 0);
  // OrderByPrice, then TruncateInstanceTypes(MaxInstanceTypes)
  const ordered = [...claim.options].sort((a, b) => cheapestCompatible(a, zone, capacityType) - cheapestCompatible(b, zone, capacityType)).slice(0, MAX_INSTANCE_TYPES);
  const allowsSpot = capacityType === undefined || matches(capacityType, 'spot');
  if (candidates.every((c) => c.node.capacityType === 'spot') && allowsSpot) return { kind: 'noop', reason: 'SpotToSpotConsolidation is disabled, can\'t replace a spot node with a spot node' };
  const options = ordered.filter((t) => worstLaunchPrice(t, zone, capacityType) < candidatePrice);
  if (options.length === 0) return { kind: 'noop', reason: 'Can\'t replace with a cheaper node' };
  if (allowsSpot && (capacityType === undefined || matches(capacityType, 'on-demand'))) capacityType = inValues(LabelKey.capacityType, ['spot']);
  return { kind: 'replace', claim, options, capacityType, command: { remove, launch: [launchOf(claim, options, capacityType)], moves } };
}

/**
 * multinodeconsolidation.go filterOutSameInstanceType: when the replacement could be of a
 * type some candidate already is, keep only options whose worst launch price is below the
 * cheapest such candidate's price (else deleting the other candidates alone would do).
 */
export function filterOutSameInstanceType(options: readonly PoolType[], requirements: Requirements, candidates: readonly Pick<Candidate, 'node' | 'price'>[]): PoolType[] {
  const priceByType = new Map<string, number>();
  for (const c of candidates) priceByType.set(c.node.instanceType, Math.min(priceByType.get(c.node.instanceType) ?? Number.MAX_VALUE, c.price));
  let maxPrice = Number.MAX_VALUE;
  for (const t of options) if (priceByType.has(t.name)) maxPrice = Math.min(maxPrice, priceByType.get(t.name)!);
  return options.filter((t) => worstLaunchPrice(t, requirements[LabelKey.zone], requirements[LabelKey.capacityType]) < maxPrice);
}

interface MethodResult {
  command?: ClusterCommand;
  simulations: number;
  timedOut: boolean;
}

/**
 * multinodeconsolidation.go firstNConsolidationOption: binary search for the longest prefix
 * (at least 2) that `compute` turns into a command — min 1, max = min(`limit`, n − 1) when
 * n ≤ limit else `limit`, each try candidates[0 : mid+1]. Past `deadline` (epoch ms, read from
 * `clock`), the last command found is returned.
 */
export function firstNConsolidationOption<T>(candidates: readonly T[], compute: (prefix: readonly T[]) => ClusterCommand | undefined, options: { limit: number; deadline: number; clock: () => number }): MethodResult {
  const out: MethodResult = { simulations: 0, timedOut: false };
  if (candidates.length < 2) return out;
  let min = 1;
  let max = options.limit;
  if (candidates.length <= max) max = candidates.length - 1;
  let lastSaved: ClusterCommand | undefined;
  const timedOut = () => ({ ...out, timedOut: true, ...(lastSaved ? { command: lastSaved } : {}) });
  while (min <= max) {
    if (options.clock() > options.deadline) return timedOut();
    const mid = Math.floor((min + max) / 2);
    const command = compute(candidates.slice(0, mid + 1));
    out.simulations++;
    // a simulation that ends past the deadline was cancelled in Karpenter (its context)
    if (options.clock() > options.deadline) return timedOut();
    if (command) {
      lastSaved = command;
      min = mid + 1;
    } else max = mid - 1;
  }
  return { ...out, ...(lastSaved ? { command: lastSaved } : {}) };
}

function multiNode(cluster: SimCluster, state: ReturnType<typeof planningOf>, candidates: readonly Candidate[], timeoutMs: number): MethodResult {
  return firstNConsolidationOption(
    candidates,
    (prefix) => {
      const outcome = computeConsolidation(cluster, state, prefix);
      if (outcome.kind === 'delete') return outcome.command;
      if (outcome.kind !== 'replace') return undefined;
      const kept = filterOutSameInstanceType(outcome.options, outcome.claim.requirements, prefix);
      return kept.length > 0 ? { ...outcome.command, launch: [launchOf(outcome.claim, kept, outcome.capacityType)] } : undefined;
    },
    { limit: MULTI_NODE_LIMIT, deadline: Date.now() + timeoutMs, clock: Date.now },
  );
}

function singleNode(cluster: SimCluster, state: ReturnType<typeof planningOf>, candidates: readonly Candidate[], timeoutMs: number): MethodResult {
  const out: MethodResult = { simulations: 0, timedOut: false };
  const deadline = Date.now() + timeoutMs;
  for (const candidate of candidates) {
    if (Date.now() > deadline) return { ...out, timedOut: true };
    const outcome = computeConsolidation(cluster, state, [candidate]);
    out.simulations++;
    if (outcome.kind !== 'noop') return { ...out, command: outcome.command };
  }
  return out;
}

export interface KarpenterFixedPoint extends FixedPoint {
  timeouts: { multi: number; single: number };
}

/** Karpenter's disruption controller, round after round, until no method finds a command (budgets: the pool's, 100 % in the bench). */
export function karpenterFixedPoint(start: SimCluster, options: KarpenterOptions): KarpenterFixedPoint {
  const started = process.hrtime.bigint();
  let cluster = start;
  const out: KarpenterFixedPoint = { cluster, rounds: 0, commands: [], simulations: 0, seconds: 0, converged: false, timeouts: { multi: 0, single: 0 } };
  while (out.rounds < options.maxRounds) {
    out.rounds++;
    const byNode = podsByNode(cluster);
    const all = [...cluster.nodes.values()].map((node) => ({ node, pods: byNode.get(node.name) ?? [], price: node.price }));
    const allowed = budgetAllows(cluster);
    const empty = all.filter((c) => c.pods.length === 0).slice(0, allowed);
    let found: { kind: CommandKind; command: ClusterCommand; nodes: number } | undefined;
    if (empty.length > 0) found = { kind: 'emptiness', command: { remove: empty.map((c) => c.node.name), launch: [], moves: [] }, nodes: empty.length };
    else {
      const candidates = allowed > 0 ? sortCandidates(all.filter((c) => c.pods.length > 0)) : [];
      const state = planningOf(cluster, worldOf(cluster), `k${out.rounds}`);
      // multi-node pre-filters by budget, in order; single-node needs only one disruption left
      const multi = multiNode(cluster, state, candidates.slice(0, allowed), options.multiTimeoutMs);
      out.simulations += multi.simulations;
      if (multi.timedOut) out.timeouts.multi++;
      if (multi.command) found = { kind: 'multi', command: multi.command, nodes: multi.command.remove.length };
      else {
        const single = singleNode(cluster, state, candidates, options.singleTimeoutMs);
        out.simulations += single.simulations;
        if (single.timedOut) out.timeouts.single++;
        if (single.command) found = { kind: 'single', command: single.command, nodes: 1 };
      }
    }
    if (found) {
      const moved = movedBy(cluster, found.command);
      cluster = applyCommand(cluster, found.command);
      const launched = found.command.launch;
      out.commands.push({ kind: found.kind, nodes: found.nodes, launched: launched.length, moved, decision: launched.length === 0 ? 'delete' : `replace by ${launched[0]!.instanceType}` });
    }
    options.onRound?.(out.rounds, cluster, found?.kind);
    if (!found) {
      out.converged = true;
      break;
    }
  }
  out.cluster = cluster;
  out.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return out;
}

/** The pool's budget as a node count (percentages rounded up, as Karpenter does). */
function budgetAllows(cluster: SimCluster): number {
  const percent = /^(\d+)%$/.exec(cluster.pool.budget);
  return percent ? Math.ceil((Number(percent[1]) * cluster.nodes.size) / 100) : Number(cluster.pool.budget);
}
