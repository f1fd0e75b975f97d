/**
 * The part of Karpenter's EC2NodeClass (karpenter.k8s.aws/v1) that resolution reads, with
 * Karpenter's field names, so core/api's EC2NodeClass type can be passed straight in.
 */
import { z } from 'zod';

const TagsSchema = z.record(z.string(), z.string());

export const SubnetSelectorTermSchema = z.object({ tags: TagsSchema.optional(), id: z.string().optional() });
export const SecurityGroupSelectorTermSchema = z.object({
  tags: TagsSchema.optional(),
  id: z.string().optional(),
  name: z.string().optional(),
});
export const AmiSelectorTermSchema = z.object({
  tags: TagsSchema.optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  alias: z.string().optional(),
  ssmParameter: z.string().optional(),
});

export const NodeClassInputSchema = z.object({
  name: z.string().min(1),
  spec: z.object({
    subnetSelectorTerms: z.array(SubnetSelectorTermSchema),
    securityGroupSelectorTerms: z.array(SecurityGroupSelectorTermSchema),
    amiSelectorTerms: z.array(AmiSelectorTermSchema),
    amiFamily: z.string().optional(),
    userData: z.string().optional(),
    tags: TagsSchema.optional(),
    instanceProfile: z.string().optional(),
  }),
});
export type NodeClassInput = z.infer<typeof NodeClassInputSchema>;
export type SubnetSelectorTerm = z.infer<typeof SubnetSelectorTermSchema>;
export type SecurityGroupSelectorTerm = z.infer<typeof SecurityGroupSelectorTermSchema>;
export type AmiSelectorTerm = z.infer<typeof AmiSelectorTermSchema>;
