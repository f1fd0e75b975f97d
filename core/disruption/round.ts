import { type Budget } from '../api/disruption';
import { budgetBlock, disruptionsLeft, type DisruptionReason, type PoolNodeCounts } from './budgets';
import { candidateVerdict, disruptionCost, driftOrder, type CandidateNode, type CandidatePool, type DisruptionMethod } from './candidates';

// One disruption round over a snapshot of the cluster (karpenter.md §1.5 "Loop"): the
// methods in Karpenter's order, the first that yields a command wins. Pure: the activity
// gathers the snapshot, the workflow carries the command out.

export interface RoundPool extends CandidatePool {
  budgets: readonly Budget[];
  counts: PoolNodeCounts;
}

export interface RoundInput {
  now: number;
  nodes: readonly CandidateNode[];
  pools: ReadonlyMap<string, RoundPool>;
}

export interface CommandCandidate {
  nodeClaim: string;
  node: string;
  nodePool: string;
}

export interface DisruptionCommand {
  method: DisruptionMethod;
  reason: DisruptionReason;
  candidates: CommandCandidate[];
  /** the candidates run pods that must move: new capacity is planned and launched first */
  replace: boolean;
  /** what the command is for, in words (Events, status) */
  summary: string;
}

export interface Blocked {
  nodeClaim: string;
  method: DisruptionMethod;
  reason: string;
}

export interface RoundResult {
  command?: DisruptionCommand;
  /** when no command: single-node consolidation's candidates, cheapest to disrupt first, each within its pool's budget (the workflow simulates them in turn) */
  consolidate?: CommandCandidate[];
  /** when no command: multi-node consolidation's candidates — the same order, as many per pool as its budget allows at once, at most 100 */
  multiNode?: CommandCandidate[];
  /** candidates each method considered */
  considered: Partial<Record<DisruptionMethod, number>>;
  /** nodes a method would have taken but for a rule the admin controls (pods, budgets, annotations) */
  blocked: Blocked[];
}

/** Refusals worth telling the admin about: the node would go but for something they set. */
const ACTIONABLE = /do-not-disrupt|protected by|budget/;

/**
 * Emptiness (disruption/emptiness.go): every empty, consolidatable node is deleted, cheapest
 * to disrupt first, as many per NodePool as its budgets for `Empty` allow, in one command.
 */
export function emptinessCommand(input: RoundInput, result: RoundResult): DisruptionCommand | undefined {
  const eligible = input.nodes.filter((n) => {
    const verdict = candidateVerdict(n, input.pools.get(n.nodePool ?? ''), 'emptiness', input.now);
    if (!verdict.ok && ACTIONABLE.test(verdict.reason) && !n.pods.some((p) => p.reschedulable)) result.blocked.push({ nodeClaim: n.nodeClaim, method: 'emptiness', reason: verdict.reason });
    return verdict.ok;
  });
  result.considered.emptiness = eligible.length;
  const chosen: CommandCandidate[] = [];
  const byPool = new Map<string, CandidateNode[]>();
  for (const n of eligible) byPool.set(n.nodePool!, [...(byPool.get(n.nodePool!) ?? []), n]);
  for (const [name, nodes] of [...byPool].sort(([a], [b]) => a.localeCompare(b))) {
    const pool = input.pools.get(name)!;
    const left = disruptionsLeft(pool.budgets, 'Empty', pool.counts, new Date(input.now));
    const ordered = [...nodes].sort((a, b) => disruptionCost(a) - disruptionCost(b) || a.nodeClaim.localeCompare(b.nodeClaim));
    for (const [i, n] of ordered.entries()) {
      if (i < left) chosen.push({ nodeClaim: n.nodeClaim, node: n.node!, nodePool: name });
      else result.blocked.push({ nodeClaim: n.nodeClaim, method: 'emptiness', reason: left === 0 ? (budgetBlock(pool.budgets, 'Empty', pool.counts, new Date(input.now)) ?? 'budget allows 0 Empty disruptions now') : `budget of NodePool ${name} allows ${left} Empty disruption(s) this round` });
    }
  }
  if (chosen.length === 0) return undefined;
  return { method: 'emptiness', reason: 'Empty', candidates: chosen, replace: false, summary: `${chosen.length} empty node(s)` };
}

/**
 * Drift (disruption/drift.go): one drifted node per round — empty ones first, then the
 * oldest drift — within its NodePool's budget for `Drifted`. Pods on it pass by
 * do-not-disrupt and PDBs here (eventual disruption): the drain still honours PDBs.
 */
export function driftCommand(input: RoundInput, result: RoundResult): DisruptionCommand | undefined {
  const drifted = input.nodes.filter((n) => n.drifted !== undefined && candidateVerdict(n, input.pools.get(n.nodePool ?? ''), 'drift', input.now).ok);
  result.considered.drift = drifted.length;
  for (const n of driftOrder(drifted)) {
    const pool = input.pools.get(n.nodePool!)!;
    const blocked = budgetBlock(pool.budgets, 'Drifted', pool.counts, new Date(input.now));
    if (blocked !== undefined) {
      result.blocked.push({ nodeClaim: n.nodeClaim, method: 'drift', reason: blocked });
      continue;
    }
    const replace = n.pods.some((p) => p.reschedulable);
    return { method: 'drift', reason: 'Drifted', candidates: [{ nodeClaim: n.nodeClaim, node: n.node!, nodePool: n.nodePool! }], replace, summary: `drifted (${n.drifted!.reason})${replace ? '' : ', empty'}` };
  }
  return undefined;
}

/**
 * Single-node consolidation's candidates (singlenodeconsolidation.go): busy, consolidatable
 * nodes of pools that consolidate underused nodes, within the pool's budget for
 * `Underutilized`, cheapest to disrupt first. Whether one is worth it is the simulation's.
 */
export function consolidationCandidates(input: RoundInput, result: RoundResult): CommandCandidate[] {
  const eligible = input.nodes.filter((n) => candidateVerdict(n, input.pools.get(n.nodePool ?? ''), 'consolidation', input.now).ok);
  result.considered.consolidation = eligible.length;
  const out: CommandCandidate[] = [];
  for (const n of [...eligible].sort((a, b) => disruptionCost(a) - disruptionCost(b) || a.nodeClaim.localeCompare(b.nodeClaim))) {
    const pool = input.pools.get(n.nodePool!)!;
    const blocked = budgetBlock(pool.budgets, 'Underutilized', pool.counts, new Date(input.now));
    if (blocked !== undefined) {
      result.blocked.push({ nodeClaim: n.nodeClaim, method: 'consolidation', reason: blocked });
      continue;
    }
    out.push({ nodeClaim: n.nodeClaim, node: n.node!, nodePool: n.nodePool! });
  }
  return out;
}

/** One round: the first method that yields a command wins — emptiness, then drift; else the consolidation candidates, for the workflow to simulate (multi-node, then single-node). */
export function disruptionRound(input: RoundInput): RoundResult {
  const result: RoundResult = { considered: {}, blocked: [] };
  const command = emptinessCommand(input, result) ?? driftCommand(input, result);
  if (command) result.command = command;
  else {
    result.consolidate = consolidationCandidates(input, result);
    result.multiNode = multiNodeCandidates(input, result.consolidate);
  }
  return result;
}

/** Karpenter's cap on multi-node consolidation's candidates */
export const MULTI_NODE_CANDIDATES = 100;

/**
 * Multi-node consolidation's candidates (multinodeconsolidation.go): single-node's, in
 * the same order, each pool's cut to what its `Underutilized` budget allows at once, the
 * whole at most 100. Fewer than two: no multi-node command.
 */
export function multiNodeCandidates(input: RoundInput, candidates: readonly CommandCandidate[]): CommandCandidate[] {
  const left = new Map<string, number>();
  const out: CommandCandidate[] = [];
  for (const c of candidates) {
    const pool = input.pools.get(c.nodePool);
    if (!pool) continue;
    if (!left.has(c.nodePool)) left.set(c.nodePool, disruptionsLeft(pool.budgets, 'Underutilized', pool.counts, new Date(input.now)));
    const n = left.get(c.nodePool)!;
    if (n <= 0) continue;
    left.set(c.nodePool, n - 1);
    out.push(c);
    if (out.length === MULTI_NODE_CANDIDATES) break;
  }
  return out.length >= 2 ? out : [];
}

/**
 * Validation after the command's delay (validation.go): the candidates that are still
 * candidates, still within budget, in a fresh round. A command whose candidates are not
 * all still valid is abandoned (Karpenter re-plans rather than run a stale command).
 */
export function stillValid(command: DisruptionCommand, fresh: RoundInput): { ok: true } | { ok: false; reason: string } {
  const why: string[] = [];
  if (command.method === 'emptiness') {
    const again = emptinessCommand(fresh, { considered: {}, blocked: [] });
    const names = new Set(again?.candidates.map((c) => c.nodeClaim) ?? []);
    for (const c of command.candidates.filter((c) => !names.has(c.nodeClaim))) why.push(`${c.nodeClaim}: ${reasonNow(c, command.method, fresh) ?? 'over the budget now'}`);
  } else {
    for (const c of command.candidates) {
      const reason = reasonNow(c, command.method, fresh);
      const pool = fresh.pools.get(c.nodePool);
      const budget = pool ? budgetBlock(pool.budgets, command.reason, pool.counts, new Date(fresh.now)) : undefined;
      if (reason !== undefined || budget !== undefined) why.push(`${c.nodeClaim}: ${reason ?? budget}`);
    }
  }
  return why.length === 0 ? { ok: true } : { ok: false, reason: why.join('; ') };
}

/** Why a command's candidate is no longer one, or undefined while it is. */
function reasonNow(c: CommandCandidate, method: DisruptionMethod, fresh: RoundInput): string | undefined {
  const n = fresh.nodes.find((x) => x.nodeClaim === c.nodeClaim);
  if (!n) return 'it is gone';
  const verdict = candidateVerdict(n, fresh.pools.get(c.nodePool), method, fresh.now);
  return verdict.ok ? undefined : verdict.reason;
}
