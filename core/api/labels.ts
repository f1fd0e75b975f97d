// Label-key rules for the API surface (karpenter.md §1.1, §2.2). The same lists feed the
// TypeScript checks used by `autonode validate` and the CEL rules in the generated CRDs,
// so the offline validator and the API server reject the same keys with the same words.
//
// The requirements algebra in core/scheduling owns label *semantics* (aliases, matching);
// this file only decides whether a key may appear in a NodePool/NodeClaim at all.

/** Labels Karpenter core treats as well known (core `labels.go` WellKnownLabels + aliases). */
export const KUBERNETES_IO_ALLOWED_LABELS = [
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'node.kubernetes.io/windows-build',
] as const;

/** Domains under kubernetes.io / k8s.io that remain open to users. */
export const KUBERNETES_IO_ALLOWED_DOMAIN_SUFFIXES = ['node.kubernetes.io', 'node-restriction.kubernetes.io'] as const;
export const K8S_IO_ALLOWED_DOMAIN_SUFFIXES = ['kops.k8s.io'] as const;

export const KARPENTER_SH_ALLOWED_LABELS = ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] as const;

/** Well-known labels of the AWS provider (karpenter.md §2.2); the rest of the domain is reserved. */
export const KARPENTER_K8S_AWS_ALLOWED_LABELS = [
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/nitro-sandbox',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
] as const;

export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
export const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type';
export const ARCH_LABEL = 'kubernetes.io/arch';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** Label values, as Kubernetes validates them (≤ 63 chars; may be empty). */
export const LABEL_VALUE_PATTERN = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `key` is not a syntactically valid label key, or undefined when it is. */
export function labelKeySyntaxError(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return 'its prefix must be a lowercase DNS subdomain of at most 253 characters, e.g. "example.com/team"';
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    return 'its name must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric';
  }
  return undefined;
}

function domainOf(key: string): string {
  const slash = key.indexOf('/');
  return slash >= 0 ? key.slice(0, slash) : key;
}

const includes = (list: readonly string[], key: string): boolean => list.includes(key);

/**
 * Why a NodePool/NodeClaim may not constrain or set `key`, or undefined when it may.
 * `templateLabel` adds the rule that a NodePool cannot set its own nodepool label.
 */
export function restrictedLabelReason(key: string, usage: 'requirement' | 'templateLabel'): string | undefined {
  const domain = domainOf(key);
  if (key === HOSTNAME_LABEL) return `label "${HOSTNAME_LABEL}" is restricted: Karpenter assigns hostnames`;
  if (usage === 'templateLabel' && key === NODEPOOL_LABEL) {
    return `label "${NODEPOOL_LABEL}" is restricted: Karpenter sets it to the NodePool's name`;
  }
  if (
    domain.endsWith('kubernetes.io') &&
    !includes(KUBERNETES_IO_ALLOWED_LABELS, key) &&
    !KUBERNETES_IO_ALLOWED_DOMAIN_SUFFIXES.some((s) => domain.endsWith(s))
  ) {
    return `label domain "kubernetes.io" is restricted; use a well-known label (${KUBERNETES_IO_ALLOWED_LABELS.join(', ')}) or your own domain`;
  }
  if (domain.endsWith('k8s.io') && !K8S_IO_ALLOWED_DOMAIN_SUFFIXES.some((s) => domain.endsWith(s))) {
    return 'label domain "k8s.io" is restricted; use your own domain';
  }
  if (domain.endsWith('karpenter.sh') && !includes(KARPENTER_SH_ALLOWED_LABELS, key)) {
    return `label domain "karpenter.sh" is restricted; only ${KARPENTER_SH_ALLOWED_LABELS.join(', ')} may be used`;
  }
  if (domain.endsWith('karpenter.k8s.aws') && !includes(KARPENTER_K8S_AWS_ALLOWED_LABELS, key)) {
    return 'label domain "karpenter.k8s.aws" is restricted to the AWS provider\'s well-known labels (instance-category, instance-family, instance-size, …)';
  }
  return undefined;
}

// --- CEL twins of restrictedLabelReason, for the CRDs -------------------------------
// `key` is a CEL expression for the key (e.g. "self" or "x"). Messages match upstream.

const celList = (items: readonly string[]): string => `[${items.map((i) => JSON.stringify(i)).join(', ')}]`;
const celDomain = (key: string): string => `${key}.find("^([^/]+)")`;

export interface CelRule {
  rule: string;
  message: string;
}

export function restrictedLabelCelRules(key: string, usage: 'requirement' | 'templateLabel'): CelRule[] {
  const d = celDomain(key);
  const rules: CelRule[] = [
    {
      message: 'label domain "kubernetes.io" is restricted',
      rule:
        `${key} in ${celList(KUBERNETES_IO_ALLOWED_LABELS)} || ` +
        KUBERNETES_IO_ALLOWED_DOMAIN_SUFFIXES.map((s) => `${d}.endsWith(${JSON.stringify(s)})`).join(' || ') +
        ` || !${d}.endsWith("kubernetes.io")`,
    },
    {
      message: 'label domain "k8s.io" is restricted',
      rule: K8S_IO_ALLOWED_DOMAIN_SUFFIXES.map((s) => `${d}.endsWith(${JSON.stringify(s)})`).join(' || ') + ` || !${d}.endsWith("k8s.io")`,
    },
    {
      message: 'label domain "karpenter.sh" is restricted',
      rule: `${key} in ${celList(KARPENTER_SH_ALLOWED_LABELS)} || !${d}.endsWith("karpenter.sh")`,
    },
    {
      message: 'label domain "karpenter.k8s.aws" is restricted',
      rule: `${key} in ${celList(KARPENTER_K8S_AWS_ALLOWED_LABELS)} || !${d}.endsWith("karpenter.k8s.aws")`,
    },
    { message: `label "${HOSTNAME_LABEL}" is restricted`, rule: `${key} != "${HOSTNAME_LABEL}"` },
  ];
  if (usage === 'templateLabel') {
    rules.push({ message: `label "${NODEPOOL_LABEL}" is restricted`, rule: `${key} != "${NODEPOOL_LABEL}"` });
  }
  return rules;
}

/** The same rules over every key of a map (`self.all(x, …)`). */
export function restrictedLabelMapCelRules(usage: 'requirement' | 'templateLabel'): CelRule[] {
  return restrictedLabelCelRules('x', usage).map(({ rule, message }) => ({ message, rule: `self.all(x, ${rule})` }));
}
