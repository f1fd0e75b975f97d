// A kubelet that finds a Node of its name already there adopts it (kubelet does not compare
// providerIDs), so an instance whose address an earlier machine had never shows up under its
// own providerID. reviewRegistration says so on the claim (a Warning Event, and the reason the
// lifecycle reports) instead of letting the registration time out in silence.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimKubeActivities } from '../../../activities/nodeclaim/kube';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { cluster, instance, policy, putClaim, resolverFor } from './support';

const aNode = (providerID?: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: instance.privateDnsName, labels: {} }, spec: providerID ? { providerID } : {}, status: {} });

type Result = Awaited<ReturnType<ReturnType<typeof createNodeClaimKubeActivities>['reviewRegistration']>>;

describe('reviewRegistration: a Node of the instance\'s name that is not the instance\'s', () => {
  let guest: FakeGuest;
  const review = () => {
    const kube = createNodeClaimKubeActivities({ resolve: resolverFor(guest), reviewNodeCsrs: async () => ({ approved: [], denied: [], failed: [] }) });
    return new MockActivityEnvironment({ activityType: 'reviewRegistration', workflowType: 'nodeClaimWorkflow' }).run<[], Result, () => Promise<Result>>(() => kube.reviewRegistration({ cluster, name: 'a-1', instance, policy }));
  };
  const warnings = () => guest.requests.filter((r) => r.method === 'POST' && /events$/.test(r.url.pathname)).map((r) => r.body as { type: string; reason: string; message: string; involvedObject: { name: string } });

  beforeEach(async () => {
    guest = await startFakeGuest();
    putClaim(guest);
  });
  afterEach(async () => guest.close());

  it('names the Node, whose machine it belongs to, and what to do; the claim gets a Warning', async () => {
    guest.put(`/api/v1/nodes/${instance.privateDnsName}`, aNode('aws:///us-east-1b/i-old'));
    const result = await review();
    expect(result.registered).toBe(false);
    expect(result.blocker).toMatch(/^Node ip-10-0-0-4\.ec2\.internal already exists for aws:\/\/\/us-east-1b\/i-old, not for this claim's instance aws:\/\/\/us-east-1a\/i-new/);
    expect(result.blocker).toMatch(/If that machine is gone, delete Node ip-10-0-0-4\.ec2\.internal/);
    expect(warnings()).toEqual([expect.objectContaining({ type: 'Warning', reason: 'NodeNameTaken', message: result.blocker, involvedObject: expect.objectContaining({ name: 'a-1' }) })]);
  });

  it('says nothing while no such Node exists, or while the Node has no providerID yet (a cloud controller may set it later)', async () => {
    expect(await review()).toEqual({ registered: false, denied: [] });
    guest.put(`/api/v1/nodes/${instance.privateDnsName}`, aNode());
    expect(await review()).toEqual({ registered: false, denied: [] });
    expect(warnings()).toEqual([]);
  });
});
