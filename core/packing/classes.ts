// Pod equivalence classes (Borg's single most transferable trick, performance.md §3):
// pods with identical requests, labels, namespace and effective constraints behave
// identically, so feasibility against every pool and type is computed once per class.
import { LabelKey } from '../scheduling/labels';
import { describeRequirement, isUnsatisfiable, type Requirement } from '../scheduling/requirement';
import { compatible, intersectRequirements, parseRequirements, requirementsFromLabels, type Requirements } from '../scheduling/requirements';
import { toleratesAll } from '../scheduling/taints';
import { dot, fitsWith, type Dims, type Vec } from './dims';
import type { PendingPod } from './input';
import { closestTypeMiss, lazily, resourceMiss, said, type Explanation } from './misses';
import { hostPortKey, labelsMatch, offeringAllowed, type Pool } from './pools';
import { tolerationsOf, type EffectiveSpec } from './preferences';

export type PoolFeasibility =
  | { readonly ok: true; readonly mask: Uint8Array; readonly types: readonly number[] }
  /** `why` is worded only when read (misses.ts): most misses are never reported. */
  | { readonly ok: false; readonly why: Explanation };

export interface PodClass {
  readonly id: number;
  readonly key: string;
  /**
   * Dense id of everything but topology: requests, node requirements, tolerations, host ports. Classes
   * of one shape share their feasibility and every value derived from it (standalone cost,
   * spread universes, share values): on Karpenter's benchmark input 3,400 classes at 20k
   * pods (labels × selectors) come in 30 shapes.
   */
  readonly shapeId: number;
  /** ClassKeys.topology: classes equal in it have the same ClassTopology (context.ts). */
  readonly topologyKey: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: EffectiveSpec;
  readonly requests: Vec;
  readonly requirements: Requirements;
  /** Set when the class's own node requirements cannot be parsed or never match. */
  readonly invalid?: string;
  readonly zone: Requirement | undefined;
  readonly capacityType: Requirement | undefined;
  readonly hostPorts: readonly string[];
  /** Per pool (by pool.order): which of its types can hold one pod of this class. */
  readonly feasibility: readonly PoolFeasibility[];
  /** Fluid-LP value of one pod, the packing priority. */
  value: number;
}

/**
 * A class's identity in two halves. `topology`: namespace, labels and every rule of the
 * spec that is not about nodes (so a field added to EffectiveSpec lands here by default);
 * classes equal in it have the same ClassTopology. `node`: requests, node selector and
 * terms, tolerations, host ports; classes equal in it share their shape (feasibility).
 */
export interface ClassKeys {
  /** Pods with the same key are interchangeable for every rule the solver applies. */
  readonly key: string;
  readonly topology: string;
  readonly node: string;
}

const sortedEntries = (record: Readonly<Record<string, string>>): [string, string][] =>
  Object.keys(record).sort().map((key) => [key, record[key] ?? '']);

export function classKeys(pod: PendingPod, spec: EffectiveSpec): ClassKeys {
  const { nodeTerms, preferredNode, tolerations, toleratesPreferNoSchedule, ...rules } = spec;
  const topology = JSON.stringify([pod.namespace, sortedEntries(pod.labels), rules]);
  const node = JSON.stringify([sortedEntries(pod.requests), sortedEntries(pod.nodeSelector), nodeTerms, preferredNode, tolerations, toleratesPreferNoSchedule, pod.hostPorts]);
  // Two complete JSON values side by side: the boundary is unambiguous.
  return { key: topology + node, topology, node };
}

export function classKey(pod: PendingPod, spec: EffectiveSpec): string {
  return classKeys(pod, spec).key;
}

/** Node requirements of a spec: nodeSelector ∩ the first remaining required term ∩ the heaviest preference. */
export function specRequirements(nodeSelector: Readonly<Record<string, string>>, spec: EffectiveSpec): { ok: true; requirements: Requirements } | { ok: false; reason: string } {
  let requirements = requirementsFromLabels(nodeSelector);
  const terms = [spec.nodeTerms[0], spec.preferredNode[0]].filter((t) => t !== undefined);
  for (const term of terms) {
    const parsed = parseRequirements(term);
    if (!parsed.ok) return { ok: false, reason: `invalid node affinity: ${parsed.reason}` };
    requirements = intersectRequirements(requirements, parsed.requirements);
  }
  return { ok: true, requirements };
}

export interface ClassBuildContext {
  readonly dims: Dims;
  readonly pools: readonly Pool[];
  /** Feasibility masks keyed by pool and requirement/toleration signature, shared across classes. */
  readonly compatCache: Map<string, { ok: true; mask: Uint8Array } | { ok: false; why: Explanation }>;
  /** Per shape (PodClass.shapeId, keyed by its JSON): what buildClass derives from it, built once. */
  readonly shapes: Map<string, ClassShape>;
}

type ClassShape = Pick<PodClass, 'shapeId' | 'requests' | 'requirements' | 'invalid' | 'zone' | 'capacityType' | 'hostPorts' | 'feasibility'>;

function buildShape(shapeId: number, pod: PendingPod, spec: EffectiveSpec, context: ClassBuildContext): ClassShape {
  const { dims, pools } = context;
  // Every pod takes one of the node's pod slots, whatever its manifest says.
  const requests = dims.vector({ ...pod.requests, pods: '1' }, 'up');
  const parsed = specRequirements(pod.nodeSelector, spec);
  const requirements = parsed.ok ? parsed.requirements : {};
  const unsatisfiable = Object.values(requirements).find((r) => isUnsatisfiable(r));
  const invalid = !parsed.ok ? parsed.reason
    : unsatisfiable !== undefined ? `its node requirements contradict each other on ${unsatisfiable.key}` : undefined;
  const base = {
    spec, requests, requirements,
    zone: requirements[LabelKey.zone], capacityType: requirements[LabelKey.capacityType],
    hostPorts: pod.hostPorts.map(hostPortKey),
  };
  const feasibility = pools.map((pool): PoolFeasibility => (invalid !== undefined ? { ok: false, why: said(invalid) } : poolFeasibility(base, pool, context)));
  return { shapeId, requests, requirements, zone: base.zone, capacityType: base.capacityType, hostPorts: base.hostPorts, feasibility, ...(invalid === undefined ? {} : { invalid }) };
}

/** `keys`: the pod's classKeys when the caller has computed them already. */
export function buildClass(id: number, pod: PendingPod, spec: EffectiveSpec, context: ClassBuildContext, keys = classKeys(pod, spec)): PodClass {
  // (the node half of the key: slightly finer than the shape needs — it keeps the node
  // terms relaxation has not reached yet — which only costs sharing between relaxed classes)
  const shapeJson = keys.node;
  let shape = context.shapes.get(shapeJson);
  if (shape === undefined) {
    shape = buildShape(context.shapes.size, pod, spec, context);
    context.shapes.set(shapeJson, shape);
  }
  return { ...shape, id, key: keys.key, topologyKey: keys.topology, namespace: pod.namespace, labels: pod.labels, spec, value: 0 };
}

type ClassCore = Pick<PodClass, 'requests' | 'requirements' | 'spec' | 'zone' | 'capacityType' | 'hostPorts'>;

function poolFeasibility(podClass: ClassCore, pool: Pool, context: ClassBuildContext): PoolFeasibility {
  if (pool.invalid !== undefined) return { ok: false, why: said(pool.invalid) };
  const tolerations = tolerationsOf(podClass.spec);
  const signature = `${pool.order}|${JSON.stringify(podClass.requirements)}|${JSON.stringify(tolerations)}`;
  let compat = context.compatCache.get(signature);
  if (compat === undefined) {
    compat = typeCompatibility(podClass, pool, tolerations);
    context.compatCache.set(signature, compat);
  }
  if (!compat.ok) return compat;
  const mask = new Uint8Array(pool.types.length);
  const types: number[] = [];
  for (const type of pool.types) {
    if (compat.mask[type.index] !== 1) continue;
    if (!fitsWith(type.daemonOverhead, podClass.requests, type.allocatable)) continue;
    if (podClass.hostPorts.some((port) => type.daemonPorts.includes(port))) continue;
    mask[type.index] = 1;
    types.push(type.index);
  }
  if (types.length === 0) {
    const { mask: compatMask } = compat;
    return { ok: false, why: lazily(() => resourceMiss(podClass, pool, compatMask, context.dims)) };
  }
  return { ok: true, mask, types };
}

function typeCompatibility(podClass: ClassCore, pool: Pool, tolerations: EffectiveSpec['tolerations']): { ok: true; mask: Uint8Array } | { ok: false; why: Explanation } {
  const tolerated = toleratesAll(pool.taints, tolerations);
  if (!tolerated.ok) return { ok: false, why: said(`NodePool ${pool.name}: ${tolerated.reason}`) };
  // Keys decided by the instance type or offering are checked per type below; the rest
  // (custom labels) must be promised by the pool's requirements or template labels.
  const allowUndefined = new Set([...pool.typeKeys, LabelKey.zone, LabelKey.capacityType]);
  const compat = compatible(pool.requirements, podClass.requirements, { allowUndefined });
  if (!compat.ok) return { ok: false, why: said(`NodePool ${pool.name}: ${compat.reason}`) };
  const combined = intersectRequirements(pool.requirements, podClass.requirements);
  const zone = combined[LabelKey.zone];
  const capacityType = combined[LabelKey.capacityType];
  const mask = new Uint8Array(pool.types.length);
  let any = false;
  for (const type of pool.types) {
    if (!labelsMatch(podClass.requirements, type.labels, pool.typeKeys)) continue;
    if (!type.offerings.some((o) => offeringAllowed(o, zone, capacityType))) continue;
    mask[type.index] = 1;
    any = true;
  }
  if (!any) {
    return {
      ok: false,
      why: lazily(() => {
        // (the pool's own name adds nothing to a reason that starts with it)
        const wanted = Object.values(podClass.requirements).filter((r) => r.key !== LabelKey.nodePool).map(describeRequirement).join(', ');
        return `NodePool ${pool.name}: no instance type with an available offering matches ${wanted === '' ? 'the pool requirements' : wanted}; closest: ${closestTypeMiss(pool, podClass, combined)}`;
      }),
    };
  }
  return { ok: true, mask };
}

/** The class's type bitset for a pool, or undefined when no type of the pool can hold it. */
export function maskFor(podClass: PodClass, pool: Pool): Uint8Array | undefined {
  const feasibility = podClass.feasibility[pool.order];
  return feasibility?.ok === true ? feasibility.mask : undefined;
}

/**
 * What one pod of the class costs when its class is packed alone: the cheapest, over
 * every type it fits, of price ÷ copies per node (copies capped by hostname rules).
 * Rejected alternative: the fluid-LP price u·R alone. It ignores integrality, so a 3-cpu
 * pod that leaves 0.9 cpu stranded on every 4-cpu node looks cheap, and the fill then
 * prefers small homogeneous nodes over a larger node mixing cpu- and memory-heavy pods.
 */
export function standaloneCost(podClass: PodClass, pools: readonly Pool[], perNode: number): number {
  let best = Infinity;
  for (const pool of pools) {
    const feasibility = podClass.feasibility[pool.order];
    if (feasibility === undefined || !feasibility.ok) continue;
    for (const index of feasibility.types) {
      const type = pool.types[index];
      if (type === undefined) continue;
      let copies = perNode;
      for (let r = 0; r < podClass.requests.length; r++) {
        const request = podClass.requests[r] ?? 0;
        if (request > 0) copies = Math.min(copies, Math.floor(((type.allocatable[r] ?? 0) - (type.daemonOverhead[r] ?? 0)) / request));
      }
      // Offerings come cheapest first: when even the cheapest cannot beat the best, skip
      // the search for the allowed one.
      if (copies < 1 || (type.offerings[0]?.price ?? Infinity) / copies >= best) continue;
      const offering = type.offerings.find((o) => offeringAllowed(o, podClass.zone, podClass.capacityType));
      if (offering !== undefined) best = Math.min(best, offering.price / copies);
    }
  }
  return best;
}

export function podValue(requests: Vec, prices: Vec): number {
  return dot(requests, prices);
}
