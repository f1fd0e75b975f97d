// Multi-node consolidation's search (plan-view.ts multiNodeSearch), shared by the packing
// activity and the disruption bench: the longest worthwhile prefix, at least 2, at most 100.
import { multiNodeSearch, type MoveSimulationResult } from '../../../activities/provisioner/plan-view';
import type { ConsolidationDecision } from '../../../core/disruption';
import type { PlannedBatch } from '../../../core/provisioning';

const planned: PlannedBatch = { batchId: 'b', pending: 0, nominated: 0, onExistingNodes: 0, unschedulable: 0, pricePerHour: 0, solveMs: 0, skipped: [], templates: [], optionLists: [], claims: [], poolStatus: [] };
const candidates = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);

/** A simulation that deletes any prefix of at most `upTo` nodes and records the sizes it was asked about. */
function simulator(upTo: number) {
  const asked: number[] = [];
  const simulate = async (prefix: readonly string[]): Promise<MoveSimulationResult> => {
    asked.push(prefix.length);
    const decision: ConsolidationDecision = prefix.length <= upTo ? { kind: 'delete', savingsPerHour: prefix.length } : { kind: 'reject', reason: `${prefix.length} is too many` };
    return { planned, decision };
  };
  return { simulate, asked };
}

it.each([
  [60, 37, 37],
  [60, 60, 60],
  [60, 2, 2],
  // Karpenter considers at most 100 candidates
  [150, 1000, 100],
  [150, 64, 64],
])('of %i candidates, a command for up to %i of them is found at its longest: %i', async (n, upTo, found) => {
  const { simulate, asked } = simulator(upTo);
  const search = await multiNodeSearch(candidates(n), simulate);
  expect(search.candidates).toEqual(candidates(found));
  expect(search.best?.decision).toEqual({ kind: 'delete', savingsPerHour: found });
  expect(search.simulations).toBe(asked.length);
  // every prefix tried is reported, in the order simulated, with its verdict
  expect(search.tried.map((t) => t.size)).toEqual(asked);
  expect(search.tried.map((t) => t.verdict)).toEqual(asked.map((size) => (size <= upTo ? 'delete' : `${size} is too many`)));
  // a binary search: about log2 of the range, every size within [2, min(n, 100)]
  expect(asked.length).toBeLessThanOrEqual(Math.ceil(Math.log2(Math.min(n, 100))) + 1);
  expect(Math.min(...asked)).toBeGreaterThanOrEqual(2);
  expect(Math.max(...asked)).toBeLessThanOrEqual(Math.min(n, 100));
});

it('finds nothing when every size is rejected, and says why the last one was', async () => {
  const { simulate, asked } = simulator(1);
  const search = await multiNodeSearch(candidates(20), simulate);
  expect(search.candidates).toEqual([]);
  expect(search.best).toBeUndefined();
  expect(search.reason).toBe('2 is too many');
  expect(asked[asked.length - 1]).toBe(2);
});

it('does not simulate fewer than two candidates', async () => {
  const { simulate, asked } = simulator(10);
  const search = await multiNodeSearch(candidates(1), simulate);
  expect(asked).toEqual([]);
  expect(search).toEqual({ simulations: 0, tried: [], candidates: [], reason: 'fewer than 2 candidates' });
});
