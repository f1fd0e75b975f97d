// What the lifecycle's activity tests against the fake guest share: a cluster, the default
// CSR policy, one launched instance, and a NodeClaim `a-1` of pool `a` to seed.
import { CsrPolicySchema, type LaunchedInstance } from '../../../core/lifecycle';
import { type ClusterResolver } from '../../../activities/cluster';
import { RecordingCloud } from '../metrics/fake-cloud';
import { type FakeGuest } from '../metrics/fake-guest';

export const cluster = { name: 'c1', region: 'us-east-1' };
export const policy = CsrPolicySchema.parse({});
export const instance: LaunchedInstance = {
  providerId: 'aws:///us-east-1a/i-new',
  instanceId: 'i-new',
  instanceType: 'm5.large',
  zone: 'us-east-1a',
  capacityType: 'on-demand',
  imageId: 'ami-1',
  privateDnsName: 'ip-10-0-0-4.ec2.internal',
  privateIpAddresses: ['10.0.0.4'],
  launchTime: '2026-11-27T00:00:00Z',
};

export function putClaim(guest: FakeGuest): void {
  guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'a-1', uid: 'u-1', labels: { 'karpenter.sh/nodepool': 'a' } }, spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' }, requirements: [] } });
}

/** The cluster resolver of a test: the fake guest, and a cloud the kube activities never call. */
export function resolverFor(guest: FakeGuest): ClusterResolver {
  const cloud = new RecordingCloud();
  return async () => ({ guest: guest.kube, cloud });
}
