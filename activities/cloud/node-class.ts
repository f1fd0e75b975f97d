/**
 * Resolves an EC2NodeClass's selector terms against EC2 into the subnets, security groups
 * and AMIs a launch may use, plus condition-style results for its status. A condition's
 * message names each term that matched nothing, so the admin knows which selector to fix.
 */
import { DescribeImagesCommand, DescribeSecurityGroupsCommand, DescribeSubnetsCommand, type Filter } from '@aws-sdk/client-ec2';
import { DescribeImagesOutputSchema, DescribeSecurityGroupsOutputSchema, DescribeSubnetsOutputSchema } from './ec2-schemas';
import { type NodeClassInput } from './node-class-input';
import { amiQuery, describeTerm, isEmptyTerm, securityGroupFilters, subnetFilters } from './selectors';
import { call, type Ec2Context } from './context';

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
export interface ResolvedAmi {
  id: string;
  name: string;
  architecture: string;
  creationDate: string;
  deprecated: boolean;
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

interface TermOutcome<T> {
  found: T[];
  /** messages about terms that matched nothing or are unusable */
  problems: string[];
}

async function resolveTerms<Term extends object, T extends { id: string }>(
  terms: readonly Term[],
  fieldName: string,
  lookup: (term: Term) => Promise<T[]>,
  unsupported: (term: Term) => string | undefined = () => undefined,
): Promise<TermOutcome<T>> {
  const byId = new Map<string, T>();
  const problems: string[] = [];
  if (terms.length === 0) problems.push(`${fieldName} is empty`);
  for (const [index, term] of terms.entries()) {
    const why = isEmptyTerm(Object.values(term)) ? 'is empty' : unsupported(term);
    if (why !== undefined) {
      problems.push(`${fieldName}[${index}] ${describeTerm(term)} ${why}`);
      continue;
    }
    const found = await lookup(term);
    if (found.length === 0) problems.push(`${fieldName}[${index}] ${describeTerm(term)} matched nothing`);
    for (const item of found) byId.set(item.id, item);
  }
  return { found: [...byId.values()].sort((a, b) => a.id.localeCompare(b.id)), problems };
}

function condition(type: NodeClassConditionType, outcome: TermOutcome<unknown>, kind: string): NodeClassCondition {
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

async function describeImages(ctx: Ec2Context, query: { filters: Filter[]; owners?: string[] }, now: Date): Promise<ResolvedAmi[]> {
  const out = DescribeImagesOutputSchema.parse(
    await call(ctx, 'DescribeImages', () =>
      ctx.ec2.send(new DescribeImagesCommand({ Filters: query.filters, ...(query.owners ? { Owners: query.owners } : {}) })),
    ),
  );
  return (out.Images ?? []).map((i) => ({
    id: i.ImageId,
    name: i.Name ?? '',
    architecture: i.Architecture ?? 'x86_64',
    creationDate: i.CreationDate ?? '',
    deprecated: i.DeprecationTime !== undefined && Date.parse(i.DeprecationTime) <= now.getTime(),
  }));
}

/** Karpenter's order (amifamily/ami.go): non-deprecated first, newest first, then id. */
export function sortAmis(amis: readonly ResolvedAmi[]): ResolvedAmi[] {
  return [...amis].sort(
    (a, b) => Number(a.deprecated) - Number(b.deprecated) || b.creationDate.localeCompare(a.creationDate) || a.id.localeCompare(b.id),
  );
}

/** The AMI to launch for an architecture (EC2 naming: x86_64, arm64). */
export function pickAmi(amis: readonly ResolvedAmi[], architecture: string): ResolvedAmi | undefined {
  return sortAmis(amis).find((a) => a.architecture === architecture);
}

/**
 * Only `Custom` is rendered: HyperShift nodes bootstrap from the userData the enablement
 * workflow reconciles, passed through untouched. Merging with AL2/AL2023/Bottlerocket
 * bootstrap scripts is not implemented, and pretending would boot nodes that never join.
 */
export function renderUserData(spec: NodeClassInput['spec']): { userData: string } | { problem: string } {
  if (spec.amiFamily === 'Custom') return { userData: spec.userData ?? '' };
  return { problem: `amiFamily ${spec.amiFamily ?? '(unset)'} is not supported: autonode launches amiFamily Custom, whose userData is passed through` };
}

export async function resolveNodeClass(ctx: Ec2Context, nodeClass: NodeClassInput): Promise<NodeClassResolution> {
  const { spec } = nodeClass;
  const subnets = await resolveTerms(spec.subnetSelectorTerms, 'subnetSelectorTerms', (t) => describeSubnets(ctx, subnetFilters(t)));
  const securityGroups = await resolveTerms(spec.securityGroupSelectorTerms, 'securityGroupSelectorTerms', (t) =>
    describeSecurityGroups(ctx, securityGroupFilters(t)),
  );
  const now = ctx.clock.now();
  const amis = await resolveTerms(
    spec.amiSelectorTerms,
    'amiSelectorTerms',
    (t) => describeImages(ctx, amiQuery(t), now),
    (t) => (t.alias !== undefined ? 'uses alias, which is not supported yet' : t.ssmParameter !== undefined ? 'uses ssmParameter, which is not supported yet' : undefined),
  );
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
