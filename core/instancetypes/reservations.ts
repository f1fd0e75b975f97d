// Helpers shared by the Karpenter and OpenShift overhead models.
import { parseQuantity, toUnits } from '../scheduling/quantity';
import type { ResourceList } from '../scheduling/resources';

export type ReservationResult =
  | { readonly ok: true; readonly resources: ResourceList }
  | { readonly ok: false; readonly reason: string };

/** systemReserved / kubeReserved maps from kubelet settings, named in any error. */
export function parseReservation(field: string, reservation: Readonly<Record<string, string>> | undefined): ReservationResult {
  const resources: Record<string, bigint> = {};
  for (const [name, text] of Object.entries(reservation ?? {})) {
    const parsed = parseQuantity(text);
    if (!parsed.ok) return { ok: false, reason: `kubelet.${field}.${name}: ${parsed.reason}` };
    resources[name] = parsed.quantity.nanos;
  }
  return { ok: true, resources };
}

export const evictionSignal = { memoryAvailable: 'memory.available', nodefsAvailable: 'nodefs.available' } as const;

export type SignalResult = { readonly ok: true; readonly nanos: bigint } | { readonly ok: false; readonly reason: string };

/**
 * An eviction threshold in nano-units: a quantity, or a percentage of capacity computed
 * as Karpenter does (types.go computeEvictionSignal: ceil(capacity / 100 × p) in float64,
 * with "100%" meaning disabled, i.e. 0).
 */
export function evictionThreshold(field: string, value: string, capacityNanos: bigint): SignalResult {
  if (value.endsWith('%')) {
    const percent = Number(value.slice(0, -1));
    if (!Number.isFinite(percent) || percent < 0 || percent > 100 || value.trim() !== value) {
      return { ok: false, reason: `kubelet.${field}: "${value}" is not a percentage between 0% and 100%` };
    }
    const effective = percent === 100 ? 0 : percent;
    const capacityUnits = Number(toUnits(capacityNanos));
    return { ok: true, nanos: BigInt(Math.ceil((capacityUnits / 100) * effective)) * 1_000_000_000n };
  }
  const parsed = parseQuantity(value);
  if (!parsed.ok) return { ok: false, reason: `kubelet.${field}: ${parsed.reason}` };
  return { ok: true, nanos: parsed.quantity.nanos };
}
