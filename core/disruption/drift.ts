import { z } from 'zod';
import { parseJsonWith } from '../json';
import { AMI_FAMILIES, type EC2NodeClass } from '../api/ec2nodeclass';
import { compatible, requirementsFromLabels, type Requirements } from '../scheduling/requirements';
import { canonicalJson, fnv1a64, NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION_ANNOTATION } from '../provisioning/nodeclaims';

// Drift (karpenter.md §1.5 "Drift method", §2.7): a claim whose NodePool template, node
// class or resolved cloud resources moved on since it launched. Pure; the activity gathers
// the facts. Karpenter's order: the pool's static fields, then its requirements, then the
// cloud provider's checks (AMI, subnet, security groups, the node class hash).

export const NODECLASS_HASH_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash';
export const NODECLASS_HASH_VERSION_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash-version';
/**
 * autonode's own version of the class hash: Karpenter's (v6) hashes with another function,
 * so a claim Karpenter stamped reads as "another version" — re-stamped, never drifted.
 */
export const NODECLASS_HASH_VERSION = 'autonode-1';

/**
 * The EC2NodeClass's static-drift hash (Karpenter's `EC2NodeClass.Hash`): the spec as the
 * provisioner reads it (v1 defaults applied, so spelling a default out is no change) less
 * what dynamic drift judges by its resolved IDs — the AMI, subnet and security-group
 * selector terms — plus the AMI family they resolve to. So userData, tags, block devices,
 * metadata options, role or instance profile, kubelet, monitoring and public-IP changes
 * drift the class's nodes (`NodeClassDrift`); a release that moves userData does too.
 */
export function nodeClassHash(nodeClass: EC2NodeClass): string {
  const { amiSelectorTerms, subnetSelectorTerms: _subnets, securityGroupSelectorTerms: _groups, amiFamily, ...rest } = nodeClass.spec;
  const alias = amiSelectorTerms.find((t) => t.alias !== undefined)?.alias;
  const aliasFamily = alias === undefined ? undefined : AMI_FAMILIES.find((f) => f.toLowerCase() === alias.split('@')[0]?.toLowerCase());
  return fnv1a64(canonicalJson({ ...rest, amiFamily: amiFamily ?? aliasFamily ?? '' })).toString();
}

/**
 * Where the instance is, as the cloud last said: its subnet and security groups, JSON
 * (`{"subnet":"subnet-1","securityGroups":["sg-1","sg-2"]}`), written on the claim by the
 * launch and by the disruption workflow's cloud pass when it moves. Subnet and security-group
 * drift are judged from it, so the 10-second disruption round reads the guest only (Karpenter
 * reads the instance from its own cache; a worker's process cache does not survive restarts).
 */
export const INSTANCE_NETWORK_ANNOTATION = 'autonode.io/instance-network';

export interface InstanceNetwork {
  subnetId?: string;
  securityGroupIds?: readonly string[];
}

/** The annotation's value; undefined when the cloud said nothing of either. */
export function instanceNetworkValue(n: InstanceNetwork): string | undefined {
  if (n.subnetId === undefined && n.securityGroupIds === undefined) return undefined;
  return JSON.stringify({ ...(n.subnetId !== undefined ? { subnet: n.subnetId } : {}), ...(n.securityGroupIds !== undefined ? { securityGroups: [...n.securityGroupIds].sort() } : {}) });
}

const InstanceNetworkSchema = z.object({ subnet: z.string().min(1).optional(), securityGroups: z.array(z.string().min(1)).optional() });

/** The annotation read back; anything else (absent, edited into nonsense) is "not known". */
export function parseInstanceNetwork(value: string | undefined): InstanceNetwork | undefined {
  const parsed = parseJsonWith(InstanceNetworkSchema, value);
  if (parsed === undefined) return undefined;
  return { ...(parsed.subnet !== undefined ? { subnetId: parsed.subnet } : {}), ...(parsed.securityGroups !== undefined ? { securityGroupIds: parsed.securityGroups } : {}) };
}

/** Reasons only the instance's own facts can tell: without them a round neither sets nor clears them. */
export const INSTANCE_DRIFT_REASONS: readonly DriftReasonCode[] = ['SubnetDrift', 'SecurityGroupDrift'];

export type DriftReasonCode = 'NodePoolDrifted' | 'RequirementsDrifted' | 'AMIDrift' | 'SubnetDrift' | 'SecurityGroupDrift' | 'NodeClassDrift';

export interface DriftFacts {
  claim: {
    annotations: Readonly<Record<string, string>>;
    labels: Readonly<Record<string, string>>;
    /** what the instance runs, when known */
    imageId?: string;
    subnetId?: string;
    securityGroupIds?: readonly string[];
  };
  pool: { hash: string; hashVersion: string; requirements: Requirements };
  /** what the claim's node class resolves to now (its status); undefined when it cannot be read */
  nodeClass?: { hash?: string; hashVersion?: string; amis: readonly string[]; subnets: readonly string[]; securityGroups: readonly string[] };
}

export interface Drift {
  reason: DriftReasonCode;
  message: string;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

/** Why this claim has drifted, or undefined when it has not (or the facts to tell are missing). */
export function driftOf(f: DriftFacts): Drift | undefined {
  const stamped = f.claim.annotations[NODEPOOL_HASH_ANNOTATION];
  // a hash of another version was computed differently: not drift (Karpenter re-stamps it)
  if (stamped !== undefined && f.claim.annotations[NODEPOOL_HASH_VERSION_ANNOTATION] === f.pool.hashVersion && stamped !== f.pool.hash) {
    return { reason: 'NodePoolDrifted', message: `the NodePool's template changed (hash ${stamped} → ${f.pool.hash})` };
  }
  const fits = compatible(requirementsFromLabels(f.claim.labels), f.pool.requirements);
  if (!fits.ok) return { reason: 'RequirementsDrifted', message: `the node no longer meets the NodePool's requirements: ${fits.reason}` };
  const nc = f.nodeClass;
  if (nc === undefined) return undefined;
  if (f.claim.imageId !== undefined && nc.amis.length > 0 && !nc.amis.includes(f.claim.imageId)) {
    return { reason: 'AMIDrift', message: `the node runs ${f.claim.imageId}; its node class now resolves to ${nc.amis.join(', ')}` };
  }
  if (f.claim.subnetId !== undefined && nc.subnets.length > 0 && !nc.subnets.includes(f.claim.subnetId)) {
    return { reason: 'SubnetDrift', message: `the node is in ${f.claim.subnetId}, no longer one of its node class's subnets` };
  }
  if (f.claim.securityGroupIds !== undefined && nc.securityGroups.length > 0 && !sameSet(f.claim.securityGroupIds, nc.securityGroups)) {
    return { reason: 'SecurityGroupDrift', message: `the node has security groups ${[...f.claim.securityGroupIds].sort().join(', ')}; its node class now has ${[...nc.securityGroups].sort().join(', ')}` };
  }
  const classHash = f.claim.annotations[NODECLASS_HASH_ANNOTATION];
  if (classHash !== undefined && nc.hash !== undefined && f.claim.annotations[NODECLASS_HASH_VERSION_ANNOTATION] === nc.hashVersion && classHash !== nc.hash) {
    return { reason: 'NodeClassDrift', message: `the EC2NodeClass changed (hash ${classHash} → ${nc.hash})` };
  }
  return undefined;
}

export { NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION_ANNOTATION };
