// Karpenter's scheduling benchmark input as v1.15.0 builds it: `makeDiversePods(n)`
// (pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go) on
// `fake.InstanceTypes(400)` (pkg/cloudprovider/fake/instancetype.go), with the NodePool of
// its `setupScheduler`. Checked line by line against the v1.15.0 module from the Go proxy
// (performance.md §1.1, "Details that change the result").
//
// Same as Karpenter's:
//  - groups in order: n/5 generic, n/5 zone spread, n/5 hostname spread, n/5 zone
//    self-affinity, n/5 hostname anti-affinity, then n − 5·⌊n/5⌋ generic;
//  - draws per pod in Karpenter's order: label value, [selector value], cpu, memory; each
//    uniform (label/selector over a–g, cpu over {100,250,500,1000,1500}m, memory over
//    {100,256,512,1024,2048,4096}Mi);
//  - generic and spread pods carry `my-label`; a spread pod's selector value is drawn
//    independently of its own label (about 1/7 match themselves); spreads are maxSkew 1,
//    DoNotSchedule; affinity pods use `my-affininity` (Karpenter's spelling) for label and
//    selector (self-affinity); anti-affinity pods all carry and select `app=nginx`;
//  - every pod carries `testing/cluster=unspecified` (test.ObjectMeta's discovery label)
//    and lives in `default`;
//  - type i: cpu i+1, memory 2(i+1)Gi, pods 10(i+1); kube-reserved 100m cpu and 10Mi
//    memory; spot in test-zone-1/2 and on-demand in test-zone-1/2/3, each priced
//    0.1·cpu + 0.1·memory_bytes/1e9; labels arch amd64, `integer` = cpu, `size` small or
//    large (large when cpu > 4 and memory > 8Gi);
//  - one NodePool, no requirements, limits cpu 10,000,000 and memory 10,000,000Gi.
// Where it differs, and why:
//  - the random stream is mulberry32 (seed 42), not Go's math/rand: individual pods differ,
//    every draw has the same law. (Karpenter's stream is package-global, so its pods for
//    size N also depend on which sizes ran before in the process; no single "the" input.)
//  - Karpenter's fake types allow os linux, windows and darwin and may carry
//    `special=optional` when large; autonode's InstanceTypeInput has one label value per
//    key, so they say linux and carry no `special`. No pod here selects either.
//  - pod names are deterministic (`<group>-<index>`), not random.
// test/bench/karpenter-side.ts exports these very pods to Karpenter's own Solve.
import { packingInputSchema, type InstanceTypeInput, type PackingInput, type PendingPod } from '../../core/packing';
import { mulberry32, pick } from '../unit/packing/random-inputs';

const now = Date.parse('2026-08-01T00:00:00Z');
const labelValues = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const cpus = ['100m', '250m', '500m', '1000m', '1500m'];
const memories = ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi'];
/** test.ObjectMeta's label on every test object (pkg/test/metadata.go). */
const discoveryLabel = { 'testing/cluster': 'unspecified' };

/** fake.InstanceTypes(count) of v1.15.0 (see the header). */
export function exactFakeCatalog(count = 400): InstanceTypeInput[] {
  return Array.from({ length: count }, (_, i) => {
    const cpu = i + 1;
    const memGi = 2 * (i + 1);
    // PriceFromResources: 0.1 per cpu + 0.1 per 1e9 bytes of memory.
    const price = Math.round((0.1 * cpu + 0.1 * memGi * 1.073741824) * 1e6) / 1e6;
    return {
      name: `fake-it-${i}`,
      labels: {
        'node.kubernetes.io/instance-type': `fake-it-${i}`, 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux',
        integer: String(cpu), size: cpu > 4 && memGi > 8 ? 'large' : 'small',
      },
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

/** makeDiversePods(n) in Karpenter's order and draws (see the header). */
export function karpenterExact(n: number, seed = 42): PackingInput {
  const random = mulberry32(seed);
  const fifth = Math.floor(n / 5);
  const pods: PendingPod[] = [];
  const value = (): string => pick(random, labelValues);
  const generic = (count: number): void => {
    for (let i = 0; i < count; i++) {
      const labels = { ...discoveryLabel, 'my-label': value() };
      pods.push(pod(`generic-${pods.length}`, { labels }, random));
    }
  };
  const spread = (topologyKey: string, kind: string): void => {
    for (let i = 0; i < fifth; i++) {
      const labels = { ...discoveryLabel, 'my-label': value() };
      const labelSelector = { matchLabels: { 'my-label': value() } };
      pods.push(pod(`${kind}-${pods.length}`, { labels, topologySpread: [{ topologyKey, maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector }] }, random));
    }
  };
  generic(fifth);
  spread('topology.kubernetes.io/zone', 'zone-spread');
  spread('kubernetes.io/hostname', 'host-spread');
  for (let i = 0; i < fifth; i++) {
    const own = { 'my-affininity': value() };
    pods.push(pod(`zone-affinity-${pods.length}`, { labels: { ...discoveryLabel, ...own }, podAffinity: { required: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: own } }], preferred: [] } }, random));
  }
  const nginx = { app: 'nginx' };
  for (let i = 0; i < fifth; i++) {
    pods.push(pod(`host-anti-${pods.length}`, { labels: { ...discoveryLabel, ...nginx }, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: nginx } }], preferred: [] } }, random));
  }
  generic(n - pods.length);
  return packingInputSchema.parse({
    pods, now,
    nodePools: [{ name: 'default', limits: { cpu: '10000000', memory: '10000000Gi' }, instanceTypes: exactFakeCatalog() }],
  });
}
