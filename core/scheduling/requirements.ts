// Requirements: label key → requirement, ANDed across keys (a NodePool's requirements, a
// pod's node selector and required affinity term, an instance type's labels).
import { normalizeLabelKey, wellKnownLabels } from './labels';
import {
  allowsAbsent, describeRequirement, inValues, intersect, isUnsatisfiable, matches, parseRequirement,
  type NodeSelectorRequirementInput, type Requirement,
} from './requirement';

export type Requirements = Readonly<Record<string, Requirement>>;

export type RequirementsParseResult =
  | { readonly ok: true; readonly requirements: Requirements }
  | { readonly ok: false; readonly reason: string };

function withRequirement(requirements: Requirements, requirement: Requirement): Requirements {
  const existing = requirements[requirement.key];
  return Object.freeze({ ...requirements, [requirement.key]: existing === undefined ? requirement : intersect(existing, requirement) });
}

/**
 * Parses NodeSelectorRequirements. Keys are normalised through the label aliases
 * (beta.kubernetes.io/arch → kubernetes.io/arch, …) and repeated keys are intersected,
 * since every expression must hold.
 */
export function parseRequirements(inputs: readonly NodeSelectorRequirementInput[]): RequirementsParseResult {
  let requirements: Requirements = {};
  for (const input of inputs) {
    const parsed = parseRequirement({ ...input, key: normalizeLabelKey(input.key) });
    if (!parsed.ok) return parsed;
    requirements = withRequirement(requirements, parsed.requirement);
  }
  return { ok: true, requirements };
}

/** For literals in code and tests; outside data goes through parseRequirements. */
export function requirements(...inputs: readonly NodeSelectorRequirementInput[]): Requirements {
  const parsed = parseRequirements(inputs);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.requirements;
}

/** A nodeSelector or a node's labels: each key In [value]. */
export function requirementsFromLabels(labels: Readonly<Record<string, string>>): Requirements {
  let result: Requirements = {};
  for (const [key, value] of Object.entries(labels)) {
    result = withRequirement(result, inValues(normalizeLabelKey(key), [value]));
  }
  return result;
}

export function requirementKeys(requirements: Requirements): string[] {
  return Object.keys(requirements).sort();
}

export function hasRequirement(requirements: Requirements, key: string): boolean {
  return requirements[normalizeLabelKey(key)] !== undefined;
}

export function getRequirement(requirements: Requirements, key: string): Requirement | undefined {
  return requirements[normalizeLabelKey(key)];
}

export function intersectRequirements(a: Requirements, b: Requirements): Requirements {
  return Object.values(b).reduce(withRequirement, a);
}

export type CompatibilityResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string };

export interface CompatibilityOptions {
  /**
   * Keys that `existing` may leave undefined while `incoming` constrains them. Defaults
   * to the well-known labels: an instance type need not list every label a pod may ask
   * for as long as the provisioner will set it. Pass an empty set to require every key.
   */
  readonly allowUndefined?: ReadonlySet<string>;
}

/**
 * Whether something constrained by `existing` (a NodePool, an instance type, a node)
 * can satisfy `incoming` (a pod's requirements), per Karpenter's Compatible:
 *  - a key both constrain must leave some allowed state in common (a value, or absence
 *    when both allow an absent label);
 *  - a key only `incoming` constrains is fine if an absent label satisfies it (NotIn,
 *    DoesNotExist) or it is in `allowUndefined`; otherwise no node is known to carry it.
 * The reason names each failing key with both sides' operators and values.
 */
export function compatible(existing: Requirements, incoming: Requirements, options: CompatibilityOptions = {}): CompatibilityResult {
  const allowUndefined = options.allowUndefined ?? wellKnownLabels;
  const reasons: string[] = [];
  for (const key of requirementKeys(incoming)) {
    const wanted = incoming[key];
    if (wanted === undefined) continue;
    const offered = existing[key];
    if (offered === undefined) {
      if (!allowsAbsent(wanted) && !allowUndefined.has(key)) {
        reasons.push(`label ${key} does not have known values (required: ${describeRequirement(wanted)})`);
      }
      continue;
    }
    if (isUnsatisfiable(intersect(offered, wanted))) {
      reasons.push(`${describeRequirement(wanted)} is incompatible with ${describeRequirement(offered)}`);
    }
  }
  return reasons.length === 0 ? { ok: true } : { ok: false, reason: reasons.join('; ') };
}

/** Whether a node with exactly these labels satisfies every requirement. */
export function labelsSatisfy(requirements: Requirements, labels: Readonly<Record<string, string>>): CompatibilityResult {
  const normalized: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) normalized[normalizeLabelKey(key)] = value;
  const failing = requirementKeys(requirements)
    .map((key) => requirements[key])
    .filter((requirement): requirement is Requirement => requirement !== undefined && !matches(requirement, normalized[requirement.key]))
    .map((requirement) => `${describeRequirement(requirement)} (node has ${normalized[requirement.key] === undefined ? 'no such label' : `${requirement.key}=${normalized[requirement.key]}`})`);
  return failing.length === 0 ? { ok: true } : { ok: false, reason: failing.join('; ') };
}

/**
 * The labels these requirements pin to a single value (Karpenter's Requirements.Labels):
 * what a node launched for them will carry.
 */
export function singleValuedLabels(requirements: Requirements): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const key of requirementKeys(requirements)) {
    const requirement = requirements[key];
    if (requirement?.kind === 'In' && requirement.values.length === 1 && requirement.values[0] !== undefined && requirement.values[0] !== '') {
      labels[key] = requirement.values[0];
    }
  }
  return labels;
}
