// Tiny inputs and their brute-force optimum (shared by the bound tests): every partition
// of the pods into nodes, each block on its cheapest fitting type. Exponential: ≤ 7 pods.
import type { PackingInput } from '../../../core/packing';
import { aNodePool, anInput, anInstanceType, aPod } from './builders';
import { quantityValue } from './checker';
import { mulberry32, pick } from './random-inputs';

/** 1–6 pods of mixed shapes on six on-demand m5/c5/r5 types, seeded. */
export function tinyInput(seed: number): PackingInput {
  const random = mulberry32(seed);
  const count = 1 + Math.floor(random() * 6);
  return anInput({
    pods: Array.from({ length: count }, (_, i) => aPod({ name: `p-${i}`, cpu: pick(random, ['250m', '500m', '1', '1500m', '3']), memory: pick(random, ['256Mi', '1Gi', '3Gi', '6Gi', '12Gi']) })),
    nodePools: [aNodePool({ instanceTypes: ['c5.large', 'c5.xlarge', 'm5.large', 'm5.xlarge', 'r5.large', 'm5.2xlarge'].map((n) => anInstanceType(n, { spot: false })) })],
  });
}



/**
 * Cheapest cost of any partition of the pods into nodes (each block on its cheapest fitting
 * type); with `apart`, no block holds two of those pods (by index).
 */
export function bruteForceOptimum(input: PackingInput, apart: ReadonlySet<number> = new Set()): number {
  const types = input.nodePools.flatMap((p) => p.instanceTypes);
  const need = input.pods.map((p) => ({ cpu: quantityValue(p.requests.cpu ?? '0'), memory: quantityValue(p.requests.memory ?? '0') }));
  const blockCost = (block: number[]): number => {
    const cpu = block.reduce((s, i) => s + (need[i]?.cpu ?? 0), 0);
    const memory = block.reduce((s, i) => s + (need[i]?.memory ?? 0), 0);
    let best = Infinity;
    for (const t of types) {
      if (cpu <= quantityValue(t.allocatable.cpu ?? '0') && memory <= quantityValue(t.allocatable.memory ?? '0') && block.length <= Number(t.allocatable.pods)) {
        best = Math.min(best, ...t.offerings.filter((o) => o.available).map((o) => o.price));
      }
    }
    return best;
  };
  let best = Infinity;
  const blocks: number[][] = [];
  const visit = (i: number, cost: number): void => {
    if (cost >= best) return;
    if (i === need.length) {
      best = cost;
      return;
    }
    for (const block of blocks) {
      if (apart.has(i) && block.some((j) => apart.has(j))) continue;
      const before = blockCost(block);
      block.push(i);
      visit(i + 1, cost - before + blockCost(block));
      block.pop();
    }
    blocks.push([i]);
    visit(i + 1, cost + blockCost([i]));
    blocks.pop();
  };
  visit(0, 0);
  return best;
}

