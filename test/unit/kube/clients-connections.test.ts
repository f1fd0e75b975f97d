// The guest clients keep their connections: client-node 1.x gives each request an agent of
// its own (a new TCP connection and TLS session every time, ~4.5 ms of CPU each here).
import { PolicyV1Api } from '@kubernetes/client-node';
import { apiStatus, startFakeApiServer, type FakeApiServer } from './fake-api-server';

describe('kube clients: kept connections', () => {
  let api: FakeApiServer;
  beforeEach(async () => {
    api = await startFakeApiServer((request) =>
      request.url.pathname.endsWith('/nodes') || request.url.pathname.endsWith('/poddisruptionbudgets')
        ? { status: 200, body: { kind: 'List', apiVersion: 'v1', metadata: {}, items: [] } }
        : apiStatus(404, 'NotFound'),
    );
  });
  afterEach(async () => api.close());

  it('sequential requests, of every API group made from the clients, share one connection', async () => {
    for (let i = 0; i < 5; i++) await api.kube.core.listNode();
    for (let i = 0; i < 3; i++) await api.kube.make(PolicyV1Api).listPodDisruptionBudgetForAllNamespaces();
    expect(api.connections()).toBe(1);
  });

  it('concurrent requests open what they need and reuse it afterwards', async () => {
    await Promise.all([0, 1, 2].map(() => api.kube.core.listNode()));
    const opened = api.connections();
    expect(opened).toBeLessThanOrEqual(3);
    await Promise.all([0, 1, 2].map(() => api.kube.core.listNode()));
    expect(api.connections()).toBe(opened);
  });
});
