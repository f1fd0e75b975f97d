// Every API request has a deadline (watches excepted): a server that never answers fails
// the call, so the activity is retried instead of hanging until its own timeout.
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { kubeClientsFromConfig } from '../../../activities/kube/clients';

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    // /api/v1/nodes answers; everything else is accepted and never answered
    if (req.url?.startsWith('/api/v1/nodes')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NodeList', metadata: {}, items: [{ metadata: { name: 'n1' } }] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const clients = (requestTimeoutMs: number) => {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u', token: 'x' }], contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }], currentContext: 'ctx' });
  return kubeClientsFromConfig(kc, { requestTimeoutMs });
};

it('a request the server never answers fails at the deadline', async () => {
  const started = Date.now();
  await expect(clients(300).core.listNamespacedPod({ namespace: 'default' })).rejects.toThrow(/abort/i);
  expect(Date.now() - started).toBeLessThan(5_000);
});

it('an answered request is unaffected (same server, auth and parsing as makeApiClient)', async () => {
  const nodes = await clients(300).core.listNode();
  expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['n1']);
});
