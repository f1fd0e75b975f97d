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

/** The conditions that make up a NodeClaim's root `Ready` condition (as Karpenter's do). */
export const READY_DEPENDENTS = ['Launched', 'Registered', 'Initialized'] as const;

/**
 * Derives the root `Ready` condition — what `kubectl get nodeclaims` shows in READY —
 * from its dependents: True when all are True; False when one is False (its reason and
 * message explain why); Unknown while any is still missing or Unknown.
 */
export function withReadyCondition(conditions: readonly Condition[], nowIso: string, generation?: number): Condition[] {
  const dependents = READY_DEPENDENTS.map((type) => conditions.find((c) => c.type === type));
  const failed = dependents.find((c) => c?.status === 'False');
  const update: ConditionUpdate = dependents.every((c) => c?.status === 'True')
    ? { type: 'Ready', status: 'True', reason: 'Ready', message: '' }
    : failed
      ? { type: 'Ready', status: 'False', reason: `${failed.type}${failed.reason ? `: ${failed.reason}` : ''}`.replace(/[^A-Za-z0-9]/g, '') || 'NotReady', message: failed.message ?? '' }
      : { type: 'Ready', status: 'Unknown', reason: 'AwaitingReconciliation', message: `waiting for ${READY_DEPENDENTS.filter((_, i) => dependents[i]?.status !== 'True').join(', ')}` };
  return setCondition(conditions, update, nowIso, generation);
}
