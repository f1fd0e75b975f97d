/**
 * Capacity and allocatable of a simulated node, from the bundled instance-type catalog
 * (the same numbers the packing core plans with), so a node registers with what its type
 * really offers. Types the catalog lacks get a small fixed shape rather than an error:
 * moto accepts any type name.
 */
import { catalogInstanceTypes, type InstanceType } from '../../core/instancetypes';
import { type NodeResources, type SimulatedInstance } from './node-object';

export type NodeShape = Pick<SimulatedInstance, 'capacity' | 'allocatable' | 'arch'>;

const fallback: NodeShape = {
  capacity: { cpu: '2', memory: '8Gi', pods: '110', 'ephemeral-storage': '20Gi' },
  allocatable: { cpu: '1930m', memory: '7Gi', pods: '110', 'ephemeral-storage': '18Gi' },
  arch: 'amd64',
};

export function catalogNodeShapes(region: string, now: () => number = Date.now): (instanceType: string) => NodeShape {
  const result = catalogInstanceTypes({ region, amiFamily: 'AL2023', now: now() });
  const byName = new Map<string, InstanceType>(result.ok ? result.instanceTypes.map((t) => [t.name, t]) : []);
  return (instanceType) => {
    const type = byName.get(instanceType);
    if (!type) return fallback;
    return {
      capacity: withDefaults(type.capacity, fallback.capacity),
      allocatable: withDefaults(type.allocatable, fallback.allocatable ?? fallback.capacity),
      arch: type.labels['kubernetes.io/arch'] === 'arm64' ? 'arm64' : 'amd64',
    };
  };
}

function withDefaults(list: Readonly<Record<string, string>>, defaults: NodeResources): NodeResources {
  return { ...list, cpu: list.cpu ?? defaults.cpu, memory: list.memory ?? defaults.memory, pods: list.pods ?? defaults.pods, 'ephemeral-storage': list['ephemeral-storage'] ?? defaults['ephemeral-storage'] };
}
