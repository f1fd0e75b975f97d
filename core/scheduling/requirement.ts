// One label key's requirement as a set of allowed label states: "absent" or a value.
//
// Every NodeSelectorRequirement operator denotes such a set (Kubernetes semantics):
//   In V          = V                         (label present, value in V)
//   NotIn V       = {absent} ∪ (values \ V)   (an absent label satisfies NotIn)
//   Exists        = all values
//   DoesNotExist  = {absent}
//   Gt n / Lt n   = integer values above n / below n   (absent does not satisfy)
//   Gte n / Lte n = Gt n−1 / Lt n+1
// The intersection of any two of these is again one of the five canonical shapes below,
// so the type is closed: intersect() never needs an escape hatch. Rejected alternative:
// Karpenter's single struct (complement flag + bounds) conflates "Exists ∩ DoesNotExist"
// with "DoesNotExist" and needs operator special cases in its compatibility check.

import { assertNever } from '../assert';

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';
export const nodeSelectorOperators: readonly NodeSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'];

/** The plain Kubernetes / Karpenter input shape. */
export interface NodeSelectorRequirementInput {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[] | undefined;
  readonly minValues?: number | undefined;
}

interface Common {
  readonly key: string;
  /** Karpenter's minValues: distinct values the launch options must keep for this key. */
  readonly minValues?: number | undefined;
}

export type Requirement =
  /** Present with one of `values`; with no values it matches nothing at all. */
  | (Common & { readonly kind: 'In'; readonly values: readonly string[] })
  | (Common & { readonly kind: 'DoesNotExist' })
  /** Absent, or present with a value not in `values` (never empty). */
  | (Common & { readonly kind: 'NotIn'; readonly values: readonly string[] })
  /** Present with any value not in `except`. */
  | (Common & { readonly kind: 'Exists'; readonly except: readonly string[] })
  /** Present with an integer value strictly between the bounds (at least one set), not in `except`. */
  | (Common & { readonly kind: 'Range'; readonly gt: number | undefined; readonly lt: number | undefined; readonly except: readonly string[] });

export type RequirementKind = Requirement['kind'];

export type RequirementParseResult =
  | { readonly ok: true; readonly requirement: Requirement }
  | { readonly ok: false; readonly reason: string };

function sortedUnique(values: readonly string[]): readonly string[] {
  // Code-unit order, not locale order: the same on every machine.
  return Object.freeze([...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** A label value as Kubernetes reads it for Gt/Lt: strconv.ParseInt(value, 10, 64). */
export function labelValueAsInteger(value: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(value)) return undefined;
  const parsed = BigInt(value);
  return parsed < int64Min || parsed > int64Max ? undefined : parsed;
}

function withinBounds(value: string, gt: number | undefined, lt: number | undefined): boolean {
  const integer = labelValueAsInteger(value);
  if (integer === undefined) return false;
  return (gt === undefined || integer > BigInt(gt)) && (lt === undefined || integer < BigInt(lt));
}

function withMinValues<T extends Requirement>(requirement: T, minValues: number | undefined): T {
  return minValues === undefined ? requirement : { ...requirement, minValues };
}

// Canonical constructors: the only way requirements are built.

export function inValues(key: string, values: readonly string[], minValues?: number): Requirement {
  return withMinValues({ kind: 'In', key, values: sortedUnique(values) }, minValues);
}

export function doesNotExist(key: string, minValues?: number): Requirement {
  return withMinValues({ kind: 'DoesNotExist', key }, minValues);
}

export function notIn(key: string, values: readonly string[], minValues?: number): Requirement {
  // NotIn with nothing excluded would allow everything, which no canonical shape means;
  // Kubernetes validation rejects it too, and so does parseRequirement.
  if (values.length === 0) throw new Error(`NotIn on ${key} needs at least one value`);
  return withMinValues({ kind: 'NotIn', key, values: sortedUnique(values) }, minValues);
}

export function exists(key: string, except: readonly string[] = [], minValues?: number): Requirement {
  return withMinValues({ kind: 'Exists', key, except: sortedUnique(except) }, minValues);
}

export function range(key: string, bounds: { gt?: number | undefined; lt?: number | undefined }, except: readonly string[] = [], minValues?: number): Requirement {
  const { gt, lt } = bounds;
  if (gt === undefined && lt === undefined) return exists(key, except, minValues);
  // No integer strictly between the bounds: the set is empty.
  if (gt !== undefined && lt !== undefined && BigInt(lt) - BigInt(gt) <= 1n) return inValues(key, [], minValues);
  const relevant = except.filter((value) => withinBounds(value, gt, lt));
  return withMinValues({ kind: 'Range', key, gt, lt, except: sortedUnique(relevant) }, minValues);
}

function parseBound(input: NodeSelectorRequirementInput): { ok: true; bound: number } | { ok: false; reason: string } {
  const values = input.values ?? [];
  const [text] = values;
  if (values.length !== 1 || text === undefined) {
    return { ok: false, reason: `requirement ${input.key} ${input.operator} needs exactly one integer value, got ${JSON.stringify(values)}` };
  }
  const integer = labelValueAsInteger(text);
  if (integer === undefined || integer < BigInt(Number.MIN_SAFE_INTEGER) || integer > BigInt(Number.MAX_SAFE_INTEGER)) {
    return { ok: false, reason: `requirement ${input.key} ${input.operator} needs an integer value, got "${text}"` };
  }
  return { ok: true, bound: Number(integer) };
}

function isOperator(operator: string): operator is NodeSelectorOperator {
  return (nodeSelectorOperators as readonly string[]).includes(operator);
}

/**
 * Builds the canonical requirement for a NodeSelectorRequirement, with Kubernetes'
 * validation rules: In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt/Gte/Lte
 * take exactly one integer. The key is used as given; see requirements.ts for aliases.
 */
export function parseRequirement(input: NodeSelectorRequirementInput): RequirementParseResult {
  const { key, operator, minValues } = input;
  const values = input.values ?? [];
  if (!isOperator(operator)) {
    return { ok: false, reason: `requirement ${key} has unknown operator "${operator}" (use one of ${nodeSelectorOperators.join(', ')})` };
  }
  if (minValues !== undefined && (!Number.isInteger(minValues) || minValues < 1)) {
    return { ok: false, reason: `requirement ${key} ${operator} has minValues ${minValues}; it must be a positive integer` };
  }
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return { ok: false, reason: `requirement ${key} ${operator} needs at least one value` };
      if (operator === 'In' && minValues !== undefined && new Set(values).size < minValues) {
        return { ok: false, reason: `requirement ${key} In has ${new Set(values).size} values but minValues ${minValues}` };
      }
      return { ok: true, requirement: operator === 'In' ? inValues(key, values, minValues) : notIn(key, values, minValues) };
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return { ok: false, reason: `requirement ${key} ${operator} takes no values, got ${JSON.stringify(values)}` };
      return { ok: true, requirement: operator === 'Exists' ? exists(key, [], minValues) : doesNotExist(key, minValues) };
    case 'Gt':
    case 'Lt':
    case 'Gte':
    case 'Lte': {
      const bound = parseBound(input);
      if (!bound.ok) return bound;
      const bounds = operator === 'Gt' ? { gt: bound.bound }
        : operator === 'Gte' ? { gt: bound.bound - 1 }
          : operator === 'Lt' ? { lt: bound.bound }
            : { lt: bound.bound + 1 };
      return { ok: true, requirement: range(key, bounds, [], minValues) };
    }
    default:
      return assertNever(operator);
  }
}

// The set view used by intersection.

type ValueSet =
  | { readonly type: 'finite'; readonly values: readonly string[] }
  | { readonly type: 'cofinite'; readonly except: readonly string[] }
  | { readonly type: 'integers'; readonly gt: number | undefined; readonly lt: number | undefined; readonly except: readonly string[] };

function valueSetOf(requirement: Requirement): ValueSet {
  switch (requirement.kind) {
    case 'In': return { type: 'finite', values: requirement.values };
    case 'DoesNotExist': return { type: 'finite', values: [] };
    case 'NotIn': return { type: 'cofinite', except: requirement.values };
    case 'Exists': return { type: 'cofinite', except: requirement.except };
    case 'Range': return { type: 'integers', gt: requirement.gt, lt: requirement.lt, except: requirement.except };
    default: return assertNever(requirement);
  }
}

/** Whether an absent label satisfies the requirement. */
export function allowsAbsent(requirement: Requirement): boolean {
  return requirement.kind === 'NotIn' || requirement.kind === 'DoesNotExist';
}

function valueSetHas(set: ValueSet, value: string): boolean {
  switch (set.type) {
    case 'finite': return set.values.includes(value);
    case 'cofinite': return !set.except.includes(value);
    case 'integers': return withinBounds(value, set.gt, set.lt) && !set.except.includes(value);
    default: return assertNever(set);
  }
}

/** Whether a node whose label is `value` (undefined: no such label) satisfies it. */
export function matches(requirement: Requirement, value: string | undefined): boolean {
  return value === undefined ? allowsAbsent(requirement) : valueSetHas(valueSetOf(requirement), value);
}

function union(a: readonly string[], b: readonly string[]): readonly string[] {
  return sortedUnique([...a, ...b]);
}

function maxBound(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minBound(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function intersectValueSets(a: ValueSet, b: ValueSet): ValueSet {
  if (a.type === 'finite') return { type: 'finite', values: a.values.filter((value) => valueSetHas(b, value)) };
  if (b.type === 'finite') return { type: 'finite', values: b.values.filter((value) => valueSetHas(a, value)) };
  if (a.type === 'cofinite' && b.type === 'cofinite') return { type: 'cofinite', except: union(a.except, b.except) };
  if (a.type === 'cofinite' && b.type === 'integers') return { ...b, except: union(a.except, b.except) };
  if (a.type === 'integers' && b.type === 'cofinite') return { ...a, except: union(a.except, b.except) };
  if (a.type === 'integers' && b.type === 'integers') {
    return { type: 'integers', gt: maxBound(a.gt, b.gt), lt: minBound(a.lt, b.lt), except: union(a.except, b.except) };
  }
  throw new Error('unreachable: every pair of value-set types is handled above');
}

/** The requirement allowing exactly what both allow (minValues: the larger). */
export function intersect(a: Requirement, b: Requirement): Requirement {
  if (a.key !== b.key) throw new Error(`cannot intersect requirements on different keys ${a.key} and ${b.key}`);
  const minValues = maxBound(a.minValues, b.minValues);
  const absent = allowsAbsent(a) && allowsAbsent(b);
  const set = intersectValueSets(valueSetOf(a), valueSetOf(b));
  switch (set.type) {
    case 'finite':
      // Absence survives only if both allow it, i.e. both are NotIn/DoesNotExist; then
      // at least one is DoesNotExist (finite) and the finite part is empty.
      return absent ? doesNotExist(a.key, minValues) : inValues(a.key, set.values, minValues);
    case 'cofinite':
      // Both were NotIn (absent allowed) or at least one was Exists (absent excluded).
      return absent ? notIn(a.key, set.except, minValues) : exists(a.key, set.except, minValues);
    case 'integers':
      return range(a.key, { gt: set.gt, lt: set.lt }, set.except, minValues);
    default:
      return assertNever(set);
  }
}

/** True when no label state satisfies it, so no node can. */
export function isUnsatisfiable(requirement: Requirement): boolean {
  return requirement.kind === 'In' && requirement.values.length === 0;
}

/** Human form naming key, operator and values, for "cannot schedule" reasons. */
export function describeRequirement(requirement: Requirement): string {
  const list = (values: readonly string[]): string => `[${values.join(', ')}]`;
  const { key } = requirement;
  switch (requirement.kind) {
    case 'In': return requirement.values.length === 0 ? `${key} In [] (matches nothing)` : `${key} In ${list(requirement.values)}`;
    case 'DoesNotExist': return `${key} DoesNotExist`;
    case 'NotIn': return `${key} NotIn ${list(requirement.values)}`;
    case 'Exists': return requirement.except.length === 0 ? `${key} Exists` : `${key} Exists, NotIn ${list(requirement.except)}`;
    case 'Range': {
      const parts = [
        ...(requirement.gt === undefined ? [] : [`Gt ${requirement.gt}`]),
        ...(requirement.lt === undefined ? [] : [`Lt ${requirement.lt}`]),
        ...(requirement.except.length === 0 ? [] : [`NotIn ${list(requirement.except)}`]),
      ];
      return `${key} ${parts.join(', ')}`;
    }
    default: return assertNever(requirement);
  }
}

export interface NodeSelectorRequirementOutput {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
  minValues?: number;
}

/**
 * NodeSelectorRequirements (ANDed) that denote exactly this requirement, e.g. for a
 * NodeClaim's spec. An unsatisfiable requirement comes out as `In []`, which the API
 * server rejects; callers must not write one.
 */
export function toNodeSelectorRequirements(requirement: Requirement): NodeSelectorRequirementOutput[] {
  const { key } = requirement;
  const min = requirement.minValues === undefined ? {} : { minValues: requirement.minValues };
  const excluding = (values: readonly string[]): NodeSelectorRequirementOutput[] =>
    values.length === 0 ? [] : [{ key, operator: 'NotIn', values: [...values] }];
  switch (requirement.kind) {
    case 'In': return [{ key, operator: 'In', values: [...requirement.values], ...min }];
    case 'DoesNotExist': return [{ key, operator: 'DoesNotExist', ...min }];
    case 'NotIn': return [{ key, operator: 'NotIn', values: [...requirement.values], ...min }];
    case 'Exists': return [{ key, operator: 'Exists', ...min }, ...excluding(requirement.except)];
    case 'Range': return [
      ...(requirement.gt === undefined ? [] : [{ key, operator: 'Gt' as const, values: [String(requirement.gt)], ...min }]),
      ...(requirement.lt === undefined ? [] : [{ key, operator: 'Lt' as const, values: [String(requirement.lt)], ...min }]),
      ...excluding(requirement.except),
    ];
    default: return assertNever(requirement);
  }
}
