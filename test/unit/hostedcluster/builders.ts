/**
 * HostedCluster manifests for tests: a valid AutoNode-enabled HostedCluster by default,
 * changed by a function that edits a copy (so a test can also delete fields).
 */

export interface HostedClusterManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; generation?: number; [key: string]: unknown };
  spec: {
    infraID?: unknown;
    release?: { image?: unknown };
    platform?: { type?: unknown; aws?: { region?: unknown; [key: string]: unknown }; [key: string]: unknown };
    autoNode?: {
      provisionerConfig?: {
        name?: unknown;
        karpenter?: { platform?: unknown; aws?: { roleARN?: unknown } };
      };
    };
    [key: string]: unknown;
  };
  status?: Record<string, unknown>;
}

export const DEFAULTS = {
  namespace: 'clusters',
  name: 'team-a',
  infraID: 'team-a-x7k2p',
  region: 'eu-west-1',
  roleARN: 'arn:aws:iam::210987654321:role/hypershift/autonode-team-a',
  releaseImage: 'quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64',
} as const;

export function aHostedCluster(change: (hc: HostedClusterManifest) => void = () => undefined): HostedClusterManifest {
  const hc: HostedClusterManifest = {
    apiVersion: 'hypershift.openshift.io/v1beta1',
    kind: 'HostedCluster',
    metadata: { name: DEFAULTS.name, namespace: DEFAULTS.namespace, generation: 3 },
    spec: {
      infraID: DEFAULTS.infraID,
      release: { image: DEFAULTS.releaseImage },
      platform: { type: 'AWS', aws: { region: DEFAULTS.region } },
      autoNode: { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN: DEFAULTS.roleARN } } } },
    },
  };
  change(hc);
  return hc;
}

/** Sets the role ARN (creating the path to it). */
export const withRoleArn = (roleARN: unknown) => (hc: HostedClusterManifest) => {
  hc.spec.autoNode = { provisionerConfig: { name: 'Karpenter', karpenter: { platform: 'AWS', aws: { roleARN } } } };
};
