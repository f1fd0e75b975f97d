/**
 * Selector terms → EC2 Describe* filters, pure. Terms are ORed (one call each), the fields
 * of a term ANDed (filters of one call); a tag value of "*" means "has the key".
 */
import { type Filter } from '@aws-sdk/client-ec2';
import { type AmiSelectorTerm, type SecurityGroupSelectorTerm, type SubnetSelectorTerm } from './node-class-input';

export function tagFilters(tags: Record<string, string> | undefined): Filter[] {
  return Object.entries(tags ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => (value === '*' ? { Name: 'tag-key', Values: [key] } : { Name: `tag:${key}`, Values: [value] }));
}

export function subnetFilters(term: SubnetSelectorTerm): Filter[] {
  return [...(term.id ? [{ Name: 'subnet-id', Values: [term.id] }] : []), ...tagFilters(term.tags)];
}

export function securityGroupFilters(term: SecurityGroupSelectorTerm): Filter[] {
  return [
    ...(term.id ? [{ Name: 'group-id', Values: [term.id] }] : []),
    ...(term.name ? [{ Name: 'group-name', Values: [term.name] }] : []),
    ...tagFilters(term.tags),
  ];
}

/** Karpenter's default owners when a term names neither an id nor an owner. */
export const DEFAULT_AMI_OWNERS = ['self', 'amazon'];

export function amiQuery(term: AmiSelectorTerm): { filters: Filter[]; owners?: string[] } {
  const filters: Filter[] = [
    ...(term.id ? [{ Name: 'image-id', Values: [term.id] }] : []),
    ...(term.name ? [{ Name: 'name', Values: [term.name] }] : []),
    ...tagFilters(term.tags),
    { Name: 'state', Values: ['available'] },
  ];
  if (term.owner) return { filters, owners: term.owner.split(',').map((o) => o.trim()) };
  return term.id ? { filters } : { filters, owners: DEFAULT_AMI_OWNERS };
}

/** The AMIs an alias or ssmParameter resolved to, by id (EC2 ignores owners for ids). */
export function amiIdsQuery(ids: readonly string[]): { filters: Filter[] } {
  return { filters: [{ Name: 'image-id', Values: [...ids] }, { Name: 'state', Values: ['available'] }] };
}

/** How a term reads in a condition message: `{"tags":{"karpenter.sh/discovery":"c1"}}`. */
export function describeTerm(term: object): string {
  return JSON.stringify(term);
}

/** A term with no field set, or only empty ones, would select everything: refuse it. */
export function isEmptyTerm(fieldValues: readonly unknown[]): boolean {
  return fieldValues.every((v) => v === undefined || (typeof v === 'object' && v !== null && Object.keys(v).length === 0));
}
