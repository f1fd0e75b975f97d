// Seeded benchmark inputs. Every generator documents its distribution, catalog, kubelet
// profile and pools, so the numbers `npm run bench` prints can be reproduced exactly.
import { catalogInstanceTypes } from '../../core/instancetypes';
import { packingInputSchema, type InstanceTypeInput, type PackingInput, type PendingPod } from '../../core/packing';
import { mulberry32 } from '../unit/packing/random-inputs';

const now = Date.parse('2026-08-01T00:00:00Z');

function pod(namespace: string, name: string, cpu: string, memory: string, extra: Partial<PendingPod> = {}): PendingPod {
  return {
    namespace, name, labels: {}, requests: { cpu, memory }, nodeSelector: {}, requiredNodeAffinity: [], preferredNodeAffinity: [], tolerations: [],
    topologySpread: [], podAffinity: { required: [], preferred: [] }, podAntiAffinity: { required: [], preferred: [] }, hostPorts: [], ...extra,
  };
}

let awsTypes: InstanceTypeInput[] | undefined;
/** The bundled us-east-1 catalog, AL2023 kubelet defaults (Karpenter's overhead model), spot estimated at 40%. */
export function awsCatalog(): InstanceTypeInput[] {
  if (awsTypes === undefined) {
    const result = catalogInstanceTypes({ region: 'us-east-1', amiFamily: 'AL2023', now });
    if (!result.ok) throw new Error(result.reason);
    awsTypes = result.instanceTypes.map((t) => ({ name: t.name, labels: { ...t.labels }, capacity: { ...t.capacity }, allocatable: { ...t.allocatable }, offerings: t.offerings.map((o) => ({ ...o })) }));
  }
  return awsTypes;
}

function lognormal(random: () => number, mu: number, sigma: number): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

/**
 * Karpenter's balanced-consolidation generator (performance.md §1.3), seed 7: cpu ~
 * lognormal(0, 1) rounded to 0.5, clipped [0.25, 16]; memory ~ lognormal(1.5, 1.2) GiB
 * rounded, clipped [1, 120]. Pods come in deployments of 10 identical replicas. One pool,
 * amd64 + arm64, spot and on-demand, the full bundled catalog.
 */
export function awsRealistic(n: number, seed = 7): PackingInput {
  const random = mulberry32(seed);
  const pods: PendingPod[] = [];
  for (let d = 0; pods.length < n; d++) {
    const cpu = Math.min(16, Math.max(0.25, Math.round(lognormal(random, 0, 1) * 2) / 2));
    const mem = Math.min(120, Math.max(1, Math.round(lognormal(random, 1.5, 1.2))));
    for (let r = 0; r < 10 && pods.length < n; r++) pods.push(pod('default', `d${d}-${r}`, `${cpu * 1000}m`, `${mem}Gi`, { labels: { app: `d${d}` } }));
  }
  return packingInputSchema.parse({ pods, now, nodePools: [{ name: 'default', instanceTypes: awsCatalog() }] });
}

/**
 * 2,000 pods (by default) on the AWS catalog, aws-realistic deployments of 10 whose
 * replicas take turns: zone spread (maxSkew 1), hostname anti-affinity, hostname spread
 * (maxSkew 2), each selecting the deployment's `app` label.
 */
export function topologyHeavy(n = 2000): PackingInput {
  const base = awsRealistic(n, 11);
  const pods = base.pods.map((p, i) => {
    const app = p.labels.app ?? 'x';
    const selector = { matchLabels: { app } };
    switch (i % 3) {
      case 0: return { ...p, topologySpread: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: selector }] };
      case 1: return { ...p, podAntiAffinity: { required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: selector }], preferred: [] } };
      default: return { ...p, topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: selector }] };
    }
  });
  return { ...base, pods };
}

/**
 * 3,000 pods, five pools: a heavy on-demand pool limited to 200 cpu, a spot pool, an
 * arm64 pool, a tainted GPU-free "batch" pool (weight 50) and a memory-optimised pool
 * restricted to r-family; 20% of pods tolerate and select batch, 20% require arm64.
 */
export function manyPools(): PackingInput {
  const base = awsRealistic(3000, 13);
  const types = awsCatalog();
  const pods = base.pods.map((p, i) => {
    if (i % 5 === 0) return { ...p, tolerations: [{ key: 'batch', operator: 'Exists' as const }], nodeSelector: { team: 'batch' } };
    if (i % 5 === 1) return { ...p, nodeSelector: { 'kubernetes.io/arch': 'arm64' } };
    return p;
  });
  return packingInputSchema.parse({
    pods, now,
    nodePools: [
      { name: 'od', weight: 80, limits: { cpu: '200' }, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], instanceTypes: types },
      { name: 'spot', weight: 40, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }], instanceTypes: types },
      { name: 'arm', weight: 10, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], instanceTypes: types },
      { name: 'batch', weight: 50, labels: { team: 'batch' }, taints: [{ key: 'batch', effect: 'NoSchedule' }], instanceTypes: types },
      { name: 'memory', weight: 5, requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['r'] }], instanceTypes: types },
    ],
  });
}

/** 300 existing m5.2xlarge-sized nodes at random fill, then 5,000 pending aws-realistic pods. */
export function existingNodes(): PackingInput {
  const random = mulberry32(17);
  const base = awsRealistic(5000, 19);
  const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const nodes = Array.from({ length: 300 }, (_, i) => {
    const used = Math.floor(random() * 6);
    return {
      name: `node-${String(i).padStart(3, '0')}`,
      labels: { 'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/zone': zones[i % 3] ?? 'us-east-1a', 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'm5.2xlarge' },
      taints: [], allocatable: { cpu: '7910m', memory: '29317Mi', pods: '58' },
      pods: Array.from({ length: used }, (_, j) => ({ namespace: 'default', name: `running-${i}-${j}`, labels: {}, requests: { cpu: '1', memory: '4Gi' }, hostPorts: [], antiAffinity: [] })),
    };
  });
  return { ...base, existingNodes: nodes };
}
