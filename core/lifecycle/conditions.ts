import { type Condition } from '../api';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
}

/**
 * Sets one condition the way Kubernetes API conventions ask: lastTransitionTime moves only
 * when the status changes; reason and message always reflect the latest observation.
 * Returns a new list sorted by type (stable output, minimal diffs).
 */
export function setCondition(conditions: readonly Condition[], update: ConditionUpdate, nowIso: string, generation?: number): Condition[] {
  const existing = conditions.find((c) => c.type === update.type);
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message: update.message ?? '',
    lastTransitionTime: existing && existing.status === update.status ? existing.lastTransitionTime : nowIso,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  return [...conditions.filter((c) => c.type !== update.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

export function conditionIsTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}
