/**
 * The cloud-provider PORT the workflows' activities use, for one cluster. The EC2
 * implementation below is one adapter; tests may pass a fake implementing the same
 * interface. Every method is idempotent by a business key (NodeClaim name, provider id,
 * template content hash) and fails only with the typed errors of errors.ts.
 */
import { type CloudInstance } from './domain';
import { type NodeClassInput } from './node-class-input';
import { type NodeClassResolution } from './node-class';
import { type LaunchRequest, type LaunchResult } from './launch';
import { type TerminateOutcome } from './instances';
import { type LaunchTemplateContent, type LaunchTemplateRef } from './launch-template';
import { type GcResult, type NodeClaimExists } from './gc';
import { type InstanceType } from '../../core/instancetypes';
import { type InstanceTypeQuery } from './instance-types';

export interface CloudProvider {
  /** Subnets, security groups and AMIs from the selector terms, with status conditions. */
  resolveNodeClass(nodeClass: NodeClassInput): Promise<NodeClassResolution>;
  /** At most one instance per NodeClaim; InsufficientCapacityError names exhausted offerings. */
  launch(request: LaunchRequest): Promise<LaunchResult>;
  /** NotFoundError when absent, shutting-down/terminated, or not this cluster's node. */
  get(providerId: string): Promise<CloudInstance>;
  findByNodeClaim(nodeClaimName: string): Promise<CloudInstance | undefined>;
  /** Live instances the provisioner launched for this cluster. */
  list(): Promise<CloudInstance[]>;
  /** Idempotent: an instance already gone is an outcome, not an error. */
  terminate(providerId: string): Promise<TerminateOutcome>;
  ensureLaunchTemplate(content: LaunchTemplateContent): Promise<LaunchTemplateRef>;
  deleteStaleLaunchTemplates(options: { nodeClassName: string; keep: readonly string[] }): Promise<string[]>;
  /** `minAgeMs` (default GC_MIN_AGE_MS, 30 s) spares instances whose claim may not have recorded them yet */
  collectLeakedInstances(nodeClaimExists: NodeClaimExists, options?: { minAgeMs?: number }): Promise<GcResult>;
  /**
   * The region's launchable instance types with priced offerings, for one node class's
   * AMI family and kubelet settings; cached (see instance-types.ts). Throws
   * InstanceTypesUnavailableError only when EC2 cannot be read and nothing is cached.
   */
  instanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]>;
}
