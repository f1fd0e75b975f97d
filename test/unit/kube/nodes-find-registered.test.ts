// Registration's Node look-up: by the expected name first, and a Node list shared by the
// claims that poll at once — the fake guest records each request the real client sends.
import { NodeStore } from '../../../activities/kube/nodes';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';

describe('NodeStore.findRegistered', () => {
  let guest: FakeGuest;
  beforeEach(async () => {
    guest = await startFakeGuest();
  });
  afterEach(async () => guest.close());

  const node = (name: string, providerID: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } });
  const lists = () => guest.requests.filter((r) => r.method === 'GET' && r.url.pathname === '/api/v1/nodes').length;

  it('a Node under the expected name with the instance’s providerID is read directly, no list', async () => {
    guest.put('/api/v1/nodes/ip-10-0-0-1.ec2.internal', node('ip-10-0-0-1.ec2.internal', 'aws:///us-east-1a/i-1'));
    const found = await new NodeStore(guest.kube).findRegistered('aws:///us-east-1a/i-1', 'ip-10-0-0-1.ec2.internal');
    expect(found.node?.name).toBe('ip-10-0-0-1.ec2.internal');
    expect(lists()).toBe(0);
  });

  it('a Node under another name is found by the list, which the polls of the next seconds share', async () => {
    guest.put('/api/v1/nodes/custom-name', node('custom-name', 'aws:///us-east-1a/i-2'));
    const stores = [new NodeStore(guest.kube), new NodeStore(guest.kube), new NodeStore(guest.kube)];
    const found = await Promise.all(stores.map((s, i) => s.findRegistered(i === 0 ? 'aws:///us-east-1a/i-2' : `aws:///us-east-1a/i-${9 + i}`, `ip-10-0-0-${9 + i}.ec2.internal`)));
    expect(found.map((f) => f.node?.name)).toEqual(['custom-name', undefined, undefined]);
    expect(lists()).toBe(1);
    // a Node under its expected name is still seen at once, whatever the shared list says
    guest.put('/api/v1/nodes/ip-10-0-0-10.ec2.internal', node('ip-10-0-0-10.ec2.internal', 'aws:///us-east-1a/i-10'));
    expect((await stores[1]!.findRegistered('aws:///us-east-1a/i-10', 'ip-10-0-0-10.ec2.internal')).node?.name).toBe('ip-10-0-0-10.ec2.internal');
    expect(lists()).toBe(1);
  });

  it('the final clean-up’s look-up by providerID lists now, whatever a registration poll listed a moment ago', async () => {
    const store = new NodeStore(guest.kube);
    expect((await store.findRegistered('aws:///us-east-1a/i-4', 'ip-10-0-0-4.ec2.internal')).node).toBeUndefined();
    expect(lists()).toBe(1);
    // the kubelet registers under a name of its own just after
    guest.put('/api/v1/nodes/late-name', node('late-name', 'aws:///us-east-1a/i-4'));
    expect((await store.findByProviderId('aws:///us-east-1a/i-4'))?.name).toBe('late-name');
    expect(lists()).toBe(2);
    // and that fresh list is shared with the registration polls that follow
    expect((await new NodeStore(guest.kube).findRegistered('aws:///us-east-1a/i-4', 'ip-10-0-0-4.ec2.internal')).node?.name).toBe('late-name');
    expect(lists()).toBe(2);
  });

  it('a Node under the expected name that is another machine’s is given back as `named`, not as registered', async () => {
    guest.put('/api/v1/nodes/ip-10-0-0-3.ec2.internal', node('ip-10-0-0-3.ec2.internal', 'aws:///us-east-1a/i-old'));
    const found = await new NodeStore(guest.kube).findRegistered('aws:///us-east-1a/i-3', 'ip-10-0-0-3.ec2.internal');
    expect(found.node).toBeUndefined();
    expect(found.named?.providerID).toBe('aws:///us-east-1a/i-old');
  });
});

describe('NodeStore.syncRegistered', () => {
  let guest: FakeGuest;
  beforeEach(async () => {
    guest = await startFakeGuest();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await guest.close();
  });

  it('a Node the kubelet updated between the read and the replace is read again and synced, not failed', async () => {
    const path = '/api/v1/nodes/ip-10-0-0-1.ec2.internal';
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-0-1.ec2.internal', labels: { 'kubernetes.io/os': 'linux' } }, spec: { providerID: 'aws:///us-east-1a/i-1', taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] } };
    guest.put(path, node);
    const core = guest.kube.core;
    const read = core.readNode.bind(core);
    // the first read is overtaken by a kubelet's own update (a new resourceVersion)
    jest.spyOn(core, 'readNode').mockImplementationOnce(async (param) => {
      const seen = await read(param);
      guest.put(path, { ...node, metadata: { ...node.metadata, annotations: { 'kubelet.example/heartbeat': '1' } } });
      return seen;
    });
    const claim = { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'a-1', uid: 'uid-a-1', labels: { 'karpenter.sh/nodepool': 'a' } }, spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' }, requirements: [] } };
    const synced = await new NodeStore(guest.kube).syncRegistered(claim as never, 'ip-10-0-0-1.ec2.internal');
    expect(synced.taints).toEqual([]);
    const stored = guest.get(path)!.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
    expect(stored.labels).toEqual(expect.objectContaining({ 'karpenter.sh/registered': 'true', 'karpenter.sh/nodepool': 'a' }));
    // the kubelet's update is kept
    expect(stored.annotations).toEqual({ 'kubelet.example/heartbeat': '1' });
  });
});
