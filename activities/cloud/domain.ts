/**
 * Plain-data types of the cloud-provider port. Everything here is JSON, so it can cross
 * the activity boundary into workflow history unchanged (no Date, Map or class).
 */
import { z } from 'zod';

export const CapacityTypeSchema = z.enum(['spot', 'on-demand']);
export type CapacityType = z.infer<typeof CapacityTypeSchema>;

/** The architectures autonode launches, by their Kubernetes names (`kubernetes.io/arch`). */
export const ArchitectureSchema = z.enum(['amd64', 'arm64']);
export type Architecture = z.infer<typeof ArchitectureSchema>;

/** The AMI to launch for each architecture; an architecture without one cannot launch. */
export type ImagesByArchitecture = Partial<Record<Architecture, string>>;

/** The cluster a provider instance works for. No credentials: those come from a port. */
export const CloudClusterRefSchema = z.object({
  /** infra ID: the `kubernetes.io/cluster/<name>` tag every node carries */
  name: z.string().min(1),
  region: z.string().min(1),
  /** resolved by the credentials provider (a role ARN in production); never a secret */
  credentialsRef: z.string().optional(),
});
export type CloudClusterRef = z.infer<typeof CloudClusterRefSchema>;

/** Instance states that still count as a machine. shutting-down/terminated are gone. */
export const LIVE_INSTANCE_STATES = ['pending', 'running', 'stopping', 'stopped'] as const;
export type LiveInstanceState = (typeof LIVE_INSTANCE_STATES)[number];

export interface CloudInstance {
  providerId: string;
  instanceId: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  imageId: string;
  state: LiveInstanceState;
  subnetId?: string;
  /** the groups the instance has now (drift compares them with its node class's) */
  securityGroupIds?: string[];
  privateDnsName?: string;
  privateIpAddresses: string[];
  /** ISO-8601; a string so the value is plain JSON */
  launchTime: string;
  tags: Record<string, string>;
}

export const TagKeys = {
  nodePool: 'karpenter.sh/nodepool',
  nodeClaim: 'karpenter.sh/nodeclaim',
  nodeClass: 'karpenter.k8s.aws/ec2nodeclass',
  name: 'Name',
  cluster: (clusterName: string) => `kubernetes.io/cluster/${clusterName}`,
} as const;

/** Node-class tags may not override these: they are how we find and own our machines. */
export function isRestrictedTagKey(key: string): boolean {
  return (
    key.startsWith('kubernetes.io/cluster/') ||
    key === TagKeys.nodePool ||
    key === TagKeys.nodeClaim ||
    key === TagKeys.nodeClass ||
    key === 'eks:eks-cluster-name'
  );
}
