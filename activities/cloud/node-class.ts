/**
 * Resolves an EC2NodeClass's selector terms against EC2 into the subnets, security groups
 * and AMIs a launch may use, plus condition-style results for its status. A condition's
 * message names each term that matched nothing, so the admin knows which selector to fix.
 */
import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand, type Filter } from '@aws-sdk/client-ec2';
import { DescribeSecurityGroupsOutputSchema, DescribeSubnetsOutputSchema } from './ec2-schemas';
import { type NodeClassInput } from './node-class-input';
import { securityGroupFilters, subnetFilters } from './selectors';
import { call, type Ec2Context } from './context';
import { describeImages, sortAmis, type ResolvedAmi } from './amis';
import { DEFAULT_SSM_PATH_PREFIX } from './ami-alias';
import { effectiveAmiFamily, resolveAmiTerms, type AmiAliasOptions } from './ami-terms';
import { type SsmParameterLookup } from './ssm';
import { resolveTerms, type TermOutcome } from './terms';

export { pickAmi, sortAmis, type ResolvedAmi } from './amis';

export interface ResolvedSubnet {
  id: string;
  zone: string;
  zoneId?: string;
  availableIpCount: number;
}
export interface ResolvedSecurityGroup {
  id: string;
  name: string;
}

export type NodeClassConditionType = 'SubnetsReady' | 'SecurityGroupsReady' | 'AMIsReady' | 'ValidationSucceeded' | 'Ready';
export interface NodeClassCondition {
  type: NodeClassConditionType;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface NodeClassResolution {
  subnets: ResolvedSubnet[];
  securityGroups: ResolvedSecurityGroup[];
  /** non-deprecated first, newest first: the first per architecture is the one to launch */
  amis: ResolvedAmi[];
  /** what goes into the launch template; undefined unless the family is supported */
  userData?: string;
  conditions: NodeClassCondition[];
  ready: boolean;
}

function condition(type: NodeClassConditionType, outcome: TermOutcome<unknown>, kind: string): NodeClassCondition {
  if (outcome.invalid) {
    return { type, status: 'False', reason: 'InvalidSelectorTerms', message: `invalid selector terms: ${outcome.problems.join('; ')}` };
  }
  if (outcome.found.length === 0) {
    return { type, status: 'False', reason: `${kind}NotFound`, message: `no ${kind.toLowerCase()} resolved: ${outcome.problems.join('; ')}` };
  }
  // Ready even if some terms matched nothing (terms are ORed), but say so.
  return { type, status: 'True', reason: `${kind}Resolved`, message: outcome.problems.join('; ') };
}

async function describeSubnets(ctx: Ec2Context, filters: Filter[]): Promise<ResolvedSubnet[]> {
  const out = DescribeSubnetsOutputSchema.parse(await call(ctx, 'DescribeSubnets', () => ctx.ec2.send(new DescribeSubnetsCommand({ Filters: filters }))));
  return (out.Subnets ?? []).map((s) => ({
    id: s.SubnetId,
    zone: s.AvailabilityZone,
    ...(s.AvailabilityZoneId ? { zoneId: s.AvailabilityZoneId } : {}),
    availableIpCount: s.AvailableIpAddressCount ?? 0,
  }));
}

async function describeSecurityGroups(ctx: Ec2Context, filters: Filter[]): Promise<ResolvedSecurityGroup[]> {
  const out = DescribeSecurityGroupsOutputSchema.parse(
    await call(ctx, 'DescribeSecurityGroups', () => ctx.ec2.send(new DescribeSecurityGroupsCommand({ Filters: filters }))),
  );
  return (out.SecurityGroups ?? []).map((g) => ({ id: g.GroupId, name: g.GroupName }));
}

/**
 * Only `Custom` is rendered: HyperShift nodes bootstrap from the userData the enablement
 * workflow reconciles, passed through untouched. Merging with AL2/AL2023/Bottlerocket
 * bootstrap scripts is not implemented, and pretending would boot nodes that never join.
 */
export function renderUserData(spec: NodeClassInput['spec']): { userData: string } | { problem: string } {
  const family = effectiveAmiFamily(spec);
  if (family === 'Custom') return { userData: spec.userData ?? '' };
  if (spec.amiFamily === undefined && family !== undefined) {
    return {
      problem: `amiFamily ${family} (implied by the alias) is not supported: autonode launches amiFamily Custom, whose userData is passed through; set amiFamily: Custom to use the alias's AMIs`,
    };
  }
  return { problem: `amiFamily ${family ?? '(unset)'} is not supported: autonode launches amiFamily Custom, whose userData is passed through` };
}

/** What AMI resolution needs beyond EC2; all optional, so a provider without SSM still resolves id/name/tags terms. */
export interface AmiResolutionOptions {
  /** SSM reads for alias and ssmParameter terms (ssm.ts) */
  ssmParameter?: SsmParameterLookup;
  /** prefix of the alias parameter paths; defaults to `/aws/service` */
  ssmPathPrefix?: string;
  /** the cluster's Kubernetes minor version, e.g. `1.31`, which alias paths contain */
  kubernetesVersion?: string;
}

export async function resolveNodeClass(ctx: Ec2Context, nodeClass: NodeClassInput, options: AmiResolutionOptions = {}): Promise<NodeClassResolution> {
  const { spec } = nodeClass;
  const subnets = await resolveTerms(spec.subnetSelectorTerms, 'subnetSelectorTerms', (t) => describeSubnets(ctx, subnetFilters(t)));
  const securityGroups = await resolveTerms(spec.securityGroupSelectorTerms, 'securityGroupSelectorTerms', (t) =>
    describeSecurityGroups(ctx, securityGroupFilters(t)),
  );
  const now = ctx.clock.now();
  const aliases: AmiAliasOptions = {
    ssmPathPrefix: options.ssmPathPrefix ?? DEFAULT_SSM_PATH_PREFIX,
    ...(options.kubernetesVersion !== undefined ? { kubernetesVersion: options.kubernetesVersion } : {}),
  };
  const amis = await resolveAmiTerms(spec, {
    describeAmis: (query) => describeImages(ctx, query, now),
    ...(options.ssmParameter ? { ssmParameter: options.ssmParameter } : {}),
    aliases,
  });
  const rendered = renderUserData(spec);
  const conditions: NodeClassCondition[] = [
    condition('SubnetsReady', subnets, 'Subnets'),
    condition('SecurityGroupsReady', securityGroups, 'SecurityGroups'),
    condition('AMIsReady', amis, 'AMIs'),
    'problem' in rendered
      ? { type: 'ValidationSucceeded', status: 'False', reason: 'UnsupportedAMIFamily', message: rendered.problem }
      : { type: 'ValidationSucceeded', status: 'True', reason: 'Valid', message: '' },
  ];
  const notReady = conditions.filter((c) => c.status === 'False');
  const ready = notReady.length === 0;
  conditions.push(
    ready
      ? { type: 'Ready', status: 'True', reason: 'Ready', message: '' }
      : { type: 'Ready', status: 'False', reason: 'NotReady', message: notReady.map((c) => `${c.type}: ${c.message}`).join('; ') },
  );
  return {
    subnets: subnets.found,
    securityGroups: securityGroups.found,
    amis: sortAmis(amis.found),
    ...('userData' in rendered ? { userData: rendered.userData } : {}),
    conditions,
    ready,
  };
}
