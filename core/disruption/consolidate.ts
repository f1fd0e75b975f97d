import { cheapestPrice, replaceDecision, worstLaunchPrice, type CapacityType, type ReplacedNode, type ReplacementOption } from './price';

// Consolidation's decision (karpenter.md §1.5 "Consolidation core"): with the candidates
// gone, where would their pods go? Nowhere new → delete them; one new node strictly cheaper
// at its worst launch price → replace them (Karpenter's rules); several new nodes → only
// beyond Karpenter, as a re-pack that must save at least `minSavings` even at the worst
// launch prices. Pure: the packing activity simulates, this decides.

export interface ConsolidationClaim {
  name: string;
  options: readonly string[];
  capacityTypes: readonly CapacityType[];
}

export interface ConsolidationSimulation {
  /** what the candidate costs now; undefined when its offering is no longer priced */
  candidate?: ReplacedNode;
  /** the new NodeClaims its pods would need (the rest of the cluster used first) */
  claims: readonly ConsolidationClaim[];
  /** the candidates' pods that would fit nowhere (pods already pending that still fit nowhere do not count: Karpenter's AllNonPendingPodsScheduled) */
  unschedulable: number;
  /**
   * pods already pending (waiting for the provisioner) that the simulation had to put on new
   * nodes: the room they need is not there, and the candidates' pods would take what is
   */
  pendingOnNewNodes?: number;
  /** every instance type the plan could launch, with its offerings and prices */
  types: ReadonlyMap<string, ReplacementOption>;
}

/** Several candidates at once (multi-node consolidation): each one's price, undefined when unknown. */
export interface MoveSimulation extends Omit<ConsolidationSimulation, 'candidate'> {
  candidates: readonly (ReplacedNode | undefined)[];
}

export interface ConsolidationSettings {
  /** Karpenter's SpotToSpotConsolidation feature gate */
  spotToSpot: boolean;
  /** re-pack into several new nodes when that saves at least this share of the candidates' price (0.05: 5 %); absent: never (Karpenter) */
  manyToMany?: { minSavings: number };
}

export interface RepackedClaim {
  claim: string;
  options: string[];
  capacityTypes: CapacityType[];
}

export type ConsolidationDecision =
  | { kind: 'delete'; savingsPerHour: number }
  | { kind: 'replace'; claim: string; options: string[]; capacityTypes: CapacityType[]; savingsPerHour: number }
  | { kind: 'repack'; claims: RepackedClaim[]; savingsPerHour: number; worstSavingsPerHour: number; pricePerHour: number }
  /** transient: the same candidates may be simulated again before their pods change (the cluster around them is still moving) */
  | { kind: 'reject'; reason: string; transient?: true };

const dollars = (n: number) => `$${n.toFixed(4)}/h`;

/** Single-node consolidation: one candidate. */
export function consolidationDecision(sim: ConsolidationSimulation, settings: ConsolidationSettings = { spotToSpot: false }): ConsolidationDecision {
  const { candidate, ...rest } = sim;
  return moveDecision({ ...rest, candidates: [candidate] }, settings);
}

/** Whether moving these candidates' pods as simulated is worth it, and what to launch. */
export function moveDecision(sim: MoveSimulation, settings: ConsolidationSettings = { spotToSpot: false }): ConsolidationDecision {
  const one = sim.candidates.length === 1;
  if (sim.unschedulable > 0) return { kind: 'reject', reason: `${sim.unschedulable} pod(s) would fit nowhere without ${one ? 'it' : 'them'}` };
  // Karpenter simulates pending pods with the candidates' and launches nothing that would
  // leave them short; autonode goes further and waits: the provisioner launches for them first
  const pending = sim.pendingOnNewNodes ?? 0;
  if (pending > 0) return { kind: 'reject', reason: `${pending} pending pod(s) need new nodes: the provisioner launches for them before consolidation moves pods`, transient: true };
  const priced = sim.candidates.filter((c): c is ReplacedNode => c !== undefined);
  if (priced.length < sim.candidates.length) return { kind: 'reject', reason: one ? 'its current offering has no known price' : `${sim.candidates.length - priced.length} of the nodes have no known price` };
  const total = priced.reduce((sum, c) => sum + c.price, 0);
  if (sim.claims.length === 0) return { kind: 'delete', savingsPerHour: total };
  const optionsOf = (claim: ConsolidationClaim) => claim.options.flatMap((name) => sim.types.get(name) ?? []);
  if (sim.claims.length === 1) {
    const claim = sim.claims[0]!;
    const decision = replaceDecision(priced, optionsOf(claim), claim.capacityTypes, settings);
    if (decision.kind === 'reject') return decision;
    return { kind: 'replace', claim: claim.name, options: decision.options.map((o) => o.instanceType), capacityTypes: decision.capacityTypes, savingsPerHour: decision.savingsPerHour };
  }
  if (!settings.manyToMany) {
    return { kind: 'reject', reason: one ? `its pods would need ${sim.claims.length} new nodes (one node is never replaced by several)` : `their pods would need ${sim.claims.length} new nodes (many-to-many consolidation is off)` };
  }
  return repackDecision(priced, sim.claims.map((c) => ({ name: c.name, options: optionsOf(c), capacityTypes: c.capacityTypes })), { spotToSpot: settings.spotToSpot, minSavings: settings.manyToMany.minSavings });
}

/**
 * Beyond Karpenter: the candidates' pods re-packed into several new nodes. The move may
 * cost at most `total × (1 − minSavings)` even if every launch lands on its dearest
 * offering: each replacement gets a share of that allowance in proportion to its cheapest
 * price, and keeps only the options whose worst launch price fits its share. Capacity
 * types follow Karpenter's replace rules: a replacement that may be spot or on-demand is
 * forced to spot; spot candidates replaced by spot need spot-to-spot turned on.
 */
export function repackDecision(
  candidates: readonly ReplacedNode[],
  claims: readonly { name: string; options: readonly ReplacementOption[]; capacityTypes: readonly CapacityType[] }[],
  settings: { spotToSpot: boolean; minSavings: number },
): ConsolidationDecision {
  const total = candidates.reduce((sum, c) => sum + c.price, 0);
  const allowance = total * (1 - settings.minSavings);
  const allSpot = candidates.every((c) => c.capacityType === 'spot');
  const typed = claims.map((claim) => {
    const capacityTypes: CapacityType[] = claim.capacityTypes.includes('spot') && claim.capacityTypes.includes('on-demand') ? ['spot'] : [...claim.capacityTypes];
    const cheapest = Math.min(...claim.options.map((o) => cheapestPrice(o, capacityTypes)));
    return { ...claim, capacityTypes, cheapest };
  });
  if (allSpot && typed.some((c) => c.capacityTypes.includes('spot')) && !settings.spotToSpot) return { kind: 'reject', reason: 'replacing spot capacity with spot needs spot-to-spot consolidation turned on' };
  const unpriced = typed.find((c) => !Number.isFinite(c.cheapest));
  if (unpriced) return { kind: 'reject', reason: `replacement ${unpriced.name} has no offering it may launch on` };
  const best = typed.reduce((sum, c) => sum + c.cheapest, 0);
  const percent = (settings.minSavings * 100).toFixed(0);
  if (best > allowance) {
    return { kind: 'reject', reason: `re-packed into ${claims.length} nodes at best ${dollars(best)} against ${dollars(total)}: saves less than ${percent} %` };
  }
  const kept: (RepackedClaim & { worst: number })[] = [];
  for (const c of typed) {
    const share = (c.cheapest / best) * allowance;
    const fits = c.options
      .map((o) => ({ o, worst: worstLaunchPrice(o, c.capacityTypes), cheapest: cheapestPrice(o, c.capacityTypes) }))
      .filter((x): x is { o: ReplacementOption; worst: number; cheapest: number } => x.worst !== undefined && x.worst <= share + 1e-12)
      .sort((a, b) => a.cheapest - b.cheapest || a.o.instanceType.localeCompare(b.o.instanceType));
    if (fits.length === 0) return { kind: 'reject', reason: `replacement ${c.name}: no option is sure to cost at most its ${dollars(share)} share of a ${percent} % saving` };
    kept.push({ claim: c.name, options: fits.map((x) => x.o.instanceType), capacityTypes: c.capacityTypes, worst: Math.max(...fits.map((x) => x.worst)) });
  }
  const worst = kept.reduce((sum, c) => sum + c.worst, 0);
  return {
    kind: 'repack',
    claims: kept.map(({ worst: _worst, ...c }) => c),
    savingsPerHour: total - best,
    worstSavingsPerHour: total - worst,
    pricePerHour: best,
  };
}

/** What a consolidation command was decided on: kept until its validation re-simulates it. */
export type DecidedShape = { kind: 'delete' } | { kind: 'replace'; options: readonly string[] } | { kind: 'repack'; claims: number; savingsPerHour: number };

export function decidedShape(decision: Exclude<ConsolidationDecision, { kind: 'reject' }>): DecidedShape {
  switch (decision.kind) {
    case 'delete':
      return { kind: 'delete' };
    case 'replace':
      return { kind: 'replace', options: decision.options };
    case 'repack':
      return { kind: 'repack', claims: decision.claims.length, savingsPerHour: decision.savingsPerHour };
  }
}

/**
 * Karpenter's validation (validation.go), after the command waited its delay: the same
 * candidates simulated again must give a command of the same shape, or the cluster moved
 * under it and the command is dropped. A delete must still be a delete; a replacement must
 * still be one node whose options are a subset of the command's (nothing dearer crept in).
 * Beyond Karpenter, a re-pack must still be worth it (not rejected), need no more new nodes
 * and save at least what it was decided on; a plain delete or a single replacement that
 * saves as much also passes (the cluster only got easier).
 */
export function sameShape(decided: DecidedShape, now: ConsolidationDecision): { ok: true } | { ok: false; reason: string } {
  const fail = (reason: string) => ({ ok: false as const, reason: `re-simulated after the validation delay: ${reason}` });
  if (now.kind === 'reject') return fail(now.reason);
  switch (decided.kind) {
    case 'delete':
      return now.kind === 'delete' ? { ok: true } : fail(`its pods now need ${now.kind === 'replace' ? 'a new node' : `${now.claims.length} new nodes`}; it was a delete`);
    case 'replace': {
      if (now.kind !== 'replace') return fail(now.kind === 'delete' ? 'it is now a delete, not the replacement decided' : `its pods now need ${now.claims.length} new nodes, not one`);
      const allowed = new Set(decided.options);
      const extra = now.options.filter((o) => !allowed.has(o));
      return extra.length === 0 ? { ok: true } : fail(`the replacement now needs ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''}, not among the options decided`);
    }
    case 'repack': {
      const claims = now.kind === 'delete' ? 0 : now.kind === 'replace' ? 1 : now.claims.length;
      if (claims > decided.claims) return fail(`its pods now need ${claims} new nodes, more than the ${decided.claims} decided`);
      // $0.000001/h of slack: prices are rounded to 1e-6 on the way through
      if (now.savingsPerHour + 1e-6 < decided.savingsPerHour) return fail(`it now saves ${dollars(now.savingsPerHour)}, less than the ${dollars(decided.savingsPerHour)} decided`);
      return { ok: true };
    }
  }
}
