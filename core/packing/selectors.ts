// Label selectors (metav1.LabelSelector) for topology spread and pod (anti-)affinity.
import type { LabelSelector } from './input';

type Labels = Readonly<Record<string, string>>;

/** Kubernetes semantics: a missing selector matches nothing; `{}` matches everything. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (selector === undefined) return false;
  // (for…in, not Object.entries: called per pod and group, it should not allocate)
  const matchLabels = selector.matchLabels;
  if (matchLabels !== undefined) {
    for (const key in matchLabels) {
      if (labels[key] !== matchLabels[key]) return false;
    }
  }
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key];
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In': if (value === undefined || !values.includes(value)) return false; break;
      case 'NotIn': if (value !== undefined && values.includes(value)) return false; break;
      case 'Exists': if (value === undefined) return false; break;
      case 'DoesNotExist': if (value !== undefined) return false; break;
      default: {
        const unexpected: never = expression.operator;
        throw new Error(`unexpected selector operator ${String(unexpected)}`);
      }
    }
  }
  return true;
}

/** matchLabelKeys: the pod's own values for those keys join the selector (KEP-3243). */
export function withMatchLabelKeys(selector: LabelSelector | undefined, keys: readonly string[], labels: Labels): LabelSelector | undefined {
  if (selector === undefined || keys.length === 0) return selector;
  const extra = keys.filter((key) => labels[key] !== undefined).map((key) => ({ key, operator: 'In' as const, values: [labels[key] ?? ''] }));
  return { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
}

/**
 * Selectors are immutable once parsed and a rejected placement words its reason with one
 * (topology.ts violation): thousands of times per solve for the same few selectors.
 */
const descriptions = new WeakMap<LabelSelector, string>();

export function describeSelector(selector: LabelSelector | undefined): string {
  if (selector === undefined) return '<none>';
  let description = descriptions.get(selector);
  if (description === undefined) {
    description = wordSelector(selector);
    descriptions.set(selector, description);
  }
  return description;
}

function wordSelector(selector: LabelSelector): string {
  const parts = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector.matchExpressions ?? []).map((e) => `${e.key} ${e.operator}${e.values === undefined ? '' : ` [${e.values.join(', ')}]`}`),
  ];
  return parts.length === 0 ? '<all>' : parts.join(',');
}
