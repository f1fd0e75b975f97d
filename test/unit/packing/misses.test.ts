// "Cannot schedule" names the constraint and the closest miss (STYLE.md §10; issue 12's
// FailedScheduling): the instance type that comes nearest, and exactly what it lacks.
import { solve, type Plan } from '../../../core/packing';
import * as misses from '../../../core/packing/misses';
import { MAX_REASON_LENGTH, perPool } from '../../../core/packing/misses';
import { aNodePool, anInput, anInstanceType, aPod, allTypes, type PodOptions } from './builders';

function reasonFor(plan: Plan, pod: string): string {
  const entry = plan.unschedulable.find((u) => u.pod === `default/${pod}`);
  if (entry === undefined) throw new Error(`${pod} was scheduled`);
  return entry.reason;
}

const reasonOf = (options: PodOptions, nodePools = [aNodePool()]): string => reasonFor(solve(anInput({ pods: [aPod({ name: 'p', ...options })], nodePools })), 'p');
const affinity = (...terms: { key: string; operator: 'In'; values: string[] }[]): PodOptions => ({ requiredNodeAffinity: [terms] });

describe('the closest miss when no instance type matches the requirements', () => {
  // The default pool offers every catalog type on-demand in us-east-1a/b/c; m6g.large (arm64) is the cheapest.
  it.each([
    [
      'a zone no offering is in (no subnet there)',
      { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1z' } },
      'closest: m6g.large matches every requirement but topology.kubernetes.io/zone In [us-east-1z] (offered in us-east-1a, us-east-1b, us-east-1c)',
    ],
    [
      'a capacity type the pool does not offer',
      { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } },
      'closest: m6g.large matches every requirement but karpenter.sh/capacity-type In [spot] (offered as on-demand)',
    ],
    [
      'two label requirements no single type meets: the cheapest type failing one',
      affinity({ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['r5'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }),
      'closest: m6g.large matches every requirement but karpenter.k8s.aws/instance-family In [r5] (it has karpenter.k8s.aws/instance-family=m6g)',
    ],
    [
      'a type that fails two: both named',
      affinity({ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['r5'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1z'] }),
      'closest: m6g.large misses 2 requirements: karpenter.k8s.aws/instance-family In [r5] (it has karpenter.k8s.aws/instance-family=m6g); topology.kubernetes.io/zone In [us-east-1z] (offered in us-east-1a, us-east-1b, us-east-1c)',
    ],
  ] as [string, PodOptions, string][])('%s', (_name, options, closest) => {
    const reason = reasonOf(options);
    expect(reason).toContain('NodePool default: no instance type with an available offering matches');
    expect(reason).toContain(closest);
  });

  it('prefers the type that misses fewer requirements over a cheaper one that misses more', () => {
    // m6g.large (arm64, the cheaper) is offered in us-east-1a only, r5.large (amd64) in us-east-1c only
    const pool = aNodePool({ instanceTypes: [anInstanceType('m6g.large', { spot: false, zones: ['us-east-1a'] }), anInstanceType('r5.large', { spot: false, zones: ['us-east-1c'] })] });
    const reason = reasonOf(affinity({ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1c'] }), [pool]);
    // one miss each: the cheaper is named
    expect(reason).toContain('closest: m6g.large matches every requirement but topology.kubernetes.io/zone In [us-east-1c] (offered in us-east-1a)');
    const onlyR5 = reasonOf(affinity({ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }, { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['r5'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1c'] }), [pool]);
    // r5.large fails one (arch), m6g.large two (family, zone)
    expect(onlyR5).toContain('closest: r5.large matches every requirement but kubernetes.io/arch In [arm64] (it has kubernetes.io/arch=amd64)');
  });

  it('names a zone and capacity type each offered, but never together', () => {
    const split = anInstanceType('m5.large', { zones: ['us-east-1a', 'us-east-1b'], unavailable: [{ zone: 'us-east-1a', capacityType: 'spot' }, { zone: 'us-east-1b', capacityType: 'on-demand' }] });
    const reason = reasonOf({ nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b', 'karpenter.sh/capacity-type': 'on-demand' } }, [aNodePool({ instanceTypes: [split] })]);
    expect(reason).toContain('closest: m5.large matches every requirement but topology.kubernetes.io/zone In [us-east-1b] with karpenter.sh/capacity-type In [on-demand] (offered as on-demand in us-east-1a, spot in us-east-1b)');
  });

  it('says when the pool itself leaves no type with an available offering', () => {
    const pool = aNodePool({ requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1z'] }] });
    expect(reasonOf({}, [pool])).toContain("NodePool default: no instance type with an available offering matches the pool requirements; closest: the NodePool's own requirements leave no instance type with an available offering");
  });

  it('gives each pool tried its own reason, heaviest first', () => {
    const arm = aNodePool({ name: 'arm', weight: 50, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] });
    const tainted = aNodePool({ name: 'gpu', weight: 20, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] });
    const reason = reasonOf({ nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1z' } }, [aNodePool(), arm, tainted]);
    const parts = reason.slice(reason.indexOf('): ') + 3).split(/; (?=NodePool )/);
    expect(parts.map((p) => p.slice(0, p.indexOf(':')))).toEqual(['NodePool arm', 'NodePool gpu', 'NodePool default']);
    expect(parts[0]).toContain('closest: m6g.large matches every requirement but topology.kubernetes.io/zone In [us-east-1z]');
    expect(parts[1]).toContain('did not tolerate taint nvidia.com/gpu=true:NoSchedule');
    expect(parts[2]).toContain('closest: m6g.large matches every requirement but topology.kubernetes.io/zone In [us-east-1z]');
  });

  it('stays within an Event message however many pools were tried, and counts the ones left out', () => {
    const many = Array.from({ length: 40 }, (_, i) => aNodePool({ name: `pool-${String(i).padStart(2, '0')}-${'x'.repeat(40)}`, weight: 40 - i }));
    const reason = reasonOf({ nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1z' } }, many);
    expect(reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    expect(reason).toContain(`NodePool pool-00-${'x'.repeat(40)}: no instance type`);
    expect(reason).toMatch(/; and [0-9]+ more NodePools$/);
    const shown = (reason.match(/NodePool pool-/g) ?? []).length;
    expect(Number(/and ([0-9]+) more NodePools$/.exec(reason)?.[1])).toBe(40 - shown);
  });
});

describe('perPool', () => {
  const header = 'no NodePool can launch a node for it (requests cpu 1): ';
  it('lists every pool when they fit', () => {
    expect(perPool(header, ['NodePool a: x', 'NodePool b: y'])).toBe(`${header}NodePool a: x; NodePool b: y`);
  });

  it('cuts a long part to its share so later pools are still named', () => {
    const text = perPool(header, [`NodePool a: ${'a'.repeat(2000)}`, 'NodePool b: short'], 600);
    expect(text.length).toBeLessThanOrEqual(600);
    expect(text).toContain('…; NodePool b: short');
  });

  it('keeps short parts whole and gives the long one the room they leave', () => {
    const long = `NodePool a: ${'a'.repeat(2000)}`;
    const shorts = ['NodePool b: did not tolerate taint x=y:NoSchedule', 'NodePool c: did not tolerate taint x=y:NoSchedule', 'NodePool d: did not tolerate taint x=y:NoSchedule'];
    const text = perPool(header, [long, ...shorts]);
    expect(text.length).toBe(MAX_REASON_LENGTH);
    expect(text).toContain(`…; ${shorts.join('; ')}`);
    // everything not taken by the header and the short parts went to the long one
    expect(text.indexOf('…')).toBe(MAX_REASON_LENGTH - shorts.join('; ').length - 3);
  });

  it('never exceeds its bound, whatever it is given', () => {
    for (const count of [1, 2, 5, 50]) {
      for (const size of [10, 300, 5000]) {
        const text = perPool(header, Array.from({ length: count }, (_, i) => `NodePool p${i}: ${'r'.repeat(size)}`));
        expect(text.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
        expect(text.startsWith(`${header}NodePool p0: `)).toBe(true);
      }
    }
  });
});

describe('reasons cost nothing for pods that are placed', () => {
  afterEach(() => jest.restoreAllMocks());

  it('words the closest miss only for a pod that ends up unschedulable', () => {
    const closest = jest.spyOn(misses, 'closestTypeMiss');
    const arm = aNodePool({ name: 'arm', weight: 50, instanceTypes: [anInstanceType('m6g.large', { spot: false })] });
    const everything = aNodePool({ instanceTypes: allTypes({ spot: false }) });
    // misses the heavier pool (no amd64 there), lands in the other
    const placed = solve(anInput({ pods: [aPod({ name: 'p', nodeSelector: { 'kubernetes.io/arch': 'amd64' } })], nodePools: [arm, everything] }));
    expect(placed.unschedulable).toEqual([]);
    expect(closest).not.toHaveBeenCalled();

    const stuck = solve(anInput({ pods: [aPod({ name: 'p', nodeSelector: { 'kubernetes.io/arch': 's390x' } })], nodePools: [arm] }));
    expect(reasonFor(stuck, 'p')).toContain('closest: m6g.large matches every requirement but kubernetes.io/arch In [s390x] (it has kubernetes.io/arch=arm64)');
    expect(closest).toHaveBeenCalledTimes(1);
  });

  it('words a resource miss only for a pod that ends up unschedulable', () => {
    const resource = jest.spyOn(misses, 'resourceMiss');
    const small = aNodePool({ name: 'small', weight: 50, instanceTypes: [anInstanceType('m5.large', { spot: false })] });
    const placed = solve(anInput({ pods: [aPod({ name: 'p', cpu: '6' })], nodePools: [small, aNodePool()] }));
    expect(placed.unschedulable).toEqual([]);
    expect(resource).not.toHaveBeenCalled();
    const stuck = solve(anInput({ pods: [aPod({ name: 'p', cpu: '6' })], nodePools: [small] }));
    expect(reasonFor(stuck, 'p')).toContain('the largest compatible type (m5.large) allows 1930m');
    expect(resource).toHaveBeenCalledTimes(1);
  });
});
