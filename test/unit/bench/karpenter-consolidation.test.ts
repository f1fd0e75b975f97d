// The disruption bench's port of Karpenter v1.15.0's consolidation: the search bounds,
// the price filters and a run to a fixed point, as Karpenter's source has them.
import type { PoolType } from '../../../core/packing/pools';
import { LabelKey } from '../../../core/scheduling/labels';
import { inValues } from '../../../core/scheduling/requirement';
import { benchCatalog, costOf, podKey, podsByNode, priceOf, type ClusterCommand, type SimCluster, type SimNode, type SimPod } from '../../bench/disruption-cluster';
import { filterOutSameInstanceType, firstNConsolidationOption, karpenterFixedPoint, worstLaunchPrice } from '../../bench/karpenter-consolidation';

const aType = (name: string, offerings: { zone?: string; capacityType: string; price: number }[]): PoolType => ({
  index: 0, name, labels: {}, capacity: new Float64Array(0), allocatable: new Float64Array(0), daemonOverhead: new Float64Array(0), daemonPorts: [],
  offerings: offerings.map((o) => ({ zone: o.zone ?? 'us-east-1a', ...o })),
});
const DELETE: ClusterCommand = { remove: [], launch: [], moves: [] };

describe('firstNConsolidationOption (multinodeconsolidation.go)', () => {
  const run = (n: number, upTo: number, clock: () => number = () => 0) => {
    const asked: number[] = [];
    const result = firstNConsolidationOption(Array.from({ length: n }, (_, i) => i), (prefix) => (asked.push(prefix.length), prefix.length <= upTo ? { ...DELETE, remove: prefix.map(String) } : undefined), { limit: 100, deadline: 10, clock });
    return { ...result, asked, size: result.command?.remove.length };
  };

  it.each([
    // more than 100 candidates: max is 100 and each try takes mid+1 of them, so up to 101
    [150, 1000, 101],
    [101, 1000, 101],
    [100, 1000, 100],
    [50, 1000, 50],
    [50, 17, 17],
    [2, 1000, 2],
  ])('of %i candidates, a command for up to %i of them: %i', (n, upTo, size) => {
    const { size: found, asked } = run(n, upTo);
    expect(found).toBe(size);
    expect(Math.min(...asked)).toBeGreaterThanOrEqual(2);
  });

  it('no command when every prefix fails, none tried under two candidates', () => {
    expect(run(40, 1).command).toBeUndefined();
    expect(run(1, 1000).asked).toEqual([]);
  });

  it('past its time limit returns the last command found', () => {
    let now = 0;
    // the clock moves 2 units per reading, a 10-unit limit: the third simulation ends past it
    // and counts as cancelled, so the second one's 76 nodes (mid 75, candidates[0:76]) stand
    const { size, timedOut, simulations } = run(100, 1000, () => (now += 2));
    expect(timedOut).toBe(true);
    expect(simulations).toBe(3);
    expect(size).toBe(76);
  });
});

describe('worstLaunchPrice (Offerings.WorstLaunchPrice)', () => {
  const type = aType('m5.large', [
    { zone: 'us-east-1a', capacityType: 'spot', price: 0.03 },
    { zone: 'us-east-1b', capacityType: 'spot', price: 0.05 },
    { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 },
  ]);
  it.each([
    ['any capacity type: the dearest spot offering (spot is tried before on-demand)', undefined, undefined, 0.05],
    ['on-demand only', undefined, ['on-demand'], 0.096],
    ['one zone', ['us-east-1a'], undefined, 0.03],
    ['nothing compatible', ['us-east-1c'], undefined, Number.MAX_VALUE],
  ])('%s', (_what, zones, capacityTypes, price) => {
    expect(worstLaunchPrice(type, zones ? inValues(LabelKey.zone, zones) : undefined, capacityTypes ? inValues(LabelKey.capacityType, capacityTypes) : undefined)).toBe(price);
  });
});

describe('filterOutSameInstanceType', () => {
  const od = (price: number) => [{ capacityType: 'on-demand', price }];
  const node = (instanceType: string, price: number) => ({ node: { name: instanceType, nodeClaim: instanceType, instanceType, zone: 'us-east-1a', capacityType: 'on-demand' as const, price }, price });
  const candidates = [node('m5.2xlarge', 0.384), node('m5.2xlarge', 0.384), node('m5.large', 0.096)];
  it('drops a replacement that could be a type being removed, unless cheaper than that candidate', () => {
    // [2xlarge, 2xlarge, large] → one of large, xlarge, 2xlarge: deleting the two 2xlarge would do
    expect(filterOutSameInstanceType([aType('m5.large', od(0.096)), aType('m5.xlarge', od(0.192)), aType('m5.2xlarge', od(0.384))], {}, candidates)).toEqual([]);
    // … one of c5.large, large, xlarge: only the type cheaper than the large stays
    expect(filterOutSameInstanceType([aType('c5.large', od(0.085)), aType('m5.large', od(0.096)), aType('m5.xlarge', od(0.192))], {}, candidates).map((t) => t.name)).toEqual(['c5.large']);
  });
  it('keeps every option when none is a candidate type', () => {
    expect(filterOutSameInstanceType([aType('r5.large', od(0.126)), aType('r5.xlarge', od(0.252))], {}, candidates).map((t) => t.name)).toEqual(['r5.large', 'r5.xlarge']);
  });
});

describe('karpenterFixedPoint', () => {
  const pool = { types: ['m5.large', 'm5.xlarge', 'm5.2xlarge'], zones: ['us-east-1a'], budget: '100%' };
  const catalog = benchCatalog(pool);
  const node = (name: string, instanceType: string): [string, SimNode] => [name, { name, nodeClaim: name, instanceType, zone: 'us-east-1a', capacityType: 'on-demand', price: priceOf(catalog, instanceType, 'us-east-1a', 'on-demand') }];
  const pod = (name: string, on: string, cpu: number): [string, SimPod & { node: string }] => {
    const p = { namespace: 'app', name, app: 'web', cpu, memory: 512, node: on };
    return [podKey(p), p];
  };

  it('empties the empty node, then packs three underused nodes into one, and stops', () => {
    const start: SimCluster = {
      pool, catalog, launched: 0,
      nodes: new Map([node('a', 'm5.xlarge'), node('b', 'm5.xlarge'), node('c', 'm5.2xlarge'), node('empty', 'm5.large')]),
      pods: new Map([pod('p1', 'a', 500), pod('p2', 'b', 500), pod('p3', 'c', 500)]),
    };
    const run = karpenterFixedPoint(start, { multiTimeoutMs: 60_000, singleTimeoutMs: 180_000, maxRounds: 20 });
    expect(run.converged).toBe(true);
    expect(run.commands[0]).toMatchObject({ kind: 'emptiness', nodes: 1 });
    expect(run.commands.slice(1).map((c) => c.kind)).toContain('multi');
    // 1.5 cpu fits an m5.large, the cheapest the pool has
    expect(costOf(run.cluster)).toBeCloseTo(0.096, 6);
    expect([...podsByNode(run.cluster).values()].flat().sort()).toEqual(['app/p1', 'app/p2', 'app/p3']);
  });
});
