// On a HostedCluster the enablement writes the cluster's userData into every EC2NodeClass; a
// class (re)applied without it is written again within seconds. A launch in between would
// start an instance that can never join: it waits instead (NodeClassReady=False, a Warning,
// a retryable failure), and launches once the userData is there. A cluster reached some
// other way (a plain kubeconfig: the admin owns userData) launches as before.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { type ClusterRef } from '../../../core/lifecycle';
import { anEC2NodeClass, type Doc } from '../api/builders';
import { anInstanceType } from '../instancetypes/builders';
import { RecordingCloud } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';

const hosted: ClusterRef = { name: 'c1', region: 'us-east-1', kubeconfigSecret: { namespace: 'clusters-c1', name: 'autonode-kubeconfig', key: 'kubeconfig' } };
const plain: ClusterRef = { name: 'c1', region: 'us-east-1' };
const CLASS = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/nc';

describe('a launch on a HostedCluster whose EC2NodeClass has no userData yet', () => {
  const run = <R>(activityType: string, body: () => Promise<R>) => new MockActivityEnvironment({ activityType }).run<[], R, () => Promise<R>>(body);
  let guest: FakeGuest;
  let cloud: RecordingCloud;
  const resolve = async () => ({ guest: guest.kube, cloud });

  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new RecordingCloud([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    guest.put(CLASS, { ...anEC2NodeClass(), metadata: { name: 'nc' } });
    // the claim as the provisioner writes it: one type, on-demand, the class by name
    guest.put('/apis/karpenter.sh/v1/nodeclaims/a-1', {
      apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim',
      metadata: { name: 'a-1', uid: 'u-1', labels: { 'karpenter.sh/nodepool': 'a' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        resources: { requests: { cpu: '1' } },
      },
    });
  });
  afterEach(async () => guest.close());

  const launch = async (cluster: ClusterRef) => {
    const lifecycle = createNodeClaimCloudActivities({ resolve });
    await run('reconcileNodeClass', () => lifecycle.reconcileNodeClass({ cluster, name: 'a-1' }));
    return run('launchClaimInstance', () => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }));
  };
  const conditions = () => ((guest.get('/apis/karpenter.sh/v1/nodeclaims/a-1')?.status as Doc | undefined)?.conditions ?? []) as { type: string; status: string; reason: string }[];

  it('waits (a retryable NodeClassNotReady, the reason on the claim), and launches once the userData is written', async () => {
    await expect(launch(hosted)).rejects.toMatchObject({ type: 'NodeClassNotReady', nonRetryable: false, message: expect.stringContaining('EC2NodeClass nc has no userData yet') });
    expect(cloud.requests).toHaveLength(0);
    expect(conditions()).toContainEqual(expect.objectContaining({ type: 'NodeClassReady', status: 'False', reason: 'UserDataMissing' }));

    guest.put(CLASS, { ...anEC2NodeClass({ userData: '{"ignition":{"version":"3.2.0"}}' }), metadata: { name: 'nc' } });
    await launch(hosted);
    expect(cloud.requests).toHaveLength(1);
  });

  it('on a cluster reached by a plain kubeconfig the admin owns userData: it launches as before', async () => {
    await launch(plain);
    expect(cloud.requests).toHaveLength(1);
  });
});
