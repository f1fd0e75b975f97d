// NodePools and the instance types each can launch, prepared once per solve: pool
// requirements applied to types and offerings, DaemonSet overhead per type, limits.
import { awsInstanceTypeLabelKeys, isProviderDecidedLabel, LabelKey } from '../scheduling/labels';
import { describeRequirement, matches, type Requirement } from '../scheduling/requirement';
import { intersectRequirements, parseRequirements, requirementsFromLabels, type Requirements } from '../scheduling/requirements';
import { toleratesAll, type Taint } from '../scheduling/taints';
import { add, subtract, type Dims, type Vec } from './dims';
import type { DaemonSetInput, NodePoolInput } from './input';

export interface Offering {
  readonly zone: string;
  readonly capacityType: string;
  readonly price: number;
}

export interface PoolType {
  /** Position in the pool's `types`, used for bitsets. */
  readonly index: number;
  readonly name: string;
  /** Type labels plus the pool's template labels and karpenter.sh/nodepool. */
  readonly labels: Readonly<Record<string, string>>;
  readonly capacity: Vec;
  readonly allocatable: Vec;
  /** Requests of the DaemonSet pods that will run on a node of this type in this pool. */
  readonly daemonOverhead: Vec;
  readonly daemonPorts: readonly string[];
  /** Available offerings the pool allows, cheapest first (then zone, capacity type). */
  readonly offerings: readonly Offering[];
}

export interface Pool {
  readonly order: number;
  readonly name: string;
  readonly weight: number;
  readonly requirements: Requirements;
  readonly templateLabels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly types: readonly PoolType[];
  /** The same types by cheapest offering, then name (finalizeClaim stops early on it). */
  readonly typesByPrice: readonly PoolType[];
  /** Label keys whose value is decided by the instance type (filter types, not nodes). */
  readonly typeKeys: ReadonlySet<string>;
  /** Dimensions with a limit, and what is left of it; mutated as claims are planned. */
  readonly limited: readonly number[];
  readonly headroom: Vec;
  nodesHeadroom: number;
  /** Why the pool cannot launch anything at all, if so (e.g. invalid requirements). */
  readonly invalid?: string;
  /** When no type is left: the pool requirements that no instance type meets on its own. */
  readonly noTypeBecause?: string;
}

export function hostPortKey(port: { port: number; protocol: string; hostIP: string }): string {
  return `${port.protocol}/${port.hostIP === '' ? '0.0.0.0' : port.hostIP}/${port.port}`;
}

/** Whether a node with these labels satisfies these requirements, key by key. */
export function labelsMatch(requirements: Requirements, labels: Readonly<Record<string, string>>, keys?: ReadonlySet<string>): boolean {
  for (const key of Object.keys(requirements)) {
    if (keys !== undefined && !keys.has(key)) continue;
    const requirement = requirements[key];
    if (requirement !== undefined && !matches(requirement, labels[key])) return false;
  }
  return true;
}

export function offeringAllowed(offering: Offering, zone: Requirement | undefined, capacityType: Requirement | undefined): boolean {
  return (zone === undefined || matches(zone, offering.zone)) && (capacityType === undefined || matches(capacityType, offering.capacityType));
}

interface DaemonModel {
  readonly requests: Vec;
  readonly requirementTerms: readonly Requirements[];
  readonly daemon: DaemonSetInput;
  readonly ports: readonly string[];
}

/** A DaemonSet pod's node requirements: its node selector with each required node-affinity term (any term may match). */
function daemonRequirementTerms(daemon: DaemonSetInput): Requirements[] {
  const selector = requirementsFromLabels(daemon.nodeSelector);
  const terms = daemon.requiredNodeAffinity.length === 0 ? [[]] : daemon.requiredNodeAffinity;
  return terms.flatMap((term) => {
    const parsed = parseRequirements(term);
    return parsed.ok ? [intersectRequirements(selector, parsed.requirements)] : [];
  });
}

export function daemonModels(daemonSets: readonly DaemonSetInput[], dims: Dims): DaemonModel[] {
  return daemonSets.map((daemon) => ({ requests: dims.vector(daemon.requests, 'up'), requirementTerms: daemonRequirementTerms(daemon), daemon, ports: daemon.hostPorts.map(hostPortKey) }));
}

/** Whether a DaemonSet pod would run on a node with these labels and taints. */
export function daemonRunsOn(model: Pick<DaemonModel, 'daemon' | 'requirementTerms'>, labels: Readonly<Record<string, string>>, taints: readonly Taint[]): boolean {
  if (!toleratesAll(taints, model.daemon.tolerations).ok) return false;
  return model.requirementTerms.some((term) => labelsMatch(term, labels));
}

/** daemonRunsOn for one DaemonSet, outside a plan (no resource model). */
export function daemonSetRunsOn(daemon: DaemonSetInput, labels: Readonly<Record<string, string>>, taints: readonly Taint[]): boolean {
  return daemonRunsOn({ daemon, requirementTerms: daemonRequirementTerms(daemon) }, labels, taints);
}

export function buildPools(inputs: readonly NodePoolInput[], dims: Dims, daemons: readonly DaemonModel[]): Pool[] {
  const sorted = [...inputs].sort((a, b) => b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted.map((input, order) => buildPool(input, order, dims, daemons));
}

function buildPool(input: NodePoolInput, order: number, dims: Dims, daemons: readonly DaemonModel[]): Pool {
  const parsed = parseRequirements(input.requirements);
  const templateLabels = { ...input.labels, [LabelKey.nodePool]: input.name };
  const requirements = parsed.ok ? intersectRequirements(parsed.requirements, requirementsFromLabels(templateLabels)) : {};
  const limits = dims.vector(input.limits, 'down');
  const usage = dims.vector(input.usage, 'up');
  const limited = dims.names.map((name, i) => (input.limits[name] === undefined ? -1 : i)).filter((i) => i >= 0);
  const nodesLimit = input.limits.nodes === undefined ? Infinity : Number(input.limits.nodes);
  const nodesUsed = input.usage.nodes === undefined ? 0 : Number(input.usage.nodes);
  const typeKeys = new Set<string>([LabelKey.instanceType, LabelKey.arch, LabelKey.os, LabelKey.region, ...awsInstanceTypeLabelKeys]);
  for (const type of input.instanceTypes) for (const key of Object.keys(type.labels)) typeKeys.add(key);
  // A requirement on a label only the provider decides (placement-group-id, zone-id, a
  // label of another provider's domain, …) is met by a type that carries it, never by
  // stamping the wanted value onto the claim: when no type has the label, the pool matches
  // nothing and says which requirement. Custom labels stay the pool's own to give.
  for (const key of Object.keys(requirements)) if (isProviderDecidedLabel(key)) typeKeys.add(key);
  typeKeys.delete(LabelKey.zone);
  typeKeys.delete(LabelKey.capacityType);
  typeKeys.delete(LabelKey.nodePool);

  // A template label on a provider-decided key (instance-family: m5) narrows the types, as
  // upstream's label requirement does; it is never written over the type's own value.
  const stampedLabels = Object.fromEntries(Object.entries(templateLabels).filter(([key]) => key === LabelKey.nodePool || !isProviderDecidedLabel(key)));
  const zone = requirements[LabelKey.zone];
  const capacityType = requirements[LabelKey.capacityType];
  const types: PoolType[] = [];
  const byName = [...input.instanceTypes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const type of byName) {
    const labels = { ...type.labels, ...stampedLabels };
    if (!labelsMatch(requirements, labels, typeKeys)) continue;
    const offerings = type.offerings
      .filter((o) => o.available && offeringAllowed(o, zone, capacityType))
      .map((o) => ({ zone: o.zone, capacityType: o.capacityType, price: o.price }))
      .sort((a, b) => a.price - b.price || cmp(a.zone, b.zone) || cmp(a.capacityType, b.capacityType));
    if (offerings.length === 0) continue;
    const running = daemons.filter((d) => daemonRunsOn(d, labels, input.taints));
    const daemonOverhead = running.reduce((sum, d) => add(sum, d.requests), dims.zero());
    types.push({
      index: types.length, name: type.name, labels,
      capacity: dims.vector(type.capacity, 'down'), allocatable: dims.vector(type.allocatable, 'down'),
      daemonOverhead, daemonPorts: running.flatMap((d) => d.ports), offerings,
    });
  }
  const noTypeBecause = types.length === 0 ? unmetByEveryType(requirements, typeKeys, input.instanceTypes.map((t) => ({ ...t.labels, ...stampedLabels }))) : undefined;
  return {
    ...(noTypeBecause === undefined ? {} : { noTypeBecause }),
    order, name: input.name, weight: input.weight, requirements, templateLabels, taints: input.taints, types, typeKeys,
    typesByPrice: [...types].sort((a, b) => (a.offerings[0]?.price ?? Infinity) - (b.offerings[0]?.price ?? Infinity) || cmp(a.name, b.name)),
    limited, headroom: subtract(limits, usage), nodesHeadroom: nodesLimit - nodesUsed,
    ...(parsed.ok ? {} : { invalid: `NodePool ${input.name} has invalid requirements: ${parsed.reason}` }),
  };
}

/** The type-level requirements no instance type meets by itself, named with their values. */
function unmetByEveryType(requirements: Requirements, typeKeys: ReadonlySet<string>, labelSets: readonly Readonly<Record<string, string>>[]): string | undefined {
  const unmet = Object.keys(requirements).sort()
    .map((key) => requirements[key])
    .filter((r): r is Requirement => r !== undefined && typeKeys.has(r.key) && !labelSets.some((labels) => matches(r, labels[r.key])))
    .map((r) => `${describeRequirement(r)} (no instance type ${labelSets.some((labels) => labels[r.key] !== undefined) ? 'has such a value' : 'carries this label'})`);
  return unmet.length === 0 ? undefined : unmet.join('; ');
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether launching this type stays within the pool's remaining limits. */
export function withinLimits(pool: Pool, capacity: Vec): boolean {
  if (pool.nodesHeadroom < 1) return false;
  for (const i of pool.limited) if ((capacity[i] ?? 0) > (pool.headroom[i] ?? 0)) return false;
  return true;
}
