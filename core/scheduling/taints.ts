// Taints and tolerations with Kubernetes semantics (k8s.io/api/core/v1 toleration.go
// ToleratesTaint) and Karpenter's rule that a pod must tolerate every taint of a node,
// PreferNoSchedule included (core pkg/scheduling/taints.go); relaxation may later add a
// toleration for PreferNoSchedule taints.
import { z } from 'zod';

export const taintEffectSchema = z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
export type TaintEffect = z.infer<typeof taintEffectSchema>;

export const taintSchema = z.object({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: taintEffectSchema,
});
export type Taint = z.infer<typeof taintSchema>;

export const tolerationSchema = z.object({
  key: z.string().optional(),
  operator: z.enum(['Equal', 'Exists']).optional(),
  value: z.string().optional(),
  // An empty effect matches every effect.
  effect: z.union([taintEffectSchema, z.literal('')]).optional(),
  tolerationSeconds: z.number().int().optional(),
});
export type Toleration = z.infer<typeof tolerationSchema>;

/**
 * Kubernetes ToleratesTaint:
 *  - an empty effect matches all effects, otherwise effects must be equal;
 *  - an empty key (only valid with Exists) matches all keys, otherwise keys must be equal;
 *  - Exists matches any value; Equal (the default) needs equal values ("" = no value).
 */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) return false;
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false;
  const operator = toleration.operator ?? 'Equal';
  switch (operator) {
    case 'Exists': return true;
    case 'Equal': return (toleration.value ?? '') === (taint.value ?? '');
    default: {
      const unexpected: never = operator;
      throw new Error(`unexpected toleration operator ${String(unexpected)}`);
    }
  }
}

export function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value === undefined || taint.value === '' ? '' : `=${taint.value}`}:${taint.effect}`;
}

export type TolerationResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly untolerated: readonly Taint[]; readonly reason: string };

/** Whether the tolerations cover every taint; the reason lists the taints left over. */
export function toleratesAll(taints: readonly Taint[], tolerations: readonly Toleration[]): TolerationResult {
  const untolerated = taints.filter((taint) => !tolerations.some((toleration) => toleratesTaint(toleration, taint)));
  if (untolerated.length === 0) return { ok: true };
  return { ok: false, untolerated, reason: `did not tolerate taint${untolerated.length > 1 ? 's' : ''} ${untolerated.map(formatTaint).join(', ')}` };
}
