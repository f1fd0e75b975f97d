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
    expect(found?.name).toBe('ip-10-0-0-1.ec2.internal');
    expect(lists()).toBe(0);
  });

  it('a Node under another name is found by the list, which the polls of the next seconds share', async () => {
    guest.put('/api/v1/nodes/custom-name', node('custom-name', 'aws:///us-east-1a/i-2'));
    const stores = [new NodeStore(guest.kube), new NodeStore(guest.kube), new NodeStore(guest.kube)];
    const found = await Promise.all(stores.map((s, i) => s.findRegistered(i === 0 ? 'aws:///us-east-1a/i-2' : `aws:///us-east-1a/i-${9 + i}`, `ip-10-0-0-${9 + i}.ec2.internal`)));
    expect(found.map((f) => f?.name)).toEqual(['custom-name', undefined, undefined]);
    expect(lists()).toBe(1);
    // a Node under its expected name is still seen at once, whatever the shared list says
    guest.put('/api/v1/nodes/ip-10-0-0-10.ec2.internal', node('ip-10-0-0-10.ec2.internal', 'aws:///us-east-1a/i-10'));
    expect((await stores[1]!.findRegistered('aws:///us-east-1a/i-10', 'ip-10-0-0-10.ec2.internal'))?.name).toBe('ip-10-0-0-10.ec2.internal');
    expect(lists()).toBe(1);
  });
});
