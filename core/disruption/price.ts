// Karpenter's price rules for a consolidation that replaces nodes (karpenter.md §1.5,
// "Consolidation core"; disruption/consolidation.go computeConsolidation). Pure.

import { type CapacityType } from '../instancetypes/instancetype';

export type { CapacityType };

/** Karpenter's MinInstanceTypesForSpotToSpotConsolidation: fewer cheaper spot options would churn. */
export const MIN_SPOT_TO_SPOT_OPTIONS = 15;

export interface PricedOffering {
  capacityType: CapacityType;
  zone: string;
  price: number;
  available: boolean;
}

export interface ReplacementOption {
  instanceType: string;
  offerings: readonly PricedOffering[];
}

export interface ReplacedNode {
  price: number;
  capacityType: CapacityType;
}

export type ReplaceDecision =
  | {
      kind: 'replace';
      /** cheapest first */
      options: ReplacementOption[];
      capacityTypes: CapacityType[];
      /** the candidates' price less the cheapest option's: what the move saves at best, $/h */
      savingsPerHour: number;
    }
  | { kind: 'reject'; reason: string };

/** The most a launch of this option could cost: the dearest available offering of an allowed capacity type. */
export function worstLaunchPrice(option: ReplacementOption, capacityTypes: readonly CapacityType[]): number | undefined {
  const prices = option.offerings.filter((o) => o.available && capacityTypes.includes(o.capacityType)).map((o) => o.price);
  return prices.length === 0 ? undefined : Math.max(...prices);
}

/** The least a launch of this option could cost: its cheapest available offering of an allowed capacity type (Infinity when none). */
export function cheapestPrice(option: ReplacementOption, capacityTypes: readonly CapacityType[]): number {
  const prices = option.offerings.filter((o) => o.available && capacityTypes.includes(o.capacityType)).map((o) => o.price);
  return prices.length === 0 ? Infinity : Math.min(...prices);
}

/** Options whose worst launch price is strictly below `below`, cheapest first. */
function cheaperOptions(options: readonly ReplacementOption[], capacityTypes: readonly CapacityType[], below: number): ReplacementOption[] {
  return options
    .filter((o) => {
      const worst = worstLaunchPrice(o, capacityTypes);
      return worst !== undefined && worst < below;
    })
    .sort((a, b) => cheapestPrice(a, capacityTypes) - cheapestPrice(b, capacityTypes) || a.instanceType.localeCompare(b.instanceType));
}

const dollars = (n: number) => `$${n.toFixed(4)}/h`;

/**
 * Whether `candidates` may be replaced by one node of `options` (the instance types that
 * can hold their pods), and on which capacity types:
 * - only options whose worst launch price is strictly below the candidates' total;
 * - on-demand candidates with a replacement that may be spot or on-demand: forced to spot,
 *   so an insufficient-capacity error fails the launch instead of buying dearer on-demand;
 * - spot candidates replaced by spot: only with `spotToSpot` on, with at least 15 cheaper
 *   options, truncated to the 15 cheapest (anti-churn).
 */
export function replaceDecision(
  candidates: readonly ReplacedNode[],
  options: readonly ReplacementOption[],
  allowed: readonly CapacityType[],
  settings: { spotToSpot: boolean; minValues?: number } = { spotToSpot: false },
): ReplaceDecision {
  const total = candidates.reduce((sum, c) => sum + c.price, 0);
  const cheaper = cheaperOptions(options, allowed, total);
  if (cheaper.length === 0) return { kind: 'reject', reason: `no replacement is cheaper than the ${dollars(total)} the node(s) cost` };
  const allSpot = candidates.every((c) => c.capacityType === 'spot');
  if (allSpot && allowed.includes('spot')) {
    if (!settings.spotToSpot) return { kind: 'reject', reason: 'replacing spot capacity with spot needs spot-to-spot consolidation turned on' };
    const spot = cheaperOptions(options, ['spot'], total);
    const need = Math.max(MIN_SPOT_TO_SPOT_OPTIONS, settings.minValues ?? 0);
    if (spot.length < MIN_SPOT_TO_SPOT_OPTIONS) return { kind: 'reject', reason: `only ${spot.length} cheaper spot option(s); spot-to-spot needs at least ${MIN_SPOT_TO_SPOT_OPTIONS}` };
    const kept = spot.slice(0, need);
    return { kind: 'replace', options: kept, capacityTypes: ['spot'], savingsPerHour: total - cheapestPrice(kept[0]!, ['spot']) };
  }
  const capacityTypes: CapacityType[] = allowed.includes('spot') && allowed.includes('on-demand') ? ['spot'] : [...allowed];
  // priced on every allowed type (as Karpenter filters), then launched only where the forced type is offered
  const kept = cheaper.filter((o) => worstLaunchPrice(o, capacityTypes) !== undefined);
  if (kept.length === 0) return { kind: 'reject', reason: `no ${capacityTypes.join('/')} replacement is cheaper than ${dollars(total)}` };
  return { kind: 'replace', options: kept, capacityTypes, savingsPerHour: total - cheapestPrice(kept[0]!, capacityTypes) };
}
