// The guest clients keep their connections: client-node 1.x gives each request an agent of
// its own (a new TCP connection and TLS session every time, ~4.5 ms of CPU each here).
import { ApiException, PolicyV1Api } from '@kubernetes/client-node';
import { apiStatus as apiStatusOf } from '../../../activities/kube/errors';
import { apiStatus, startFakeApiServer, type FakeApiServer } from './fake-api-server';

describe('kube clients: kept connections', () => {
  let api: FakeApiServer;
  let seen: URL[];
  beforeEach(async () => {
    seen = [];
    api = await startFakeApiServer((request) => {
      seen.push(request.url);
      return request.url.pathname.endsWith('/nodes') || request.url.pathname.endsWith('/poddisruptionbudgets')
        ? { status: 200, body: { kind: 'List', apiVersion: 'v1', metadata: {}, items: [] } }
        : apiStatus(404, 'NotFound');
    });
  });
  afterEach(async () => api.close());

  it('sequential requests, of every API group made from the clients, share one connection', async () => {
    for (let i = 0; i < 5; i++) await api.kube.core.listNode();
    for (let i = 0; i < 3; i++) await api.kube.make(PolicyV1Api).listPodDisruptionBudgetForAllNamespaces();
    expect(api.connections()).toBe(1);
  });

  it('getJson reads a list as the API server sent it, on the same kept connection, and fails as the typed clients do', async () => {
    await api.kube.core.listNode();
    const list = await api.kube.getJson('/api/v1/nodes', { labelSelector: 'a=b' });
    // plain JSON: no model classes, timestamps stay strings
    expect(list).toEqual({ kind: 'List', apiVersion: 'v1', metadata: {}, items: [] });
    expect(seen.at(-1)?.search).toBe('?labelSelector=a%3Db');
    const failure = await api.kube.getJson('/api/v1/pods').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiException);
    expect(apiStatusOf(failure)).toBe(404);
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
