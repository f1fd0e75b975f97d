// A node's capacity, the overhead its kubelet holds back, and what is left for pods.
import { addResources, clampAtZero, type ResourceList } from '../scheduling/resources';
import type { KubeletSettings } from './kubelet';

export interface NodeOverhead {
  readonly kubeReserved: ResourceList;
  readonly systemReserved: ResourceList;
  readonly evictionThreshold: ResourceList;
}

export interface NodeResources {
  readonly capacity: ResourceList;
  readonly overhead: NodeOverhead;
  readonly allocatable: ResourceList;
}

export type NodeResourcesResult =
  | { readonly ok: true; readonly resources: NodeResources }
  | { readonly ok: false; readonly reason: string };

export interface NodeResourcesOptions {
  readonly kubelet: KubeletSettings;
  /** Root volume size, e.g. "20Gi" (see defaultRootVolumeSize). */
  readonly rootVolumeSize: string;
  readonly instanceStorePolicy?: 'RAID0' | undefined;
  readonly vmMemoryOverheadPercent?: number | undefined;
}

/**
 * allocatable = capacity − kubeReserved − systemReserved − evictionThreshold, for the
 * resources the node has; never negative (a node whose overhead exceeds its memory has
 * nothing for pods, it does not owe anything).
 */
export function allocatableOf(capacity: ResourceList, overhead: NodeOverhead): ResourceList {
  const reserved = addResources(overhead.kubeReserved, overhead.systemReserved, overhead.evictionThreshold);
  const allocatable: Record<string, bigint> = {};
  for (const [name, amount] of Object.entries(capacity)) allocatable[name] = amount - (reserved[name] ?? 0n);
  return clampAtZero(allocatable);
}

