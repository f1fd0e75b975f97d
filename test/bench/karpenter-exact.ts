// Karpenter's scheduling benchmark input as v1.15.0 builds it (performance.md §1.1,
// "Details that change the result"): `makeDiversePods(n)` on `fake.InstanceTypes(400)`.
// The distributions and structure are Karpenter's; the random stream is mulberry32, not
// Go's math/rand, so individual pods differ while every draw has the same law.
//
// What distinguishes it from `karpenterMix` (generators.ts): generic pods carry a random
// `my-label` value and are therefore counted by the spread selectors; a spread pod's own
// value and its selector's are drawn independently (about 1/7 match themselves); the
// zone-affinity pods use their own key (`my-affininity`, Karpenter's spelling); and the
// fake types reserve 100m cpu and 10Mi memory.
import { packingInputSchema, type InstanceTypeInput, type PackingInput, type PendingPod } from '../../core/packing';
import { mulberry32, pick } from '../unit/packing/random-inputs';

const now = Date.parse('2026-08-01T00:00:00Z');
const labelValues = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const cpus = ['100m', '250m', '500m', '1000m', '1500m'];
const memories = ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi'];

/**
 * fake.InstanceTypes(400) of v1.15.0: type i has cpu i+1, memory 2(i+1) GiB, pods 10(i+1);
 * kube-reserved 100m cpu and 10Mi memory; spot in zones 1–2 and on-demand in zones 1–3,
 * each priced 0.1·cpu + 0.1·memory_GB.
 */
export function exactFakeCatalog(count = 400): InstanceTypeInput[] {
  return Array.from({ length: count }, (_, i) => {
    const cpu = i + 1;
    const memGi = 2 * (i + 1);
    const price = Math.round((0.1 * cpu + 0.1 * memGi * 1.073741824) * 1e6) / 1e6;
    return {
      name: `fake-it-${i}`,
      labels: { 'node.kubernetes.io/instance-type': `fake-it-${i}`, 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
      capacity: { cpu: String(cpu), memory: `${memGi}Gi`, pods: String(10 * (i + 1)) },
      allocatable: { cpu: `${cpu * 1000 - 100}m`, memory: `${memGi * 1024 - 10}Mi`, pods: String(10 * (i + 1)) },
      offerings: [
        ...['test-zone-1', 'test-zone-2'].map((zone) => ({ zone, capacityType: 'spot', price, available: true })),
        ...['test-zone-1', 'test-zone-2', 'test-zone-3'].map((zone) => ({ zone, capacityType: 'on-demand', price, available: true })),
      ],
    };
  });
}

function pod(name: string, extra: Partial<PendingPod>, random: () => number): PendingPod {
  // Per pod Karpenter draws the label value(s) first (done by the caller), then cpu, then memory.
  const cpu = pick(random, cpus);
  const memory = pick(random, memories);
  return {
    namespace: 'default', name, labels: {}, requests: { cpu, memory }, nodeSelector: {}, requiredNodeAffinity: [], preferredNodeAffinity: [], tolerations: [],
    topologySpread: [], podAffinity: { required: [], preferred: [] }, podAntiAffinity: { required: [], preferred: [] }, hostPorts: [], ...extra,
  };
}

/**
 * makeDiversePods(n) in Karpenter's order: n/5 generic, n/5 zone spread, n/5 hostname
 * spread (maxSkew 1, DoNotSchedule), n/5 zone self-affinity, n/5 hostname anti-affinity
 * (all `app=nginx`), the remainder generic. One NodePool with limits cpu and memory
 * 10,000,000(Gi).
 */
export function karpenterExact(n: number, seed = 42): PackingInput {
  const random = mulberry32(seed);
  const fifth = Math.floor(n / 5);
  const pods: PendingPod[] = [];
  const label = (): Record<string, string> => ({ 'my-label': pick(random, labelValues) });
  const generic = (count: number): void => {
    for (let i = 0; i < count; i++) {
      const labels = label();
      pods.push(pod(`generic-${pods.length}`, { labels }, random));
    }
  };
  const spread = (topologyKey: string, kind: string): void => {
    for (let i = 0; i < fifth; i++) {
      const labels = label();
      const selector = { matchLabels: label() };
      pods.push(pod(`${kind}-${pods.length}`, { labels, topologySpread: [{ topologyKey, maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector }] }, random));
    }
  };
  generic(fifth);
  spread('topology.kubernetes.io/zone', 'zone-spread');
  spread('kubernetes.io/hostname', 'host-spread');
  for (let i = 0; i < fifth; i++) {
    const labels = { 'my-affininity': pick(random, labelValues) };
    pods.push(pod(`zone-affinity-${pods.length}`, { labels, podAffinity: { required: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: labels } }], preferred: [] } }, random));
  }
  const nginx = { app: 'nginx' };
  for (let i = 0; i < fifth; i++) {
    pods.push(pod(`host-anti-${pods.length}`, { labels: nginx, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: nginx } }], preferred: [] } }, random));
  }
  generic(n - pods.length);
  return packingInputSchema.parse({
    pods, now,
    nodePools: [{ name: 'default', limits: { cpu: '10000000', memory: '10000000Gi' }, instanceTypes: exactFakeCatalog() }],
  });
}
