// Test builders: readable defaults, overridable per test (STYLE.md §16).
import {
  packingInputSchema, type DaemonSetInput, type ExistingNodeInput, type InFlightClaimInput, type InstanceTypeInput,
  type NodePoolInput, type PackingInput, type PackingInputDraft, type PendingPod,
} from '../../../core/packing';

type Shape = { cpu: number; memoryGi: number; price: number; arch?: string; gpu?: number; pods?: number };

/** A small catalog with real us-east-1 on-demand prices (2024) and round shapes. */
export const catalog: Readonly<Record<string, Shape>> = {
  'c5.large': { cpu: 2, memoryGi: 4, price: 0.085 },
  'c5.xlarge': { cpu: 4, memoryGi: 8, price: 0.17 },
  'c5.2xlarge': { cpu: 8, memoryGi: 16, price: 0.34 },
  'm5.large': { cpu: 2, memoryGi: 8, price: 0.096 },
  'm5.xlarge': { cpu: 4, memoryGi: 16, price: 0.192 },
  'm5.2xlarge': { cpu: 8, memoryGi: 32, price: 0.384 },
  'm5.4xlarge': { cpu: 16, memoryGi: 64, price: 0.768 },
  'r5.large': { cpu: 2, memoryGi: 16, price: 0.126 },
  'r5.xlarge': { cpu: 4, memoryGi: 32, price: 0.252 },
  'm6g.large': { cpu: 2, memoryGi: 8, price: 0.077, arch: 'arm64' },
  'm6g.xlarge': { cpu: 4, memoryGi: 16, price: 0.154, arch: 'arm64' },
  'g4dn.xlarge': { cpu: 4, memoryGi: 16, price: 0.526, gpu: 1 },
};

export const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

export interface TypeOptions {
  spot?: number | false;
  zones?: string[];
  unavailable?: { zone: string; capacityType: string }[];
  overheadCpuMilli?: number;
  overheadMemoryMi?: number;
  pods?: number;
}

/** A type from `catalog`: allocatable = capacity − 70m cpu − 500Mi; spot at 40% unless told. */
export function anInstanceType(name: string, options: TypeOptions = {}): InstanceTypeInput {
  const shape = catalog[name];
  if (shape === undefined) throw new Error(`no catalog entry ${name}`);
  const [family = '', size = ''] = name.split('.');
  const cpuOverhead = options.overheadCpuMilli ?? 70;
  const memOverhead = options.overheadMemoryMi ?? 500;
  const pods = String(options.pods ?? shape.pods ?? 29);
  const extra: Record<string, string> = shape.gpu === undefined ? {} : { 'nvidia.com/gpu': String(shape.gpu) };
  const spot = options.spot === undefined ? 0.4 : options.spot;
  const offerings = (options.zones ?? zones).flatMap((zone) => [
    { zone, capacityType: 'on-demand', price: shape.price, available: true },
    ...(spot === false ? [] : [{ zone, capacityType: 'spot', price: Math.round(shape.price * spot * 1e6) / 1e6, available: true }]),
  ]).map((o) => ({ ...o, available: !(options.unavailable ?? []).some((u) => u.zone === o.zone && u.capacityType === o.capacityType) }));
  return {
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': shape.arch ?? 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.k8s.aws/instance-family': family,
      'karpenter.k8s.aws/instance-size': size,
      'karpenter.k8s.aws/instance-category': family.replace(/[0-9].*$/, ''),
      'karpenter.k8s.aws/instance-cpu': String(shape.cpu),
    },
    capacity: { cpu: String(shape.cpu), memory: `${shape.memoryGi}Gi`, pods, ...extra },
    allocatable: { cpu: `${shape.cpu * 1000 - cpuOverhead}m`, memory: `${shape.memoryGi * 1024 - memOverhead}Mi`, pods, ...extra },
    offerings,
  };
}

export function allTypes(options: TypeOptions = {}): InstanceTypeInput[] {
  return Object.keys(catalog).map((name) => anInstanceType(name, options));
}

export function aNodePool(overrides: Partial<NodePoolInput> = {}): NodePoolInput {
  return {
    name: 'default', weight: 0, requirements: [], labels: {}, taints: [], startupTaints: [], limits: {}, usage: {},
    instanceTypes: allTypes({ spot: false }),
    ...overrides,
  };
}

export interface PodOptions extends Partial<Omit<PendingPod, 'requests'>> {
  cpu?: string;
  memory?: string;
  requests?: Record<string, string>;
}

export function aPod(options: PodOptions = {}): PendingPod {
  const { cpu = '500m', memory = '512Mi', requests, ...rest } = options;
  return {
    namespace: 'default', name: 'pod-0', labels: {}, nodeSelector: {}, requiredNodeAffinity: [], preferredNodeAffinity: [],
    tolerations: [], topologySpread: [], podAffinity: { required: [], preferred: [] }, podAntiAffinity: { required: [], preferred: [] },
    hostPorts: [],
    requests: requests ?? { cpu, memory },
    ...rest,
  };
}

/** `count` pods named `${prefix}-0…`, same shape. */
export function pods(count: number, prefix: string, options: PodOptions = {}): PendingPod[] {
  return Array.from({ length: count }, (_, i) => aPod({ ...options, name: `${prefix}-${i}` }));
}

export function aDaemonSet(overrides: Partial<DaemonSetInput> = {}): DaemonSetInput {
  return { namespace: 'kube-system', name: 'agent', requests: { cpu: '100m', memory: '128Mi' }, nodeSelector: {}, requiredNodeAffinity: [], tolerations: [], hostPorts: [], ...overrides };
}

export function anExistingNode(overrides: Partial<ExistingNodeInput> = {}): ExistingNodeInput {
  return {
    name: 'ip-10-0-0-1.ec2.internal',
    labels: { 'kubernetes.io/hostname': overrides.name ?? 'ip-10-0-0-1.ec2.internal', 'topology.kubernetes.io/zone': 'us-east-1a', 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'm5.large' },
    taints: [], allocatable: { cpu: '1930m', memory: '7692Mi', pods: '29' }, pods: [],
    ...overrides,
  };
}

export function anInFlightClaim(overrides: Partial<InFlightClaimInput> = {}): InFlightClaimInput {
  return {
    name: 'default-x7k2p', nodePool: 'default',
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }],
    labels: {}, taints: [], pods: [],
    ...overrides,
  };
}

export function anInput(draft: Partial<PackingInputDraft> = {}): PackingInput {
  return packingInputSchema.parse({ pods: [], nodePools: [aNodePool()], now: 0, ...draft });
}
