import { z } from 'zod';

/**
 * The node image a release names, per architecture and region, from its CoreOS stream
 * metadata (the `coreos-bootimages` ConfigMap of an OpenShift release payload:
 * `architectures.<arch>.images.aws.regions.<region>.image`). On a management cluster the
 * enablement reads it from a ConfigMap labelled `autonode.io/release-metadata=true` whose
 * `releaseImage` is the HostedCluster's `spec.release.image`.
 */
export const RELEASE_METADATA_LABEL = 'autonode.io/release-metadata';

const StreamSchema = z.object({
  architectures: z.record(
    z.string(),
    z.object({ images: z.object({ aws: z.object({ regions: z.record(z.string(), z.object({ image: z.string().regex(/^ami-[0-9a-z]+$/) })) }).optional() }).optional() }),
  ),
});

/** CoreOS architecture names → Kubernetes' (`kubernetes.io/arch`) */
const ARCH: Record<string, 'amd64' | 'arm64'> = { x86_64: 'amd64', aarch64: 'arm64' };

export type ReleaseImages = Partial<Record<'amd64' | 'arm64', string>>;

export function releaseImagesFor(streamJson: string, region: string): { ok: true; images: ReleaseImages } | { ok: false; reason: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(streamJson);
  } catch (err) {
    return { ok: false, reason: `the release's stream metadata is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const stream = StreamSchema.safeParse(parsed);
  if (!stream.success) return { ok: false, reason: `the release's stream metadata is not CoreOS stream JSON: ${stream.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
  const images: ReleaseImages = {};
  for (const [arch, entry] of Object.entries(stream.data.architectures)) {
    const kube = ARCH[arch];
    const ami = entry.images?.aws?.regions[region]?.image;
    if (kube && ami) images[kube] = ami;
  }
  if (Object.keys(images).length === 0) return { ok: false, reason: `the release names no AWS image for region ${region}` };
  return { ok: true, images };
}
