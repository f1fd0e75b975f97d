import { EC2NodeClassSchema, type EC2NodeClass } from './ec2nodeclass';
import { amiTermsFor, KUBELET_COMPATIBILITY_ANNOTATION } from './from-wire';
import { AWS_GROUP, EC2_NODE_CLASS_KIND } from './groups';
import { toValidationIssues, type ConversionWarning, type ValidationIssue } from './issues';
import { ARCH_LABEL, CAPACITY_TYPE_LABEL } from './labels';
import { NodePoolSchema, type NodePool } from './nodepool';
import { type AwsProvider, type Provisioner } from './provisioner';
import { type Requirement } from './requirements';
import { type Converted } from './result';
import { type AmiSelectorTerm } from './selectors';

// karpenter.sh/v1alpha5 Provisioner → v1 NodePool (+ EC2NodeClass), preserving what the
// Provisioner *did*, not only where its fields moved (karpenter.md §5). Every assumption
// that changes or pins behaviour is reported as a warning.

/** Tag value that selects nothing, so a generated class fails closed until edited. */
export const DISCOVERY_PLACEHOLDER = 'REPLACE_WITH_CLUSTER_NAME';

export function secondsToDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${s > 0 ? `${s}s` : ''}`;
}

/**
 * v1alpha5's AWS defaulting webhook added capacity-type In [on-demand] and arch In
 * [amd64] unless a requirement or label already named the key; v1 has no such default,
 * so without these the converted pool would start launching spot and arm64 nodes.
 */
function impliedRequirements(provisioner: Provisioner, warnings: ConversionWarning[]): Requirement[] {
  const requirements = [...(provisioner.spec.requirements ?? [])];
  const labels = provisioner.spec.labels ?? {};
  const implied: [string, string][] = [
    [CAPACITY_TYPE_LABEL, 'on-demand'],
    [ARCH_LABEL, 'amd64'],
  ];
  for (const [key, value] of implied) {
    if (requirements.some((r) => r.key === key) || key in labels) continue;
    requirements.push({ key, operator: 'In', values: [value] });
    warnings.push({
      path: 'spec.requirements',
      message: `added ${key} In [${value}]: v1alpha5 implied it when absent, v1 would allow every value`,
    });
  }
  return requirements;
}

type Disruption = NodePool['spec']['disruption'];

function disruptionFor(provisioner: Provisioner, warnings: ConversionWarning[]): Omit<Disruption, 'budgets'> {
  const consolidation = provisioner.spec.consolidation?.enabled === true;
  const ttlEmpty = provisioner.spec.ttlSecondsAfterEmpty;
  if (consolidation && ttlEmpty !== undefined) {
    // v1alpha5's webhook rejected this pair (seed 004 shows it anyway). Consolidation is
    // the broader intent; keeping the TTL as consolidateAfter never removes an empty node
    // sooner than the Provisioner asked, at the cost of delaying consolidation as well.
    const after = secondsToDuration(ttlEmpty);
    warnings.push({
      path: 'spec.ttlSecondsAfterEmpty',
      message:
        `consolidation.enabled and ttlSecondsAfterEmpty are mutually exclusive in v1alpha5; converted to ` +
        `WhenEmptyOrUnderutilized with consolidateAfter ${after}, which also delays consolidating underutilized nodes ` +
        `by ${after}; set consolidateAfter: 0s for v1alpha5's immediate consolidation`,
    });
    return { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: after };
  }
  if (consolidation) return { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' };
  if (ttlEmpty !== undefined) return { consolidationPolicy: 'WhenEmpty', consolidateAfter: secondsToDuration(ttlEmpty) };
  warnings.push({
    path: 'spec.disruption',
    message: 'no consolidation and no ttlSecondsAfterEmpty: v1alpha5 never removed nodes, so consolidateAfter is Never (policy WhenEmpty)',
  });
  return { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' };
}

function expireAfterFor(provisioner: Provisioner, warnings: ConversionWarning[]): string {
  const ttl = provisioner.spec.ttlSecondsUntilExpired;
  if (ttl !== undefined) return secondsToDuration(ttl);
  warnings.push({
    path: 'spec.ttlSecondsUntilExpired',
    message: 'not set: v1alpha5 nodes never expired, so expireAfter is Never (v1 would default to 720h)',
  });
  return 'Never';
}

/** v1alpha5 selector maps: `aws-ids`/`aws::ids` list ids; every other key is a tag. */
function selectorTerms(selector: Record<string, string>, idPrefix: string): { id?: string; tags?: Record<string, string> }[] {
  const ids = selector['aws::ids'] ?? selector['aws-ids'];
  const tags = Object.fromEntries(Object.entries(selector).filter(([k]) => k !== 'aws::ids' && k !== 'aws-ids'));
  const terms: { id?: string; tags?: Record<string, string> }[] = (ids ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id.startsWith(idPrefix))
    .map((id) => ({ id }));
  if (Object.keys(tags).length > 0) terms.push({ tags });
  return terms;
}

function amiTermsFromSelector(selector: Record<string, string> | undefined): AmiSelectorTerm[] | undefined {
  if (selector === undefined) return undefined;
  const ids = (selector['aws::ids'] ?? selector['aws-ids'] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (ids.length > 0) return ids.map((id) => ({ id }));
  const name = selector['aws::name'];
  const owners = (selector['aws::owners'] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const tagEntries = Object.entries(selector).filter(([k]) => !k.startsWith('aws::') && k !== 'aws-ids');
  const base: AmiSelectorTerm = {
    ...(name !== undefined ? { name } : {}),
    ...(tagEntries.length > 0 ? { tags: Object.fromEntries(tagEntries) } : {}),
  };
  return owners.length > 0 ? owners.map((owner) => ({ ...base, owner })) : [base];
}

function placeholderTerms(field: string, warnings: ConversionWarning[]): { tags: Record<string, string> }[] {
  warnings.push({
    path: `spec.provider.${field}`,
    message:
      `not set: the generated EC2NodeClass selects resources tagged karpenter.sh/discovery=${DISCOVERY_PLACEHOLDER}, ` +
      `which matches nothing until you replace the value (on HyperShift: the cluster's infra ID)`,
  });
  return [{ tags: { 'karpenter.sh/discovery': DISCOVERY_PLACEHOLDER } }];
}

function nodeClassFrom(provisioner: Provisioner, provider: AwsProvider, warnings: ConversionWarning[]): Converted<EC2NodeClass> {
  const issues: ValidationIssue[] = [];
  if (provider.launchTemplate !== undefined) {
    issues.push({
      path: 'spec.provider.launchTemplate',
      value: provider.launchTemplate,
      message: 'launch templates cannot be converted: v1 builds its own',
      fix: 'remove launchTemplate and express its AMI, userData, security groups and block devices in the provider fields',
    });
  }
  if (provider.amiFamily === 'Ubuntu') {
    issues.push({
      path: 'spec.provider.amiFamily',
      value: 'Ubuntu',
      message: 'the Ubuntu AMI family was removed in v1',
      fix: 'use AL2023, or Custom with an amiSelector and your own userData',
    });
  }
  if (issues.length > 0) return { status: 'invalid', issues };
  const family = provider.amiFamily === 'Ubuntu' ? undefined : provider.amiFamily;
  const amiTerms = amiTermsFor({
    family,
    terms: amiTermsFromSelector(provider.amiSelector),
    familyPath: 'spec.provider.amiFamily',
    termsPath: 'spec.provider.amiSelector',
    warnings,
  });
  if (amiTerms.status !== 'ok') return amiTerms;

  const kubeletConfiguration = provisioner.spec.kubeletConfiguration;
  let kubelet: Omit<NonNullable<typeof kubeletConfiguration>, 'containerRuntime'> | undefined;
  if (kubeletConfiguration !== undefined) {
    const { containerRuntime, ...rest } = kubeletConfiguration;
    kubelet = rest;
    if (containerRuntime !== undefined) {
      warnings.push({
        path: 'spec.kubeletConfiguration.containerRuntime',
        message: `dropped (${containerRuntime}): v1 nodes always run containerd`,
      });
    }
  }
  // v1alpha5 defaulted the IMDS hop limit to 2; v1 defaults to 1, which breaks pods that
  // reach IMDS through an extra network hop. Keep 2 unless the Provisioner said otherwise.
  const metadataOptions = {
    httpEndpoint: 'enabled',
    httpProtocolIPv6: 'disabled',
    httpPutResponseHopLimit: 2,
    httpTokens: 'required',
    ...provider.metadataOptions,
  };
  const value = {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: provisioner.metadata.name },
    spec: {
      amiFamily: family ?? 'AL2',
      amiSelectorTerms: amiTerms.value,
      subnetSelectorTerms: provider.subnetSelector
        ? selectorTerms(provider.subnetSelector, 'subnet-')
        : placeholderTerms('subnetSelector', warnings),
      securityGroupSelectorTerms: provider.securityGroupSelector
        ? selectorTerms(provider.securityGroupSelector, 'sg-')
        : placeholderTerms('securityGroupSelector', warnings),
      instanceProfile: provider.instanceProfile,
      tags: provider.tags,
      context: provider.context,
      userData: provider.userData,
      detailedMonitoring: provider.detailedMonitoring,
      blockDeviceMappings: provider.blockDeviceMappings,
      metadataOptions,
      kubelet,
    },
  };
  const parsed = EC2NodeClassSchema.safeParse(value);
  if (!parsed.success) return { status: 'invalid', issues: toValidationIssues(parsed.error, value, ['(generated EC2NodeClass)']) };
  return { status: 'ok', value: parsed.data, warnings };
}

/** Converts a Provisioner into a v1 NodePool and, from its provider block, an EC2NodeClass. */
export function provisionerToV1(provisioner: Provisioner): Converted<{ nodePool: NodePool; nodeClass?: EC2NodeClass }> {
  const warnings: ConversionWarning[] = [];
  const { spec } = provisioner;
  const name = provisioner.metadata.name ?? provisioner.metadata.generateName ?? 'provisioner';
  if (spec.provider !== undefined && spec.providerRef !== undefined) {
    return {
      status: 'invalid',
      issues: [
        {
          path: 'spec.provider',
          value: spec.provider,
          message: 'provider and providerRef are mutually exclusive',
          fix: 'keep providerRef (an existing node template) or provider (inline settings), not both',
        },
      ],
    };
  }

  let nodeClass: EC2NodeClass | undefined;
  let poolAnnotations = provisioner.metadata.annotations;
  if (spec.providerRef !== undefined) {
    if (spec.providerRef.kind !== undefined && spec.providerRef.kind !== 'AWSNodeTemplate' && spec.providerRef.kind !== EC2_NODE_CLASS_KIND) {
      return { status: 'unsupported', reason: `spec.providerRef refers to ${spec.providerRef.kind}, which is unsupported by this provider (AWS)` };
    }
    warnings.push({
      path: 'spec.providerRef',
      message: `now refers to EC2NodeClass ${spec.providerRef.name}: convert AWSNodeTemplate ${spec.providerRef.name} to an EC2NodeClass of that name`,
    });
    if (spec.kubeletConfiguration !== undefined) {
      poolAnnotations = { ...poolAnnotations, [KUBELET_COMPATIBILITY_ANNOTATION]: JSON.stringify(spec.kubeletConfiguration) };
      warnings.push({
        path: 'spec.kubeletConfiguration',
        message: `belongs to the EC2NodeClass in v1: move it to ${spec.providerRef.name}.spec.kubelet (kept in annotation ${KUBELET_COMPATIBILITY_ANNOTATION})`,
      });
    }
  } else {
    if (spec.provider === undefined) {
      warnings.push({ path: 'spec.provider', message: 'not set: generating an EC2NodeClass from defaults' });
    }
    const converted = nodeClassFrom({ ...provisioner, metadata: { ...provisioner.metadata, name } }, spec.provider ?? {}, warnings);
    if (converted.status !== 'ok') return converted;
    nodeClass = converted.value;
  }

  const disruption = disruptionFor(provisioner, warnings);
  const value = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: provisioner.metadata.labels, annotations: poolAnnotations },
    spec: {
      template: {
        metadata: spec.labels === undefined && spec.annotations === undefined ? undefined : { labels: spec.labels, annotations: spec.annotations },
        spec: {
          taints: spec.taints,
          startupTaints: spec.startupTaints,
          requirements: impliedRequirements(provisioner, warnings),
          nodeClassRef: { group: AWS_GROUP, kind: EC2_NODE_CLASS_KIND, name: spec.providerRef?.name ?? name },
          expireAfter: expireAfterFor(provisioner, warnings),
        },
      },
      disruption,
      limits: spec.limits?.resources,
      weight: spec.weight,
    },
  };
  const parsed = NodePoolSchema.safeParse(value);
  if (!parsed.success) return { status: 'invalid', issues: toValidationIssues(parsed.error, value, ['(generated NodePool)']) };
  return { status: 'ok', value: nodeClass ? { nodePool: parsed.data, nodeClass } : { nodePool: parsed.data }, warnings };
}
