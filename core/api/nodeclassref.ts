import { z } from 'zod';
import { AWS_GROUP, EC2_NODE_CLASS_KIND } from './groups';

// The NodePool/NodeClaim reference to its node class. v1 names it by {group, kind,
// name}; v1beta1 by {apiVersion, kind, name} with only `name` required (seed 002 gives
// just a name). The served v1 schema defaults group and kind to this provider's
// EC2NodeClass — what upstream's conversion webhook injected — so a v1beta1 object read
// back through v1 is complete.

const name = z.string().min(1, { error: 'must name an EC2NodeClass' });

export const nodeClassRefSchema = z.strictObject({ group: z.string().min(1), kind: z.string().min(1), name });
export type NodeClassRef = z.output<typeof nodeClassRefSchema>;

export const nodeClassRefV1WireSchema = z
  .strictObject({
    group: z.string().min(1).default(AWS_GROUP),
    kind: z.string().min(1).default(EC2_NODE_CLASS_KIND),
    name,
    /** v1beta1's field, kept so that stored v1beta1 objects survive pruning. */
    apiVersion: z.string().optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      { message: 'nodeClassRef.group is immutable', rule: 'self.group == oldSelf.group' },
      { message: 'nodeClassRef.kind is immutable', rule: 'self.kind == oldSelf.kind' },
    ],
  });

export const nodeClassRefV1Beta1WireSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  name,
  /** v1's field, kept so that v1 objects survive a write through v1beta1. */
  group: z.string().optional(),
});
