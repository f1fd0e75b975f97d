// autonode's disruption round, as workflows/disruption.ts runs it, on the in-memory cluster:
// disruptionRound on the snapshot; no emptiness/drift command → multi-node consolidation
// (multiNodeSearch over round.multiNode, one read for the whole search) → up to
// `consolidationTries` single-node simulations (one read each), remembering rejections by
// pod set as the workflow does. Every simulation is the packing activity's own code
// (activities/provisioner/plan-view.ts: world → assemble → solve → moveDecision); only
// the API reads are replaced by worldOf/planningOf.
import { disruptionRound, type CommandCandidate, type ConsolidationSettings } from '../../core/disruption';
import type { Plan } from '../../core/packing';
import { nodeClaimName } from '../../core/provisioning';
import { multiNodeSearch, simulateMove, type MoveSimulationResult, type PlanOptions } from '../../activities/provisioner/plan-view';
import { applyCommand, BENCH_NOW, movedBy, planningOf, podsByNode, roundInputOf, worldOf, type ClusterCommand, type Launch, type SimCluster } from './disruption-cluster';

export interface AutonodeOptions {
  settings: ConsolidationSettings;
  /** the workflow's consolidationTries (3) */
  tries: number;
  solve: PlanOptions['solve'];
}

export type CommandKind = 'emptiness' | 'multi' | 'single';

export interface CommandFound {
  kind: CommandKind;
  decision: string;
  candidates: CommandCandidate[];
  command: ClusterCommand;
}

export interface RoundOutcome {
  found?: CommandFound;
  /** plans solved */
  simulations: number;
  multiCandidates: number;
  singleCandidates: number;
  /** single-node simulations this round ran */
  singlesTried: number;
  /** why the multi-node search found nothing (when it ran and did not) */
  multiReject?: string;
}

/** What the workflow carries between rounds: rejected candidates by their pod set, and the last multi-node set found not worth it. */
export interface RoundMemory {
  tried: Map<string, string>;
  triedMulti?: string;
}

export const emptyMemory = (): RoundMemory => ({ tried: new Map() });

const capacityTypesOf = (requirements: readonly { key: string; operator: string; values?: string[] | undefined }[]): string[] | undefined =>
  requirements.find((r) => r.key === 'karpenter.sh/capacity-type' && r.operator === 'In')?.values;
const zonesOf = (requirements: readonly { key: string; operator: string; values?: string[] | undefined }[]): string[] | undefined =>
  requirements.find((r) => r.key === 'topology.kubernetes.io/zone' && r.operator === 'In')?.values;

/**
 * The command a simulation's verdict amounts to: the candidates go; each replacement claim
 * launches the cheapest offering its narrowed options allow (CreateFleet's lowest-price for
 * on-demand), holding the pods the plan put on it; the other moving pods go where the plan
 * put them on nodes that stay.
 */
export function autonodeCommand(cluster: SimCluster, leaving: readonly { node: string }[], sim: MoveSimulationResult): ClusterCommand {
  if (sim.decision.kind === 'reject') throw new Error('a rejected simulation is no command');
  const plan: Plan = sim.plan ?? { nodeClaims: [], existingNodes: [], inFlightNodeClaims: [], unschedulable: [], totalPrice: 0 };
  const compact = new Map(sim.planned.claims.map((c) => [c.name, c]));
  const launch: Launch[] = plan.nodeClaims.map((claim) => {
    const narrowed = compact.get(nodeClaimName(claim.nodePool, sim.planned.batchId, claim.pods));
    if (!narrowed) throw new Error(`planned claim ${claim.name} has no compact form`);
    const options = sim.planned.optionLists[narrowed.options] ?? [];
    const capacityTypes = capacityTypesOf(narrowed.requirements);
    const zones = zonesOf(narrowed.requirements);
    let best: Launch | undefined;
    for (const name of options) {
      const type = cluster.catalog.instanceTypes.find((t) => t.name === name);
      for (const o of type?.offerings ?? []) {
        if (!o.available || (capacityTypes && !capacityTypes.includes(o.capacityType)) || (zones && !zones.includes(o.zone))) continue;
        if (best === undefined || o.price < best.price) best = { instanceType: name, zone: o.zone, capacityType: o.capacityType, price: o.price, pods: claim.pods };
      }
    }
    if (!best) throw new Error(`replacement ${narrowed.name} has no offering it may launch on`);
    return best;
  });
  return { remove: leaving.map((c) => c.node), launch, moves: plan.existingNodes.map((n) => ({ node: n.name, pods: n.pods })) };
}

const describe = (sim: MoveSimulationResult): string => {
  const d = sim.decision;
  switch (d.kind) {
    case 'delete':
      return `delete, saves $${d.savingsPerHour.toFixed(3)}/h`;
    case 'replace':
      return `replace by 1 (${d.options[0]}…), saves $${d.savingsPerHour.toFixed(3)}/h`;
    case 'repack':
      return `re-pack into ${d.claims.length}, saves $${d.savingsPerHour.toFixed(3)}/h`;
    case 'reject':
      return `reject: ${d.reason}`;
  }
};

/**
 * One round of the disruption workflow on the cluster, without carrying the command out:
 * emptiness/drift, else multi-node then single-node consolidation. `memory` is updated as
 * the workflow updates its own (rejections remembered by pod set). `world` stands for what
 * the activities read from the API server (each read once per activity, as they do).
 */
export async function autonodeRound(cluster: SimCluster, memory: RoundMemory, options: AutonodeOptions, batch: string, world = worldOf(cluster)): Promise<RoundOutcome> {
  const round = disruptionRound(roundInputOf(cluster, planningOf(cluster, world, `${batch}-round`)));
  const outcome: RoundOutcome = { simulations: 0, multiCandidates: round.multiNode?.length ?? 0, singleCandidates: round.consolidate?.length ?? 0, singlesTried: 0 };
  if (round.command) {
    // emptiness (no drift here): its nodes hold nothing that must move
    outcome.found = { kind: 'emptiness', decision: round.command.summary, candidates: round.command.candidates, command: { remove: round.command.candidates.map((c) => c.node), launch: [], moves: [] } };
    return outcome;
  }
  // a SimCluster names each claim after its node
  const podSets = podsByNode(cluster);
  const podsOf = (c: CommandCandidate) => (podSets.get(c.node) ?? []).join(',');
  const multi = round.multiNode ?? [];
  const multiKey = multi.map((c) => `${c.nodeClaim}=${podsOf(c)}`).join(';');
  if (multi.length >= 2 && multiKey !== memory.triedMulti) {
    // one read for the whole search, as simulateMultiNodeConsolidation reads once
    const state = planningOf(cluster, world, `${batch}-multi`);
    const search = await multiNodeSearch(multi, (prefix) => simulateMove(state, prefix, options.settings, { now: BENCH_NOW, solve: options.solve }));
    outcome.simulations += search.simulations;
    if (search.best) {
      outcome.found = { kind: 'multi', decision: describe(search.best), candidates: search.candidates, command: autonodeCommand(cluster, search.candidates, search.best) };
      return outcome;
    }
    memory.triedMulti = multiKey;
    if (search.reason !== undefined) outcome.multiReject = search.reason;
  }
  for (const [claim, pods] of memory.tried) if ((podSets.get(claim) ?? []).join(',') !== pods) memory.tried.delete(claim);
  for (const c of (round.consolidate ?? []).filter((x) => !memory.tried.has(x.nodeClaim)).slice(0, options.tries)) {
    const state = planningOf(cluster, world, `${batch}-single-${c.nodeClaim}`);
    const sim = await simulateMove(state, [c], options.settings, { now: BENCH_NOW, solve: options.solve });
    outcome.simulations++;
    outcome.singlesTried++;
    if (sim.decision.kind === 'reject') {
      memory.tried.set(c.nodeClaim, podsOf(c));
      continue;
    }
    outcome.found = { kind: 'single', decision: describe(sim), candidates: [c], command: autonodeCommand(cluster, [c], sim) };
    return outcome;
  }
  return outcome;
}

export interface FixedPoint {
  cluster: SimCluster;
  rounds: number;
  /** each command carried out: its method, nodes removed, nodes launched, pods that had to move */
  commands: { kind: CommandKind; nodes: number; launched: number; moved: number; decision: string }[];
  simulations: number;
  seconds: number;
  /** false when `maxRounds` ran out first */
  converged: boolean;
}

/**
 * Rounds until one finds no command and has no candidate left untried (the workflow would
 * then simulate nothing until pods change): each command carried out on the cluster at once
 * (validation, taints, launches and drains take no time here; every node stays
 * consolidatable).
 */
export async function autonodeFixedPoint(start: SimCluster, options: AutonodeOptions & { maxRounds: number; onRound?: (round: number, cluster: SimCluster, kind?: CommandKind) => void }): Promise<FixedPoint> {
  const started = process.hrtime.bigint();
  let cluster = start;
  const memory = emptyMemory();
  const out: FixedPoint = { cluster, rounds: 0, commands: [], simulations: 0, seconds: 0, converged: false };
  while (out.rounds < options.maxRounds) {
    out.rounds++;
    const outcome = await autonodeRound(cluster, memory, options, `a${out.rounds}`);
    out.simulations += outcome.simulations;
    if (outcome.found) {
      const moved = movedBy(cluster, outcome.found.command);
      cluster = applyCommand(cluster, outcome.found.command);
      out.commands.push({ kind: outcome.found.kind, nodes: outcome.found.candidates.length, launched: outcome.found.command.launch.length, moved, decision: outcome.found.decision });
    }
    options.onRound?.(out.rounds, cluster, outcome.found?.kind);
    if (!outcome.found) {
      const byNode = podsByNode(cluster);
      const untried = [...cluster.nodes.values()].some((n) => (byNode.get(n.name) ?? []).length > 0 && !memory.tried.has(n.nodeClaim));
      if (!untried) {
        out.converged = true;
        break;
      }
    }
  }
  out.cluster = cluster;
  out.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return out;
}
