// The solver's output. Field names and order follow the `autonode plan` JSON contract
// (ARCHITECTURE.md); `requirements` is extra and only used to create the NodeClaim CR.
import type { Taint } from '../scheduling/taints';
import type { NodeSelectorRequirementOutput } from '../scheduling/requirement';

export interface PlannedNodeClaim {
  name: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  /** USD/hour of the chosen (cheapest available) offering. */
  price: number;
  /** Cheapest first, at most `maxInstanceTypes`. */
  instanceTypeOptions: string[];
  labels: Record<string, string>;
  taints: Taint[];
  /** Of the chosen type, before DaemonSet pods (which are counted but not listed). */
  allocatable: Record<string, string>;
  pods: string[];
  requirements: NodeSelectorRequirementOutput[];
}

export interface PlacementOnExisting {
  name: string;
  pods: string[];
}

export interface UnschedulablePod {
  pod: string;
  reason: string;
}

export interface Plan {
  nodeClaims: PlannedNodeClaim[];
  existingNodes: PlacementOnExisting[];
  inFlightNodeClaims: PlacementOnExisting[];
  unschedulable: UnschedulablePod[];
  totalPrice: number;
}
