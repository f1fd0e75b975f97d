/**
 * Resolves `amiSelectorTerms` to AMIs: id/name/tags/owner terms through DescribeImages;
 * `ssmParameter` terms read an AMI id from SSM, then describe it like an id term; an
 * `alias` reads Karpenter's EKS-optimized AMI parameters (ami-alias.ts). Each term that
 * resolves nothing is named in a problem with the reason, so AMIsReady says what to fix.
 */
import { AMI_FAMILY_OF_ALIAS, aliasParameters, parseAmiAlias, type AmiVariant } from './ami-alias';
import { type DescribeAmis, type ResolvedAmi } from './amis';
import { type AmiSelectorTerm, type NodeClassInput } from './node-class-input';
import { amiIdsQuery, amiQuery, describeTerm } from './selectors';
import { type SsmParameterLookup } from './ssm';
import { resolveTerms, type TermLookup, type TermOutcome } from './terms';

export interface AmiAliasOptions {
  /** where Karpenter's SSM tree starts: `/aws/service` in AWS, a test's own prefix on moto */
  ssmPathPrefix: string;
  /** the cluster's Kubernetes minor version (`1.31`); every EKS AMI path contains it */
  kubernetesVersion?: string;
}

export interface AmiTermDeps {
  describeAmis: DescribeAmis;
  /** absent when the provider was built without SSM: alias and ssmParameter terms then say so */
  ssmParameter?: SsmParameterLookup;
  aliases: AmiAliasOptions;
}

type AmiSpec = Pick<NodeClassInput['spec'], 'amiSelectorTerms' | 'amiFamily'>;

const VARIANT_ORDER: readonly AmiVariant[] = ['standard', 'nvidia', 'neuron'];
const OTHER_FIELDS = ['id', 'name', 'tags', 'owner', 'ssmParameter'] as const;

/** Karpenter's pattern for an AMI id (`ami-[0-9a-z]+`): an SSM value must look like one. */
const isAmiId = (value: string): boolean => /^ami-[0-9a-z]+$/.test(value);
const quoted = (value: string): string => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);

export async function resolveAmiTerms(spec: AmiSpec, deps: AmiTermDeps): Promise<TermOutcome<ResolvedAmi>> {
  const invalid = aliasRuleViolations(spec);
  // Karpenter's admission (CEL) rejects these specs outright; resolving the other terms
  // anyway would make a spec Karpenter refuses look half-working here.
  if (invalid.length > 0) return { found: [], problems: invalid, invalid: true };
  return resolveTerms(spec.amiSelectorTerms, 'amiSelectorTerms', (term) => lookupTerm(term, deps), mergeVariants);
}

/**
 * The amiFamily a spec runs with: its own, else the one its alias implies (Karpenter's
 * EC2NodeClass.AMIFamily()). Undefined when neither says.
 */
export function effectiveAmiFamily(spec: AmiSpec): string | undefined {
  if (spec.amiFamily !== undefined) return spec.amiFamily;
  const alias = spec.amiSelectorTerms.find((t) => t.alias !== undefined)?.alias;
  const parsed = alias === undefined ? undefined : parseAmiAlias(alias);
  return parsed?.ok ? AMI_FAMILY_OF_ALIAS[parsed.alias.family] : undefined;
}

/**
 * Karpenter's CEL rules for aliases: the only term, alone in its term, well formed, and
 * amiFamily unset, the alias's own family, or Custom (the alias then only picks the AMI
 * and userData passes through untouched — ec2nodeclass.go, "may only be set to its
 * corresponding family or 'Custom'").
 */
function aliasRuleViolations(spec: AmiSpec): string[] {
  const terms = spec.amiSelectorTerms;
  const problems: string[] = [];
  for (const [index, term] of terms.entries()) {
    if (term.alias === undefined) continue;
    const label = `amiSelectorTerms[${index}] ${describeTerm(term)}`;
    if (terms.length > 1) problems.push(`${label}: an alias must be the only amiSelectorTerm, but there are ${terms.length}`);
    const others = OTHER_FIELDS.filter((field) => term[field] !== undefined);
    if (others.length > 0) problems.push(`${label}: alias cannot be combined with ${others.join(', ')} in one term`);
    const parsed = parseAmiAlias(term.alias);
    if (!parsed.ok) {
      problems.push(`${label}: ${parsed.problem}`);
      continue;
    }
    const implied = AMI_FAMILY_OF_ALIAS[parsed.alias.family];
    if (spec.amiFamily !== undefined && spec.amiFamily !== implied && spec.amiFamily !== 'Custom') {
      problems.push(`${label}: alias ${term.alias} selects ${implied} AMIs, but amiFamily is ${spec.amiFamily}: set amiFamily to ${implied} or Custom, or leave it unset`);
    }
  }
  return problems;
}

function lookupTerm(term: AmiSelectorTerm, deps: AmiTermDeps): Promise<TermLookup<ResolvedAmi>> {
  if (term.alias !== undefined) return lookupAlias(term.alias, deps);
  if (term.ssmParameter !== undefined) return lookupSsmParameter(term, term.ssmParameter, deps);
  return deps.describeAmis(amiQuery(term));
}

const NO_SSM = { unresolved: 'needs SSM Parameter Store, and this provider was built without an SSM client' };

async function lookupAlias(raw: string, deps: AmiTermDeps): Promise<TermLookup<ResolvedAmi>> {
  const parsed = parseAmiAlias(raw);
  if (!parsed.ok) return { unresolved: parsed.problem };
  if (deps.ssmParameter === undefined) return NO_SSM;
  const kubernetesVersion = deps.aliases.kubernetesVersion;
  if (kubernetesVersion === undefined) {
    return { unresolved: "needs the cluster's Kubernetes version to find the EKS AMI parameters, and this provider was not given one" };
  }
  const parameters = aliasParameters(parsed.alias, { pathPrefix: deps.aliases.ssmPathPrefix, kubernetesVersion });
  const variantsById = new Map<string, Set<AmiVariant>>();
  const notAmis: string[] = [];
  // Sequential, in table order: at most five small reads, and messages stay deterministic.
  for (const parameter of parameters) {
    const value = await deps.ssmParameter(parameter.path);
    if (value === undefined) continue; // not every variant is published for every version and region
    if (!isAmiId(value)) {
      notAmis.push(`${parameter.path} holds ${quoted(value)}`);
      continue;
    }
    const variants = variantsById.get(value) ?? new Set<AmiVariant>();
    for (const v of parameter.variants) variants.add(v);
    variantsById.set(value, variants);
  }
  if (variantsById.size === 0) {
    const notAmi = notAmis.length > 0 ? `; not an AMI id: ${notAmis.join(', ')}` : '';
    return {
      unresolved: `found no AMI: none of the ${parameters.length} SSM parameter(s) it maps to holds one (e.g. ${parameters[0]?.path ?? '?'})${notAmi}`,
    };
  }
  const ids = [...variantsById.keys()].sort();
  const images = await deps.describeAmis(amiIdsQuery(ids));
  if (images.length === 0) {
    return { unresolved: `resolved through SSM to ${ids.join(', ')}, which DescribeImages does not return (deregistered, or not shared with this account)` };
  }
  return images.map((image) => ({ ...image, variants: VARIANT_ORDER.filter((v) => variantsById.get(image.id)?.has(v)) }));
}

async function lookupSsmParameter(term: AmiSelectorTerm, name: string, deps: AmiTermDeps): Promise<TermLookup<ResolvedAmi>> {
  if (deps.ssmParameter === undefined) return NO_SSM;
  if (name.trim() === '') return { unresolved: 'names no SSM parameter' };
  if (term.id !== undefined) return { unresolved: 'sets both id and ssmParameter: use one' };
  const value = await deps.ssmParameter(name);
  if (value === undefined) return { unresolved: `names SSM parameter ${name}, which does not exist` };
  if (!isAmiId(value)) return { unresolved: `names SSM parameter ${name}, whose value ${quoted(value)} is not an AMI id` };
  // The term's other fields (name, tags, owner) still AND with the id, as in an id term.
  const { ssmParameter: _ssmParameter, ...rest } = term;
  const images = await deps.describeAmis(amiQuery({ ...rest, id: value }));
  if (images.length === 0) {
    const narrowed = Object.keys(rest).length > 0 ? " with the term's other fields" : '';
    return { unresolved: `names SSM parameter ${name} → ${value}, which DescribeImages does not return${narrowed}` };
  }
  return images;
}

/** One AMI reached through several terms keeps the union of what they said about it. */
function mergeVariants(existing: ResolvedAmi, again: ResolvedAmi): ResolvedAmi {
  if (existing.variants === undefined || again.variants === undefined) {
    // Also found by an id/name/tags term: it is not only an alias's image, so no variant limits it.
    const { variants: _variants, ...plain } = again;
    return plain;
  }
  const union = new Set([...existing.variants, ...again.variants]);
  return { ...again, variants: VARIANT_ORDER.filter((v) => union.has(v)) };
}
