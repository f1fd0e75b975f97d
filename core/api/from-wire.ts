import { type z } from 'zod';
import { EC2NodeClassSchema, type AmiFamily, type EC2NodeClass, type EC2NodeClassV1Beta1Wire, type EC2NodeClassV1Wire } from './ec2nodeclass';
import { AWS_GROUP, EC2_NODE_CLASS_KIND } from './groups';
import { formatPath, toValidationIssues, type ConversionWarning, type PathSegment, type ValidationIssue } from './issues';
import { CAPACITY_TYPE_LABEL } from './labels';
import { type Kubelet } from './kubelet';
import { NodeClaimSchema, type NodeClaim, type NodeClaimV1Beta1Wire, type NodeClaimV1Wire } from './nodeclaim';
import { DEFAULT_EXPIRE_AFTER, NodePoolSchema, type NodePool, type NodePoolV1Beta1Wire, type NodePoolV1Wire } from './nodepool';
import { type Converted } from './result';
import { type AmiSelectorTerm } from './selectors';

// Wire (v1 or v1beta1, as written or as read back from the API server) → internal model.
// Mapping per karpenter.md §5 "v1beta1 → v1". The same functions serve v1 input because
// the v1 wire schema tolerates v1beta1 fields (conversion: None, see the ADR).

export type WireVersion = 'v1' | 'v1beta1';

/** Upstream's annotation for v1beta1 kubelet settings that have no v1 home on a NodePool. */
export const KUBELET_COMPATIBILITY_ANNOTATION = 'compatibility.karpenter.sh/v1beta1-kubelet-conversion';

/** Label domains of other Karpenter providers (seed 002 uses Azure's). */
const FOREIGN_PROVIDER_DOMAINS = ['karpenter.azure.com', 'karpenter.k8s.azure'];

interface WireNodeClassRef {
  apiVersion?: string | undefined;
  group?: string | undefined;
  kind?: string | undefined;
  name: string;
}

/** Parses `value` with the canonical schema: the last gate, so the model is never cast. */
function finish<T>(schema: z.ZodType<T>, value: unknown, warnings: ConversionWarning[]): Converted<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { status: 'invalid', issues: toValidationIssues(parsed.error, value) };
  return { status: 'ok', value: parsed.data, warnings };
}

function groupOf(apiVersion: string | undefined): string | undefined {
  if (apiVersion === undefined) return undefined;
  const slash = apiVersion.indexOf('/');
  return slash > 0 ? apiVersion.slice(0, slash) : undefined;
}

function resolveNodeClassRef(
  ref: WireNodeClassRef,
  path: PathSegment[],
  warnings: ConversionWarning[],
): Converted<{ group: string; kind: string; name: string }> {
  const fromApiVersion = groupOf(ref.apiVersion);
  const group = ref.group ?? fromApiVersion ?? AWS_GROUP;
  const kind = ref.kind ?? EC2_NODE_CLASS_KIND;
  if (ref.group !== undefined && fromApiVersion !== undefined && ref.group !== fromApiVersion) {
    warnings.push({
      path: formatPath([...path, 'apiVersion']),
      message: `ignored: group ${ref.group} disagrees with apiVersion ${String(ref.apiVersion)}; remove apiVersion (a v1beta1 field)`,
    });
  }
  if (group !== AWS_GROUP || kind !== EC2_NODE_CLASS_KIND) {
    return {
      status: 'unsupported',
      reason: `${formatPath(path)} refers to ${kind} (${group}), which is unsupported by this provider (AWS): refer to an ${EC2_NODE_CLASS_KIND} (${AWS_GROUP})`,
    };
  }
  return { status: 'ok', value: { group, kind, name: ref.name }, warnings };
}

function withKubeletAnnotation(
  annotations: Record<string, string> | undefined,
  kubelet: Kubelet | undefined,
  path: PathSegment[],
  nodeClassName: string,
  warnings: ConversionWarning[],
): Record<string, string> | undefined {
  if (kubelet === undefined) return annotations;
  warnings.push({
    path: formatPath(path),
    message:
      `kubelet settings belong to the EC2NodeClass in v1; they are kept in annotation ${KUBELET_COMPATIBILITY_ANNOTATION} ` +
      `and applied by 'autonode convert' when EC2NodeClass ${nodeClassName} is converted with it; otherwise move them to ${nodeClassName}.spec.kubelet`,
  });
  return { ...annotations, [KUBELET_COMPATIBILITY_ANNOTATION]: JSON.stringify(kubelet) };
}

export interface NodePoolConversionOptions {
  /**
   * The version whose defaults apply, when it differs from the version read: a NodePool
   * written as v1beta1 and read back through v1 (conversion: None) still means what
   * v1beta1 meant. See `requirementsWrittenAs` in normalise.ts.
   */
  readonly defaultsOf?: WireVersion;
}

export function nodePoolFromWire(wire: NodePoolV1Wire | NodePoolV1Beta1Wire, source: WireVersion, options: NodePoolConversionOptions = {}): Converted<NodePool> {
  const warnings: ConversionWarning[] = [];
  const templateSpec = wire.spec.template.spec;
  const disruption = wire.spec.disruption;
  const ref = resolveNodeClassRef(templateSpec.nodeClassRef, ['spec', 'template', 'spec', 'nodeClassRef'], warnings);
  if (ref.status !== 'ok') return ref;

  // v1beta1 kept expireAfter under disruption. When present it was set by the user (the
  // v1beta1 schema does not default it), so it wins over the template's value, which may
  // be the v1 default the API server filled in when reading a stored v1beta1 object.
  let expireAfter = templateSpec.expireAfter ?? DEFAULT_EXPIRE_AFTER;
  if (disruption.expireAfter !== undefined) {
    const templateValue = templateSpec.expireAfter;
    if (templateValue !== undefined && templateValue !== disruption.expireAfter && templateValue !== DEFAULT_EXPIRE_AFTER) {
      warnings.push({
        path: 'spec.template.spec.expireAfter',
        message: `ignored (${templateValue}): spec.disruption.expireAfter (${disruption.expireAfter}) is set and takes precedence; remove spec.disruption.expireAfter to use it`,
      });
    } else if (source === 'v1') {
      warnings.push({
        path: 'spec.disruption.expireAfter',
        message: 'is the v1beta1 location; moved to spec.template.spec.expireAfter',
      });
    }
    expireAfter = disruption.expireAfter;
  }

  // v1beta1's WhenUnderutilized consolidated without waiting: v1 spells that
  // WhenEmptyOrUnderutilized with consolidateAfter 0s (upstream conversion does the same).
  let consolidationPolicy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized';
  let consolidateAfter = disruption.consolidateAfter ?? '0s';
  switch (disruption.consolidationPolicy) {
    case 'WhenUnderutilized':
      consolidationPolicy = 'WhenEmptyOrUnderutilized';
      if (source === 'v1') {
        warnings.push({ path: 'spec.disruption.consolidationPolicy', message: 'WhenUnderutilized is the v1beta1 name; use WhenEmptyOrUnderutilized' });
      } else if (consolidateAfter !== '0s') {
        warnings.push({
          path: 'spec.disruption.consolidateAfter',
          message: `ignored (${consolidateAfter}): v1beta1 consolidated underutilized nodes without waiting, so consolidateAfter is 0s`,
        });
        consolidateAfter = '0s';
      }
      break;
    case 'WhenEmpty':
    case 'WhenEmptyOrUnderutilized':
      consolidationPolicy = disruption.consolidationPolicy;
      break;
  }

  const foreign = foreignProviderIssues(templateSpec.requirements, warnings);
  if (foreign.length > 0) return { status: 'invalid', issues: foreign };
  const requirements = (options.defaultsOf ?? source) === 'v1beta1'
    ? withV1beta1Defaults(templateSpec.requirements, wire.spec.template.metadata?.labels ?? {}, warnings)
    : templateSpec.requirements;

  const nodeClassName = ref.value.name;
  const metadata = wire.spec.template.metadata;
  const annotations = withKubeletAnnotation(
    wire.metadata.annotations,
    templateSpec.kubelet,
    ['spec', 'template', 'spec', 'kubelet'],
    nodeClassName,
    warnings,
  );
  return finish(
    NodePoolSchema,
    {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { ...wire.metadata, annotations },
      spec: {
        template: {
          metadata,
          spec: {
            taints: templateSpec.taints,
            startupTaints: templateSpec.startupTaints,
            requirements,
            nodeClassRef: ref.value,
            terminationGracePeriod: templateSpec.terminationGracePeriod,
            expireAfter,
          },
        },
        disruption: { consolidationPolicy, consolidateAfter, budgets: disruption.budgets },
        limits: wire.spec.limits,
        weight: wire.spec.weight,
      },
      status: wire.status,
    },
    warnings,
  );
}

type WireRequirement = NodePoolV1Wire['spec']['template']['spec']['requirements'][number];

/** The EC2 labels to use instead of AKS's SKU selectors, for the refusal's fix. */
const AKS_SELECTOR_FIX: Readonly<Record<string, string>> = {
  'sku-family': 'karpenter.k8s.aws/instance-category (e.g. m for general purpose, c for compute, r for memory)',
  'sku-series': 'karpenter.k8s.aws/instance-family (e.g. m6i)',
  'sku-name': 'node.kubernetes.io/instance-type (e.g. m6i.xlarge)',
  'sku-version': 'karpenter.k8s.aws/instance-generation (e.g. Gt 5)',
  'sku-cpu': 'karpenter.k8s.aws/instance-cpu (vCPUs)',
  'sku-memory': 'karpenter.k8s.aws/instance-memory (MiB)',
  'sku-gpu-name': 'karpenter.k8s.aws/instance-gpu-name',
  'sku-gpu-manufacturer': 'karpenter.k8s.aws/instance-gpu-manufacturer',
  'sku-gpu-count': 'karpenter.k8s.aws/instance-gpu-count',
};

/**
 * Requirements on another provider's labels (seed 002 uses AKS's sku-family). None maps
 * onto EC2 faithfully: Azure's families and versions are not EC2's categories and
 * generations (a "D" v5 and an m5 are different machines), so translating them would
 * launch hardware the admin never chose. A requirement that needs such a label present
 * (In, Exists, Gt, Lt) makes the pool invalid, naming the EC2 label to use instead; NotIn
 * and DoesNotExist hold on every EC2 node and only warn.
 */
function foreignProviderIssues(requirements: readonly WireRequirement[], warnings: ConversionWarning[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  requirements.forEach((requirement, index) => {
    const slash = requirement.key.indexOf('/');
    const domain = slash >= 0 ? requirement.key.slice(0, slash) : '';
    if (!FOREIGN_PROVIDER_DOMAINS.some((foreign) => domain.endsWith(foreign))) return;
    const path = `spec.template.spec.requirements[${index}]`;
    if (requirement.operator === 'NotIn' || requirement.operator === 'DoesNotExist') {
      warnings.push({ path: `${path}.key`, message: `${requirement.key} is another provider's label: no EC2 node carries it, so ${requirement.operator} always holds` });
      return;
    }
    const instead = AKS_SELECTOR_FIX[requirement.key.slice(slash + 1)];
    issues.push({
      path: `${path}.key`,
      value: requirement.key,
      message: `${requirement.key} is another provider's label (${domain}): no EC2 instance type carries it, and autonode does not translate it, so this NodePool could never launch a node`,
      fix: instead === undefined
        ? 'remove this requirement, or replace it with a karpenter.k8s.aws/ label (instance-category, instance-family, instance-cpu, instance-memory, …)'
        : `replace it with ${instead}`,
    });
  });
  return issues;
}

/**
 * The AWS provider's v1beta1 defaulting webhook (pkg/apis/v1beta1 NodeClaimSpec.SetDefaults)
 * added capacity-type In [on-demand] to a NodePool that did not name capacity-type; v1 has
 * no webhook, so a v1 pool without it may launch spot (the cheapest offering). A template
 * label on the key counts as naming it.
 */
function withV1beta1Defaults(requirements: readonly WireRequirement[], labels: Readonly<Record<string, string>>, warnings: ConversionWarning[]): WireRequirement[] {
  const named = requirements.some((r) => r.key === CAPACITY_TYPE_LABEL) || CAPACITY_TYPE_LABEL in labels;
  if (named) return [...requirements];
  warnings.push({
    path: 'spec.template.spec.requirements',
    message: `added ${CAPACITY_TYPE_LABEL} In [on-demand]: the v1beta1 AWS defaulting gave a NodePool without it on-demand nodes (v1 would allow spot); add ${CAPACITY_TYPE_LABEL} In [spot, on-demand] to allow spot`,
  });
  return [...requirements, { key: CAPACITY_TYPE_LABEL, operator: 'In', values: ['on-demand'] }];
}

export function nodeClaimFromWire(wire: NodeClaimV1Wire | NodeClaimV1Beta1Wire, source: WireVersion): Converted<NodeClaim> {
  const warnings: ConversionWarning[] = [];
  const ref = resolveNodeClassRef(wire.spec.nodeClassRef, ['spec', 'nodeClassRef'], warnings);
  if (ref.status !== 'ok') return ref;
  if (source === 'v1beta1' && wire.spec.expireAfter === undefined) {
    warnings.push({
      path: 'spec.expireAfter',
      message: `v1beta1 NodeClaims expired per their NodePool; set to the default ${DEFAULT_EXPIRE_AFTER}`,
    });
  }
  const annotations = withKubeletAnnotation(wire.metadata.annotations, wire.spec.kubelet, ['spec', 'kubelet'], ref.value.name, warnings);
  return finish(
    NodeClaimSchema,
    {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { ...wire.metadata, annotations },
      spec: {
        taints: wire.spec.taints,
        startupTaints: wire.spec.startupTaints,
        requirements: wire.spec.requirements,
        resources: wire.spec.resources,
        nodeClassRef: ref.value,
        terminationGracePeriod: wire.spec.terminationGracePeriod,
        expireAfter: wire.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER,
      },
      status: wire.status,
    },
    warnings,
  );
}

const ALIAS_FAMILY: Record<Exclude<AmiFamily, 'Custom'>, string> = {
  AL2: 'al2',
  AL2023: 'al2023',
  Bottlerocket: 'bottlerocket',
  Windows2019: 'windows2019',
  Windows2022: 'windows2022',
  Windows2025: 'windows2025',
};

/**
 * AMI terms for a class: its own, or — v1beta1 allowed a bare amiFamily — the family's
 * `@latest` alias, as upstream's v1 migration does.
 */
export function amiTermsFor(options: {
  family: AmiFamily | undefined;
  terms: AmiSelectorTerm[] | undefined;
  /** Where the input keeps these, for messages: v1alpha5 calls the terms amiSelector. */
  familyPath: string;
  termsPath: string;
  warnings: ConversionWarning[];
}): Converted<AmiSelectorTerm[]> {
  const { family, terms, familyPath, termsPath, warnings } = options;
  if (terms !== undefined && terms.length > 0) return { status: 'ok', value: terms, warnings };
  const effective = family ?? 'AL2';
  if (family === undefined) warnings.push({ path: familyPath, message: 'not set: defaults to AL2' });
  if (effective === 'Custom') {
    return {
      status: 'invalid',
      issues: [
        {
          path: termsPath,
          value: undefined,
          message: 'amiFamily Custom needs amiSelectorTerms naming the AMI',
          fix: 'add amiSelectorTerms: [{id: ami-…}] (on HyperShift, enabling AutoNode fills in the release AMI)',
        },
      ],
    };
  }
  const alias = `${ALIAS_FAMILY[effective]}@latest`;
  warnings.push({ path: termsPath, message: `not set: uses alias ${alias}, which follows every new AMI release` });
  return { status: 'ok', value: [{ alias }], warnings };
}

export function ec2NodeClassFromWire(wire: EC2NodeClassV1Wire | EC2NodeClassV1Beta1Wire): Converted<EC2NodeClass> {
  const warnings: ConversionWarning[] = [];
  const spec = wire.spec;
  const terms = amiTermsFor({
    family: spec.amiFamily,
    terms: spec.amiSelectorTerms,
    familyPath: 'spec.amiFamily',
    termsPath: 'spec.amiSelectorTerms',
    warnings,
  });
  if (terms.status !== 'ok') return terms;
  const alias = terms.value.find((t) => t.alias !== undefined)?.alias;
  if (alias !== undefined && spec.amiFamily !== undefined && spec.amiFamily !== 'Custom') {
    const aliasFamily = alias.slice(0, alias.indexOf('@'));
    if (ALIAS_FAMILY[spec.amiFamily] !== aliasFamily) {
      return {
        status: 'invalid',
        issues: [
          {
            path: 'spec.amiFamily',
            value: spec.amiFamily,
            message: `does not match the alias ${alias}`,
            fix: `remove amiFamily (the alias implies it) or set it to Custom to use your own userData`,
          },
        ],
      };
    }
  }
  return finish(EC2NodeClassSchema, { ...wire, apiVersion: 'karpenter.k8s.aws/v1', spec: { ...spec, amiSelectorTerms: terms.value } }, warnings);
}
