/**
 * The Node a kubelet registers for an EC2 instance: what the kubelet itself would send
 * (name, providerID, well-known labels, registerWithTaints, addresses, capacity), plus
 * kwok's annotation so kwok plays the node's heartbeat and keeps it Ready.
 */
import { type V1Node } from '@kubernetes/client-node';

export interface NodeResources {
  cpu: string;
  memory: string;
  pods: string;
  'ephemeral-storage': string;
  [extended: string]: string;
}

export interface SimulatedInstance {
  instanceId: string;
  zone: string;
  privateDnsName: string;
  privateIp: string;
  instanceType: string;
  capacity: NodeResources;
  /** what pods can use; the capacity when absent */
  allocatable?: NodeResources;
  arch?: 'amd64' | 'arm64';
  /** extra labels, e.g. karpenter.sh/nodepool; NodeRestriction forbids most kubernetes.io/ ones */
  labels?: Record<string, string>;
}

export const UNREGISTERED_TAINT = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' } as const;
export const KWOK_ANNOTATION = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;

export function providerIdOf(instance: Pick<SimulatedInstance, 'zone' | 'instanceId'>): string {
  return `aws:///${instance.zone}/${instance.instanceId}`;
}

export function nodeStatusOf(instance: SimulatedInstance): NonNullable<V1Node['status']> {
  return {
    capacity: { ...instance.capacity },
    allocatable: { ...(instance.allocatable ?? instance.capacity) },
    addresses: [
      { type: 'InternalIP', address: instance.privateIp },
      { type: 'InternalDNS', address: instance.privateDnsName },
      { type: 'Hostname', address: instance.privateDnsName },
    ],
  };
}

export function nodeObjectOf(instance: SimulatedInstance): V1Node {
  const name = instance.privateDnsName;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...instance.labels,
        'kubernetes.io/hostname': name,
        'kubernetes.io/arch': instance.arch ?? 'amd64',
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': instance.instanceType,
        'topology.kubernetes.io/zone': instance.zone,
        'topology.kubernetes.io/region': instance.zone.replace(/[a-z]$/, ''),
      },
      annotations: { [KWOK_ANNOTATION.key]: KWOK_ANNOTATION.value },
    },
    spec: { providerID: providerIdOf(instance), taints: [{ ...UNREGISTERED_TAINT }] },
    status: nodeStatusOf(instance),
  };
}

/** Whether the stored status already carries the instance's capacity and allocatable. */
export function statusMatches(node: V1Node, instance: SimulatedInstance): boolean {
  const want = nodeStatusOf(instance);
  const same = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) =>
    JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());
  return same(node.status?.capacity, want.capacity) && same(node.status?.allocatable, want.allocatable);
}
