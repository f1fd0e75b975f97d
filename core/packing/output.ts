// From the solver's state to the Plan: names, labels, prices, stable ordering.
import { isProviderDecidedLabel, LabelKey } from '../scheduling/labels';
import { singleValuedLabels } from '../scheduling/requirements';
import type { FinalClaim } from './claim';
import type { Dims } from './dims';
import type { FixedNode } from './fixed-nodes';
import type { Plan, PlannedNodeClaim } from './plan';
import { cmp } from './pools';

/** FNV-1a, 32 bit: a stable, dependency-free hash for names derived from content. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Karpenter's generateName suffix looks like "abc12": five lowercase alphanumerics. */
function suffix(text: string): string {
  return (fnv1a(text) % 36 ** 5).toString(36).padStart(5, '0');
}

export function claimName(pool: string, pods: readonly string[], taken: Set<string>): string {
  for (let attempt = 0; ; attempt++) {
    const name = `${pool}-${suffix(`${pool}\n${pods.join('\n')}\n${attempt}`)}`;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
  }
}

function customLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([key]) => !isProviderDecidedLabel(key)));
}

export function roundPrice(price: number): number {
  return Math.round(price * 1e6) / 1e6;
}

export interface PlanParts {
  readonly finals: readonly FinalClaim[];
  readonly existing: readonly FixedNode[];
  readonly inFlight: readonly FixedNode[];
  readonly unschedulable: ReadonlyMap<string, string>;
  readonly dims: Dims;
}

/** What a claim's entry takes from its options and requirements alone (shared by alike claims). */
type ClaimDetails = Pick<PlannedNodeClaim, 'instanceTypeOptions' | 'labels' | 'allocatable' | 'requirements'>;

function claimDetails(final: FinalClaim, chosen: FinalClaim['options'][number], dims: Dims): ClaimDetails {
  const { claim } = final;
  const labels: Record<string, string> = {
    // Only custom labels come from requirements (Karpenter's Requirements.Labels): the
    // provider's labels are the chosen type's and offering's real values, below.
    ...customLabels(singleValuedLabels(claim.requirements)),
    ...chosen.type.labels,
    [LabelKey.zone]: chosen.offering.zone,
    [LabelKey.capacityType]: chosen.offering.capacityType,
    [LabelKey.nodePool]: claim.pool.name,
  };
  delete labels[LabelKey.hostname];
  return {
    instanceTypeOptions: final.options.map((o) => o.type.name),
    labels: Object.fromEntries(Object.keys(labels).sort().map((key) => [key, labels[key] ?? ''])),
    allocatable: dims.format(chosen.type.allocatable),
    requirements: final.requirements,
  };
}

/** A claim's own copy of shared details: the plan's claims are plain data a caller may edit. */
function copyOf(details: ClaimDetails): ClaimDetails {
  return {
    instanceTypeOptions: [...details.instanceTypeOptions],
    labels: { ...details.labels },
    allocatable: { ...details.allocatable },
    requirements: details.requirements.map((r) => (r.values === undefined ? { ...r } : { ...r, values: [...r.values] })),
  };
}

export function buildPlan(parts: PlanParts): Plan {
  const taken = new Set<string>();
  const nodeClaims: PlannedNodeClaim[] = [];
  // Alike claims share one options array (claim.ts finalizeClaimsMutating), and with it
  // their requirements, pool and chosen offering: their details are worked out once.
  const detailsByOptions = new Map<FinalClaim['options'], ClaimDetails>();
  for (const final of parts.finals) {
    const [chosen] = final.options;
    const { claim } = final;
    if (chosen === undefined) throw new Error(`claim ${claim.hostname} kept no instance type: the fill admitted pods its target type cannot hold`);
    const pods = [...claim.pods].sort(cmp);
    const known = detailsByOptions.get(final.options);
    // (the first claim of a kind keeps the details built for it; the others get copies)
    const details = known === undefined ? claimDetails(final, chosen, parts.dims) : copyOf(known);
    if (known === undefined) detailsByOptions.set(final.options, details);
    const { instanceTypeOptions, labels, allocatable, requirements } = details;
    nodeClaims.push({
      name: claimName(claim.pool.name, pods, taken),
      nodePool: claim.pool.name,
      instanceType: chosen.type.name,
      zone: chosen.offering.zone,
      capacityType: chosen.offering.capacityType,
      price: chosen.offering.price,
      instanceTypeOptions,
      labels,
      taints: claim.pool.taints.map((t) => ({ ...t })),
      allocatable,
      pods,
      requirements,
    });
  }
  const placements = (nodes: readonly FixedNode[]): Plan['existingNodes'] =>
    nodes.filter((n) => n.placed.length > 0).map((n) => ({ name: n.name, pods: [...n.placed].sort(cmp) }));
  return {
    nodeClaims,
    existingNodes: placements(parts.existing),
    inFlightNodeClaims: placements(parts.inFlight),
    unschedulable: [...parts.unschedulable.entries()].sort(([a], [b]) => cmp(a, b)).map(([pod, reason]) => ({ pod, reason })),
    totalPrice: roundPrice(nodeClaims.reduce((sum, c) => sum + c.price, 0)),
  };
}
