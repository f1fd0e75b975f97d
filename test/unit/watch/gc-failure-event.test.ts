// The GarbageCollectionFailed Warning Event as the guest receives it, through the real
// Kubernetes client, and why a retried activity does not write a second one.
import { GC_FAILED_REASON, createGcFailureEventActivities } from '../../../activities/watch/gc-failure-event';
import { apiStatus, startFakeApiServer, type ApiReply, type ApiRequest, type FakeApiServer } from '../kube/fake-api-server';

/** core/v1 Events in one namespace: create (409 on a taken name), read, replace. */
class FakeEventApi {
  readonly events = new Map<string, Record<string, unknown>>();

  handle({ method, url, body }: ApiRequest): ApiReply {
    const match = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/events(?:\/([^/]+))?$/);
    if (!match) return apiStatus(404, 'NotFound');
    const [, namespace, name] = match;
    const key = (n: string) => `${namespace}/${n}`;
    const asEvent = (value: unknown): Record<string, unknown> & { metadata: { name: string } } => {
      if (typeof value !== 'object' || value === null || !('metadata' in value)) throw new Error('not an Event');
      return value as Record<string, unknown> & { metadata: { name: string } };
    };
    if (method === 'POST' && name === undefined) {
      const event = asEvent(body);
      if (this.events.has(key(event.metadata.name))) return apiStatus(409, 'AlreadyExists');
      this.events.set(key(event.metadata.name), event);
      return { status: 201, body: event };
    }
    if (name === undefined) return apiStatus(405, 'MethodNotAllowed');
    const existing = this.events.get(key(name));
    if (!existing) return apiStatus(404, 'NotFound');
    if (method === 'GET') return { status: 200, body: existing };
    if (method === 'PUT') {
      this.events.set(key(name), asEvent(body));
      return { status: 200, body };
    }
    return apiStatus(405, 'MethodNotAllowed');
  }
}

describe('recordGcFailure', () => {
  const cluster = { name: 'team-a', region: 'us-east-1' };
  const now = () => new Date('2026-11-24T10:00:00Z');
  let api: FakeEventApi;
  let server: FakeApiServer;
  beforeEach(async () => {
    api = new FakeEventApi();
    server = await startFakeApiServer((request) => api.handle(request));
  });
  afterEach(async () => {
    await server.close();
  });
  const activities = () => createGcFailureEventActivities({ guestFor: async () => server.kube, now });

  it('writes a Warning Event on the default Namespace that names the cluster and the cause', async () => {
    await activities().recordGcFailure(cluster, { message: 'not authorized to perform ec2:DescribeInstances' });
    expect([...api.events.keys()]).toHaveLength(1);
    const [event] = [...api.events.values()];
    expect(event).toMatchObject({
      metadata: { namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'Namespace', name: 'default' },
      type: 'Warning',
      reason: GC_FAILED_REASON,
      source: { component: 'karpenter' },
      count: 1,
    });
    expect(event?.message).toMatch(/^Collecting leaked instances of cluster team-a failed: not authorized to perform ec2:DescribeInstances\. /);
    expect(event?.message).toMatch(/status query/);
  });

  it('counts a retried activity on the same Event instead of writing a second one', async () => {
    await activities().recordGcFailure(cluster, { message: 'InternalError' });
    await activities().recordGcFailure(cluster, { message: 'InternalError' });
    expect([...api.events.values()].map((e) => e.count)).toEqual([2]);
  });

  it('cuts a very long cause (the status query keeps it whole)', async () => {
    await activities().recordGcFailure(cluster, { message: 'x'.repeat(5_000) });
    const [event] = [...api.events.values()];
    expect(String(event?.message).length).toBeLessThan(1_024);
    expect(event?.message).toContain('x'.repeat(600) + '…');
  });
});
