/**
 * AMIs as node class resolution reports them, read with DescribeImages, and the choice of
 * the one to launch for each architecture.
 */
import { DescribeImagesCommand, type Filter } from '@aws-sdk/client-ec2';
import { type AmiVariant } from './ami-alias';
import { type Architecture, type ImagesByArchitecture } from './domain';
import { call, type Ec2Context } from './context';
import { DescribeImagesOutputSchema } from './ec2-schemas';

export interface ResolvedAmi {
  id: string;
  name: string;
  architecture: string;
  creationDate: string;
  deprecated: boolean;
  /** only for AMIs found through an alias: which instances the EKS image is built for */
  variants?: readonly AmiVariant[];
}

export interface AmiQuery {
  filters: Filter[];
  owners?: string[];
}

/** Port for AMI term resolution: DescribeImages over a query. */
export type DescribeAmis = (query: AmiQuery) => Promise<ResolvedAmi[]>;

export async function describeImages(ctx: Ec2Context, query: AmiQuery, now: Date): Promise<ResolvedAmi[]> {
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

const servesStandardInstances = (ami: ResolvedAmi): boolean => ami.variants === undefined || ami.variants.includes('standard');

/**
 * The AMI to launch for an architecture (EC2 naming: x86_64, arm64). An alias also resolves
 * the NVIDIA and Neuron images; a plain instance must not get one of those just because it
 * was published later, so images built for standard instances come first.
 */
export function pickAmi(amis: readonly ResolvedAmi[], architecture: string): ResolvedAmi | undefined {
  const candidates = sortAmis(amis).filter((a) => a.architecture === architecture);
  return candidates.find(servesStandardInstances) ?? candidates[0];
}

/** EC2 names architectures differently from Kubernetes (an image's `Architecture` field). */
export const EC2_ARCHITECTURE: Readonly<Record<Architecture, string>> = { amd64: 'x86_64', arm64: 'arm64' };

/**
 * pickAmi's choice for each of `architectures` that has one: what a launch needs when a
 * NodeClaim's instance types span architectures (one launch template per image).
 */
export function imagesByArchitecture(amis: readonly ResolvedAmi[], architectures: readonly Architecture[]): ImagesByArchitecture {
  const images: ImagesByArchitecture = {};
  for (const architecture of architectures) {
    const ami = pickAmi(amis, EC2_ARCHITECTURE[architecture]);
    if (ami) images[architecture] = ami.id;
  }
  return images;
}
