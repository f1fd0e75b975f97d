import { z } from 'zod';
import { reportIssue } from './issues';

// EC2NodeClass selector terms: terms are ORed, fields within a term ANDed; `id` (and
// `alias` for AMIs) stand alone (karpenter.md §2.1).

const selectorTagsSchema = z
  .record(z.string(), z.string())
  .superRefine((tags, ctx) => {
    for (const [key, value] of Object.entries(tags)) {
      if (key === '' || value === '') {
        reportIssue(ctx, { path: [key], message: "empty tag keys or values aren't supported", fix: 'use "*" to match any value' });
      }
    }
  })
  .meta({
    maxProperties: 20,
    'x-kubernetes-validations': [{ message: "empty tag keys or values aren't supported", rule: "self.all(k, k != '' && self[k] != '')" }],
  });

export const subnetSelectorTermSchema = z.strictObject({
  tags: selectorTagsSchema.optional(),
  id: z.string().regex(/^subnet-[0-9a-z]+$/, { error: 'must be a subnet id such as subnet-0abc123' }).optional(),
});

export const securityGroupSelectorTermSchema = z.strictObject({
  tags: selectorTagsSchema.optional(),
  id: z.string().regex(/^sg-[0-9a-z]+$/, { error: 'must be a security group id such as sg-0abc123' }).optional(),
  name: z.string().optional(),
});

export const AMI_ALIAS_FAMILIES = ['al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'] as const;
const AMI_ALIAS = new RegExp(`^(${AMI_ALIAS_FAMILIES.join('|')})@.+$`);

export const amiSelectorTermSchema = z.strictObject({
  alias: z
    .string()
    .max(30)
    .regex(AMI_ALIAS, { error: `must be family@version with family one of ${AMI_ALIAS_FAMILIES.join(', ')}, e.g. al2023@latest` })
    .optional(),
  tags: selectorTagsSchema.optional(),
  id: z.string().regex(/^ami-[0-9a-z]+$/, { error: 'must be an AMI id such as ami-00722494a4a3fa2af' }).optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
});
export type AmiSelectorTerm = z.output<typeof amiSelectorTermSchema>;

type Term = Record<string, unknown>;
const has = (term: Term, field: string): boolean => term[field] !== undefined;

/** Rules for one kind of selector list; `standalone` fields may not be combined. */
const RULES = {
  subnetSelectorTerms: { selectors: ['tags', 'id'], standalone: ['id'] },
  securityGroupSelectorTerms: { selectors: ['tags', 'id', 'name'], standalone: ['id'] },
  amiSelectorTerms: { selectors: ['tags', 'id', 'name', 'alias', 'ssmParameter'], standalone: ['id', 'alias'] },
} as const;
type SelectorList = keyof typeof RULES;

function celRules(list: SelectorList): { message: string; rule: string }[] {
  const { selectors, standalone } = RULES[list];
  const rules = [
    {
      message: `expected at least one, got none, [${selectors.map((s) => `'${s}'`).join(', ')}]`,
      rule: `self.all(x, ${selectors.map((s) => `has(x.${s})`).join(' || ')})`,
    },
    ...standalone.map((field) => {
      const others = [...selectors, 'owner'].filter((s) => s !== field && (list === 'amiSelectorTerms' || s !== 'owner'));
      return {
        message: `'${field}' is mutually exclusive, cannot be set with a combination of other fields in ${list}`,
        rule: `!self.exists(x, has(x.${field}) && (${others.map((s) => `has(x.${s})`).join(' || ')}))`,
      };
    }),
  ];
  if (list === 'amiSelectorTerms') {
    rules.push({
      message: "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
      rule: '!(self.exists(x, has(x.alias)) && self.size() != 1)',
    });
  }
  return rules;
}

export function selectorTermsSchema<T extends z.ZodType<Term>>(term: T, list: SelectorList) {
  const { selectors, standalone } = RULES[list];
  return z
    .array(term)
    .min(1, { error: `${list} needs at least one term` })
    .max(30)
    .superRefine((terms, ctx) => {
      terms.forEach((t, index) => {
        const set = Object.keys(t).filter((k) => has(t, k));
        if (!selectors.some((s) => has(t, s))) {
          reportIssue(ctx, {
            path: [index],
            message: `a term must set one of ${selectors.join(', ')}`,
            fix: `add e.g. tags: {karpenter.sh/discovery: <cluster>}`,
          });
        }
        for (const field of standalone) {
          const others = set.filter((k) => k !== field);
          if (has(t, field) && others.length > 0) {
            reportIssue(ctx, {
              path: [index, field],
              message: `'${field}' cannot be combined with ${others.join(', ')} in one term`,
              fix: `put ${field} in a term of its own`,
            });
          }
        }
      });
      if (list === 'amiSelectorTerms' && terms.length > 1) {
        const aliasIndex = terms.findIndex((t) => has(t, 'alias'));
        if (aliasIndex >= 0) {
          reportIssue(ctx, {
            path: [aliasIndex, 'alias'],
            message: 'an alias term must be the only amiSelectorTerm',
            fix: 'remove the other terms, or replace the alias with id/tags/name terms',
          });
        }
      }
    })
    .meta({ 'x-kubernetes-validations': celRules(list) });
}
