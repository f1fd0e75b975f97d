// Capacity and allocatable for an instance type under a node model (kubelet.ts).
import type { InstanceTypeInfo } from './ec2-schemas';
import { karpenterNodeResources } from './karpenter-overhead';
import type { NodeModel } from './kubelet';
import { openshiftNodeResources } from './openshift';
import type { NodeResourcesOptions, NodeResourcesResult } from './overhead';

export function nodeResources(info: InstanceTypeInfo, model: NodeModel, options: NodeResourcesOptions): NodeResourcesResult {
  switch (model.kind) {
    case 'karpenter': return karpenterNodeResources(info, model.amiFamily, options);
    case 'openshift': return openshiftNodeResources(info, model.profile, options);
    default: {
      const unexpected: never = model;
      throw new Error(`unexpected node model ${JSON.stringify(unexpected)}`);
    }
  }
}
