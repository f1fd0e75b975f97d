import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeClientsFromConfig, type KubeClients } from '../../../activities/kube/clients';

/**
 * A few Kubernetes API paths answered by the test itself, behind the real client: what an
 * activity sends is what the client serializes, and what it reads back is what the client
 * deserializes (Dates for timestamps), which a hand-made V1Pod would not show.
 */
export interface ApiRequest {
  method: string;
  url: URL;
  body: unknown;
}

export interface ApiReply {
  status: number;
  body: unknown;
}

export const apiStatus = (code: number, reason: string, message = reason): ApiReply => ({
  status: code,
  body: { kind: 'Status', apiVersion: 'v1', status: code < 300 ? 'Success' : 'Failure', reason, code, message },
});

export interface FakeApiServer {
  kube: KubeClients;
  /** TCP connections the clients opened so far */
  connections(): number;
  close(): Promise<void>;
}

export async function startFakeApiServer(handle: (request: ApiRequest) => ApiReply): Promise<FakeApiServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const reply = handle({ method: req.method ?? 'GET', url: new URL(req.url ?? '/', 'http://fake'), body: text === '' ? undefined : JSON.parse(text) });
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  let connections = 0;
  server.on('connection', () => void connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return {
    kube: kubeClientsFromConfig(config),
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // the clients keep their connections open (clients.ts): close them rather than wait them out
        server.closeAllConnections();
      }),
  };
}
