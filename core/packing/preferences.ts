// Preferences are honoured by treating them as required until that fails, then relaxed
// one step at a time in Karpenter's order (preferences.go Relax; karpenter.md §1.6):
//   1. drop the first required node-affinity term when there are several (terms are ORed)
//   2. drop the heaviest preferred pod-affinity term
//   3. drop the heaviest preferred pod-anti-affinity term
//   4. drop the heaviest preferred node-affinity term
//   5. drop one ScheduleAnyway topology spread constraint
//   6. tolerate every PreferNoSchedule taint
// A pod is scheduled with its "effective" spec: required terms plus the preferences still
// standing. Relaxing returns a new spec, so pods relaxed alike share a class again.
import type { PendingPod, PodAffinityTerm, RequirementInput, TopologySpread } from './input';
import type { Toleration } from '../scheduling/taints';

export interface EffectiveSpec {
  /** The required node-affinity term in force (the first of the remaining ones), if any. */
  readonly nodeTerms: readonly (readonly RequirementInput[])[];
  /** Preferred node-affinity terms still standing, heaviest first (only the first applies). */
  readonly preferredNode: readonly (readonly RequirementInput[])[];
  readonly affinity: readonly PodAffinityTerm[];
  readonly preferredAffinity: readonly PodAffinityTerm[];
  readonly antiAffinity: readonly PodAffinityTerm[];
  readonly preferredAntiAffinity: readonly PodAffinityTerm[];
  /** DoNotSchedule constraints, then ScheduleAnyway ones (treated as DoNotSchedule). */
  readonly spread: readonly TopologySpread[];
  readonly preferredSpread: readonly TopologySpread[];
  readonly tolerations: readonly Toleration[];
  readonly toleratesPreferNoSchedule: boolean;
  /**
   * Whether the pod keeps other pods' DoNotSchedule spread satisfiable in any arrival order
   * (topology.ts, guardSpread). Given up only after every preference (`unguard`): a pod
   * the rule alone would leave unplaced is placed as Karpenter would place it.
   */
  readonly guardsSpread: boolean;
}

function heaviestFirst<T extends { weight: number }>(items: readonly T[]): T[] {
  // Stable sort: equal weights keep declaration order, the unique tie-breaker.
  return items.map((item, index) => ({ item, index }))
    .sort((a, b) => b.item.weight - a.item.weight || a.index - b.index)
    .map(({ item }) => item);
}

export function effectiveSpec(pod: PendingPod): EffectiveSpec {
  return {
    nodeTerms: pod.requiredNodeAffinity,
    preferredNode: heaviestFirst(pod.preferredNodeAffinity).map((p) => p.requirements),
    affinity: pod.podAffinity.required,
    preferredAffinity: heaviestFirst(pod.podAffinity.preferred).map((p) => p.podAffinityTerm),
    antiAffinity: pod.podAntiAffinity.required,
    preferredAntiAffinity: heaviestFirst(pod.podAntiAffinity.preferred).map((p) => p.podAffinityTerm),
    spread: pod.topologySpread.filter((c) => c.whenUnsatisfiable === 'DoNotSchedule'),
    preferredSpread: pod.topologySpread.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway'),
    tolerations: pod.tolerations,
    toleratesPreferNoSchedule: false,
    guardsSpread: true,
  };
}

/** One relaxation step, or undefined when nothing is left to relax. */
export function relax(spec: EffectiveSpec): { spec: EffectiveSpec; dropped: string } | undefined {
  if (spec.nodeTerms.length > 1) return { spec: { ...spec, nodeTerms: spec.nodeTerms.slice(1) }, dropped: 'the first required node affinity term' };
  if (spec.preferredAffinity.length > 0) return { spec: { ...spec, preferredAffinity: spec.preferredAffinity.slice(1) }, dropped: 'a preferred pod affinity term' };
  if (spec.preferredAntiAffinity.length > 0) return { spec: { ...spec, preferredAntiAffinity: spec.preferredAntiAffinity.slice(1) }, dropped: 'a preferred pod anti-affinity term' };
  if (spec.preferredNode.length > 0) return { spec: { ...spec, preferredNode: spec.preferredNode.slice(1) }, dropped: 'a preferred node affinity term' };
  if (spec.preferredSpread.length > 0) return { spec: { ...spec, preferredSpread: spec.preferredSpread.slice(1) }, dropped: 'a ScheduleAnyway topology spread constraint' };
  if (!spec.toleratesPreferNoSchedule) return { spec: { ...spec, toleratesPreferNoSchedule: true }, dropped: 'PreferNoSchedule taints' };
  return undefined;
}

/** After the last relaxation: stop guarding other pods' spread, or undefined if already so. */
export function unguard(spec: EffectiveSpec): { spec: EffectiveSpec; dropped: string } | undefined {
  return spec.guardsSpread ? { spec: { ...spec, guardsSpread: false }, dropped: "the guard on other pods' topology spread" } : undefined;
}

/** The tolerations in force, including the relaxation's tolerate-PreferNoSchedule. */
export function tolerationsOf(spec: EffectiveSpec): readonly Toleration[] {
  return spec.toleratesPreferNoSchedule ? [...spec.tolerations, { operator: 'Exists', effect: 'PreferNoSchedule' }] : spec.tolerations;
}

export function requiredAffinityTerms(spec: EffectiveSpec): readonly PodAffinityTerm[] {
  return [...spec.affinity, ...spec.preferredAffinity];
}

export function requiredAntiAffinityTerms(spec: EffectiveSpec): readonly PodAffinityTerm[] {
  return [...spec.antiAffinity, ...spec.preferredAntiAffinity];
}

export function spreadConstraints(spec: EffectiveSpec): readonly TopologySpread[] {
  return [...spec.spread, ...spec.preferredSpread];
}
