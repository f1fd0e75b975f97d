// The bench's Karpenter input (test/bench/karpenter-exact.ts) against the facts of
// Karpenter v1.15.0's makeDiversePods and fake.InstanceTypes it claims to port: structure
// exactly, distributions within sampling error. A change to the generator that breaks
// "the same constants and structure" fails here, not silently in the bench's numbers.
import { exactFakeCatalog, karpenterExact } from '../../bench/karpenter-exact';

const zoneKey = 'topology.kubernetes.io/zone';
const hostKey = 'kubernetes.io/hostname';

describe("Karpenter's benchmark input (makeDiversePods on fake.InstanceTypes(400))", () => {
  const n = 20003;
  const input = karpenterExact(n);
  const fifth = Math.floor(n / 5);
  const kinds = input.pods.map((pod) => {
    if (pod.topologySpread[0]?.topologyKey === zoneKey) return 'zone-spread';
    if (pod.topologySpread[0]?.topologyKey === hostKey) return 'host-spread';
    if (pod.podAffinity.required.length > 0) return 'zone-affinity';
    if (pod.podAntiAffinity.required.length > 0) return 'host-anti';
    return 'generic';
  });

  it('has five groups of ⌊n/5⌋ in Karpenter\'s order, the remainder generic at the end', () => {
    const expected = [
      ...Array<string>(fifth).fill('generic'), ...Array<string>(fifth).fill('zone-spread'), ...Array<string>(fifth).fill('host-spread'),
      ...Array<string>(fifth).fill('zone-affinity'), ...Array<string>(fifth).fill('host-anti'), ...Array<string>(n - 5 * fifth).fill('generic'),
    ];
    expect(kinds).toEqual(expected);
  });

  it('labels generic and spread pods with my-label, affinity pods with my-affininity, anti-affinity pods with app=nginx', () => {
    input.pods.forEach((pod, i) => {
      expect(pod.namespace).toBe('default');
      expect(pod.labels['testing/cluster']).toBe('unspecified');
      switch (kinds[i]) {
        case 'generic': case 'zone-spread': case 'host-spread':
          expect(Object.keys(pod.labels).sort()).toEqual(['my-label', 'testing/cluster']);
          break;
        case 'zone-affinity':
          expect(Object.keys(pod.labels).sort()).toEqual(['my-affininity', 'testing/cluster']);
          expect(pod.podAffinity.required).toEqual([{ topologyKey: zoneKey, labelSelector: { matchLabels: { 'my-affininity': pod.labels['my-affininity'] } } }]);
          break;
        default:
          expect(pod.labels.app).toBe('nginx');
          expect(pod.podAntiAffinity.required).toEqual([{ topologyKey: hostKey, labelSelector: { matchLabels: { app: 'nginx' } } }]);
      }
    });
  });

  it('draws spread selectors independently of the pod\'s own label: about 1/7 match themselves', () => {
    const spread = input.pods.filter((pod) => pod.topologySpread.length > 0);
    expect(spread).toHaveLength(2 * fifth);
    for (const pod of spread) {
      expect(pod.topologySpread).toEqual([expect.objectContaining({ maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' })]);
    }
    const selfMatching = spread.filter((pod) => pod.topologySpread[0]?.labelSelector?.matchLabels?.['my-label'] === pod.labels['my-label']).length;
    // Binomial(8000, 1/7): mean 1143, sd 31; ±5 sd.
    expect(Math.abs(selfMatching - spread.length / 7)).toBeLessThan(5 * Math.sqrt(spread.length * (1 / 7) * (6 / 7)));
  });

  it('draws label values, cpu and memory uniformly from Karpenter\'s lists', () => {
    const tally = (values: readonly string[]): Map<string, number> => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());
    const cases: [Map<string, number>, string[]][] = [
      [tally(input.pods.map((p) => p.labels['my-label'] ?? p.labels['my-affininity'] ?? 'none').filter((v) => v !== 'none')), ['a', 'b', 'c', 'd', 'e', 'f', 'g']],
      [tally(input.pods.map((p) => p.requests.cpu ?? '')), ['100m', '250m', '500m', '1000m', '1500m']],
      [tally(input.pods.map((p) => p.requests.memory ?? '')), ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi']],
    ];
    for (const [counts, values] of cases) {
      expect([...counts.keys()].sort()).toEqual([...values].sort());
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const p = 1 / values.length;
      for (const count of counts.values()) expect(Math.abs(count - total * p)).toBeLessThan(5 * Math.sqrt(total * p * (1 - p)));
    }
  });

  it('gives every type Karpenter\'s shape, kube-reserved 100m/10Mi, five offerings at 0.1·cpu + 0.1·GB', () => {
    const catalog = exactFakeCatalog();
    expect(catalog).toHaveLength(400);
    expect(catalog[0]?.allocatable).toEqual({ cpu: '900m', memory: '2038Mi', pods: '10' });
    catalog.forEach((type, i) => {
      const cpu = i + 1;
      expect(type.capacity).toEqual({ cpu: String(cpu), memory: `${2 * cpu}Gi`, pods: String(10 * cpu) });
      expect(type.labels.integer).toBe(String(cpu));
      expect(type.labels.size).toBe(cpu > 4 ? 'large' : 'small');
      expect(type.offerings.map((o) => `${o.capacityType}/${o.zone}`)).toEqual([
        'spot/test-zone-1', 'spot/test-zone-2', 'on-demand/test-zone-1', 'on-demand/test-zone-2', 'on-demand/test-zone-3',
      ]);
      const price = 0.1 * cpu + (0.1 * 2 * cpu * 2 ** 30) / 1e9;
      for (const offering of type.offerings) expect(offering.price).toBeCloseTo(price, 5);
    });
    expect(input.nodePools).toEqual([expect.objectContaining({ name: 'default', limits: { cpu: '10000000', memory: '10000000Gi' } })]);
  });
});
