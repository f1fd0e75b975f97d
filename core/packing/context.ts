// The state of one solve, shared by the placement steps. Everything here is created and
// mutated inside a single `solve` call; nothing outlives it.
import { LabelKey } from '../scheduling/labels';
import { matches } from '../scheduling/requirement';
import type { PodClass } from './classes';
import type { Dims } from './dims';
import type { Pool } from './pools';
import type { ClassTopology, Topology } from './topology';

export interface SolveContext {
  readonly dims: Dims;
  readonly pools: readonly Pool[];
  readonly topology: Topology;
  /** Fluid-LP dual price per unit of each resource. */
  readonly prices: Float64Array;
  /** Zones of existing nodes, with their labels, for spread universes. */
  readonly existingZones: readonly { zone: string; labels: Readonly<Record<string, string>> }[];
  readonly classTopology: Map<number, ClassTopology>;
  /** The same, by PodClass.topologyKey. */
  readonly topologyByKey: Map<string, ClassTopology>;
  readonly universes: Map<string, readonly string[]>;
}

export function topologyOf(context: SolveContext, podClass: PodClass): ClassTopology {
  let topology = context.classTopology.get(podClass.id);
  if (topology === undefined) {
    // Classes that differ only in requests or node rules have the same topology (at 1k pods
    // of Karpenter's benchmark input: 673 classes, 113 topologies).
    topology = context.topologyByKey.get(podClass.topologyKey);
    if (topology === undefined) {
      topology = context.topology.classTopology({ namespace: podClass.namespace, labels: podClass.labels }, podClass.spec);
      context.topologyByKey.set(podClass.topologyKey, topology);
    }
    context.classTopology.set(podClass.id, topology);
  }
  return topology;
}

/**
 * The domains of `key` a pod of this class could land in: from the offerings of every
 * type it fits in any pool, and from existing nodes whose labels satisfy it
 * (nodeAffinityPolicy: Honor, the Kubernetes default).
 */
export function universeOf(context: SolveContext, podClass: PodClass, key: string): readonly string[] {
  // (a function of the class's shape: feasibility, zone and capacity-type requirements)
  const cacheKey = `${key}|${podClass.shapeId}`;
  const cached = context.universes.get(cacheKey);
  if (cached !== undefined) return cached;
  const domains = new Set<string>();
  const offeringKey = key === LabelKey.zone ? 'zone' : key === LabelKey.capacityType ? 'capacityType' : undefined;
  if (offeringKey !== undefined) {
    const requirement = key === LabelKey.zone ? podClass.zone : podClass.capacityType;
    context.pools.forEach((pool) => {
      const feasibility = podClass.feasibility[pool.order];
      if (feasibility === undefined || !feasibility.ok) return;
      for (const index of feasibility.types) {
        for (const offering of pool.types[index]?.offerings ?? []) {
          const value = offering[offeringKey];
          if (requirement === undefined || matches(requirement, value)) domains.add(value);
        }
      }
    });
    if (key === LabelKey.zone) {
      for (const node of context.existingZones) {
        if (Object.values(podClass.requirements).every((r) => matches(r, node.labels[r.key]))) domains.add(node.zone);
      }
    }
  }
  const universe = [...domains].sort();
  context.universes.set(cacheKey, universe);
  return universe;
}
