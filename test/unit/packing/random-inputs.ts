// Seeded random packing inputs for property tests (mulberry32, test/support/random.ts).
import type { PackingInput, PendingPod } from '../../../core/packing';
import { mulberry32 } from '../../support/random';
import { aDaemonSet, aNodePool, anExistingNode, anInput, aPod, allTypes } from './builders';

export { mulberry32 } from '../../support/random';

export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from empty list');
  return item;
}

/** Up to ~40 pods mixing plain, arm64-only, tainted-pool, zone-spread, anti-affinity and host-port pods. */
export function randomInput(seed: number): PackingInput {
  const random = mulberry32(seed);
  const pods: PendingPod[] = [];
  const count = 5 + Math.floor(random() * 35);
  for (let i = 0; i < count; i++) {
    const kind = pick(random, ['plain', 'plain', 'arm', 'gpu-pool', 'spread', 'anti', 'port', 'affinity']);
    const cpu = pick(random, ['100m', '250m', '500m', '1', '1500m', '3']);
    const memory = pick(random, ['128Mi', '512Mi', '1Gi', '3Gi', '6Gi', '13Gi']);
    const base = { name: `${kind}-${i}`, cpu, memory, labels: { app: kind } };
    switch (kind) {
      case 'arm': pods.push(aPod({ ...base, nodeSelector: { 'kubernetes.io/arch': 'arm64' } })); break;
      case 'gpu-pool': pods.push(aPod({ ...base, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }], nodeSelector: { team: 'batch' } })); break;
      case 'spread': pods.push(aPod({ ...base, topologySpread: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } }] })); break;
      case 'anti': pods.push(aPod({ ...base, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'anti' } } }], preferred: [] } })); break;
      case 'port': pods.push(aPod({ ...base, hostPorts: [{ port: 8080, protocol: 'TCP', hostIP: '' }] })); break;
      case 'affinity': pods.push(aPod({ ...base, podAffinity: { required: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: { app: 'affinity' } } }], preferred: [] } })); break;
      default: pods.push(aPod(base));
    }
  }
  const limited = random() < 0.3;
  return anInput({
    pods,
    daemonSets: random() < 0.5 ? [aDaemonSet({ requests: { cpu: pick(random, ['50m', '200m']), memory: '100Mi' } })] : [],
    existingNodes: random() < 0.5 ? [anExistingNode({ name: 'existing-a' }), anExistingNode({ name: 'existing-b', labels: { 'kubernetes.io/hostname': 'existing-b', 'topology.kubernetes.io/zone': 'us-east-1b', 'kubernetes.io/arch': 'amd64' } })] : [],
    nodePools: [
      aNodePool({ name: 'default', instanceTypes: allTypes({ unavailable: random() < 0.5 ? [{ zone: 'us-east-1a', capacityType: 'spot' }] : [] }), ...(limited ? { limits: { cpu: '24' } } : {}) }),
      aNodePool({ name: 'batch', weight: 10, labels: { team: 'batch' }, taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }], instanceTypes: allTypes({ spot: false }) }),
    ],
  });
}
