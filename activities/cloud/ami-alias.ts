/**
 * `alias` AMI selector terms (`family@version`) → the SSM parameters that name the EKS
 * optimized AMIs, pure. Paths and variants follow karpenter-provider-aws
 * (`pkg/providers/amifamily/{al2,al2023,bottlerocket,windows}.go`), except that the
 * leading `/aws/service` is a configurable prefix: moto refuses PutParameter under `/aws/`
 * and ships no EKS parameters, so tests publish the same tree under their own prefix.
 */
import { z } from 'zod';
import { assertNever } from '../../core/assert';

export const DEFAULT_SSM_PATH_PREFIX = '/aws/service';

/**
 * The provider's alias settings, parsed where the provider is built: a typo here would
 * otherwise surface only as "no AMI found" on every node class.
 */
export const AliasConfigSchema = z.object({
  ssmPathPrefix: z
    .string()
    .regex(/^(\/[A-Za-z0-9_.-]+)+\/?$/, 'must be an SSM path such as /aws/service')
    .optional(),
  kubernetesVersion: z
    .string()
    .regex(/^\d+\.\d+$/, 'must be a Kubernetes minor version such as 1.31')
    .optional(),
});

export const ALIAS_FAMILIES = ['al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'] as const;
export type AliasFamily = (typeof ALIAS_FAMILIES)[number];

/** The `amiFamily` each alias family implies (Karpenter's AMIFamily constants). */
export const AMI_FAMILY_OF_ALIAS: Readonly<Record<AliasFamily, string>> = {
  al2: 'AL2',
  al2023: 'AL2023',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows2019',
  windows2022: 'Windows2022',
  windows2025: 'Windows2025',
};

export interface AmiAlias {
  family: AliasFamily;
  /** `latest`, or a release such as `v20240807` (AL2/AL2023) or `v1.26.2` (Bottlerocket) */
  version: string;
}

export type AliasParse = { ok: true; alias: AmiAlias } | { ok: false; problem: string };

const isAliasFamily = (family: string): family is AliasFamily => (ALIAS_FAMILIES as readonly string[]).includes(family);
const isWindows = (family: AliasFamily): boolean => family.startsWith('windows');

/**
 * Karpenter's CEL rules for the field (format, family list, Windows only `latest`), plus a
 * version charset: the version becomes part of an SSM path, so `/` or `..` must not pass.
 */
export function parseAmiAlias(raw: string): AliasParse {
  const match = /^([a-zA-Z0-9]+)@(.+)$/.exec(raw);
  if (!match) return { ok: false, problem: `alias "${raw}" is not of the form family@version (e.g. al2023@latest)` };
  const [, family = '', version = ''] = match;
  if (!isAliasFamily(family)) {
    return { ok: false, problem: `alias "${raw}" names family "${family}", which is not one of ${ALIAS_FAMILIES.join(', ')}` };
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(version) || version.includes('..')) {
    return { ok: false, problem: `alias "${raw}" has version "${version}", which is not latest or a release such as v20240807` };
  }
  if (isWindows(family) && version !== 'latest') {
    return { ok: false, problem: `alias "${raw}": ${family} accepts only version latest` };
  }
  return { ok: true, alias: { family, version } };
}

export type AmiArchitecture = 'x86_64' | 'arm64';
/** Karpenter's amifamily.Variant: which instances an AMI is meant for. */
export type AmiVariant = 'standard' | 'nvidia' | 'neuron';

export interface AliasParameter {
  path: string;
  architecture: AmiArchitecture;
  variants: readonly AmiVariant[];
}

export interface AliasPathOptions {
  /** `/aws/service` in AWS; tests use their own tree */
  pathPrefix: string;
  /** the cluster's Kubernetes minor version, e.g. `1.31`: every EKS path contains it */
  kubernetesVersion: string;
}

const WINDOWS_YEAR: Readonly<Record<string, string>> = { windows2019: '2019', windows2022: '2022', windows2025: '2025' };

/** Every parameter the alias may resolve through; a missing one is normal (not every variant exists everywhere). */
export function aliasParameters(alias: AmiAlias, options: AliasPathOptions): AliasParameter[] {
  const prefix = options.pathPrefix.replace(/\/+$/, '');
  const k8s = options.kubernetesVersion;
  const latest = alias.version === 'latest';
  const eks = `${prefix}/eks/optimized-ami/${k8s}`;
  switch (alias.family) {
    case 'al2023': {
      const imageName = (arch: AmiArchitecture, variant: AmiVariant) =>
        latest ? 'recommended' : `amazon-eks-node-al2023-${arch}-${variant}-${k8s}-${alias.version}`;
      const matrix: [AmiArchitecture, AmiVariant][] = [
        ['x86_64', 'standard'], ['x86_64', 'nvidia'], ['x86_64', 'neuron'], ['arm64', 'standard'], ['arm64', 'nvidia'],
      ];
      return matrix.map(([architecture, variant]) => ({
        path: `${eks}/amazon-linux-2023/${architecture}/${variant}/${imageName(architecture, variant)}/image_id`,
        architecture,
        variants: [variant],
      }));
    }
    case 'al2': {
      const image = (release: string) => (latest ? 'recommended' : `${release}-${k8s}-${alias.version}`);
      return [
        { path: `${eks}/amazon-linux-2/${image('amazon-eks-node')}/image_id`, architecture: 'x86_64', variants: ['standard'] },
        { path: `${eks}/amazon-linux-2-arm64/${image('amazon-eks-arm64-node')}/image_id`, architecture: 'arm64', variants: ['standard'] },
        { path: `${eks}/amazon-linux-2-gpu/${image('amazon-eks-gpu-node')}/image_id`, architecture: 'x86_64', variants: ['neuron', 'nvidia'] },
      ];
    }
    case 'bottlerocket': {
      // Bottlerocket releases are tagged v1.x.y on GitHub but published as 1.x.y in SSM; Karpenter accepts both.
      const release = alias.version.replace(/^v+/, '');
      const root = `${prefix}/bottlerocket/aws-k8s-${k8s}`;
      return [
        { path: `${root}/x86_64/${release}/image_id`, architecture: 'x86_64', variants: ['standard', 'neuron'] },
        { path: `${root}/arm64/${release}/image_id`, architecture: 'arm64', variants: ['standard'] },
        { path: `${root}-nvidia/x86_64/${release}/image_id`, architecture: 'x86_64', variants: ['nvidia'] },
        { path: `${root}-nvidia/arm64/${release}/image_id`, architecture: 'arm64', variants: ['nvidia'] },
      ];
    }
    case 'windows2019':
    case 'windows2022':
    case 'windows2025':
      // Only the Core edition, and only latest: Karpenter supports nothing else for Windows.
      return [
        {
          path: `${prefix}/ami-windows-latest/Windows_Server-${WINDOWS_YEAR[alias.family] ?? ''}-English-Core-EKS_Optimized-${k8s}/image_id`,
          architecture: 'x86_64',
          variants: ['standard'],
        },
      ];
    default:
      return assertNever(alias.family);
  }
}
