import { replaceDecision, type CapacityType, type ReplacementOption } from './price';

// Single-node consolidation's decision (karpenter.md §1.5 "Consolidation core"): with the
// candidate gone, where would its pods go? Nowhere new → delete it; one new node strictly
// cheaper at its worst launch price → replace it; anything else → keep it. Pure: the
// packing activity simulates, this decides.

export interface ConsolidationSimulation {
  /** what the candidate costs now; undefined when its offering is no longer priced */
  candidate?: { price: number; capacityType: CapacityType };
  /** the new NodeClaims its pods would need (the rest of the cluster used first) */
  claims: readonly { name: string; options: readonly string[]; capacityTypes: readonly CapacityType[] }[];
  /** pods that would fit nowhere */
  unschedulable: number;
  /** every instance type the plan could launch, with its offerings and prices */
  types: ReadonlyMap<string, ReplacementOption>;
}

export type ConsolidationDecision =
  | { kind: 'delete'; savingsPerHour: number }
  | { kind: 'replace'; claim: string; options: string[]; capacityTypes: CapacityType[]; savingsPerHour: number }
  | { kind: 'reject'; reason: string };

export function consolidationDecision(sim: ConsolidationSimulation, settings: { spotToSpot: boolean } = { spotToSpot: false }): ConsolidationDecision {
  if (sim.unschedulable > 0) return { kind: 'reject', reason: `${sim.unschedulable} pod(s) would fit nowhere without it` };
  if (sim.candidate === undefined) return { kind: 'reject', reason: 'its current offering has no known price' };
  if (sim.claims.length === 0) return { kind: 'delete', savingsPerHour: sim.candidate.price };
  if (sim.claims.length > 1) return { kind: 'reject', reason: `its pods would need ${sim.claims.length} new nodes (one node is never replaced by several)` };
  const claim = sim.claims[0]!;
  const options = claim.options.flatMap((name) => {
    const t = sim.types.get(name);
    return t ? [t] : [];
  });
  const decision = replaceDecision([sim.candidate], options, claim.capacityTypes, settings);
  if (decision.kind === 'reject') return decision;
  return { kind: 'replace', claim: claim.name, options: decision.options.map((o) => o.instanceType), capacityTypes: decision.capacityTypes, savingsPerHour: decision.savingsPerHour };
}
