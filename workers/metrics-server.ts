import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type Registry } from 'prom-client';

/** Whether the process should get work: its Temporal workers are polling. */
export interface Readiness {
  ready: boolean;
  /** one line per worker, e.g. `autonode-control RUNNING` */
  detail: string;
}

export interface MetricsServerOptions {
  registry: Registry;
  readiness: () => Readiness;
  /** 0 picks a free port (tests) */
  port: number;
  host?: string;
}

export interface MetricsServer {
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

/**
 * The worker's HTTP endpoint (node:http, nothing else listens in the process):
 * - `/metrics`: the registry in Prometheus' text format;
 * - `/healthz`: liveness — the process answers, so it is up (a restart would not help a
 *   worker that cannot reach Temporal: that is readiness);
 * - `/readyz`: readiness — 200 while every worker is RUNNING, 503 with each worker's state
 *   otherwise (starting, draining on SIGTERM, failed).
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void answer(req, res, options).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`metrics: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // a scraper's keep-alive connection must not hold the shutdown
        server.closeIdleConnections();
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, options: MetricsServerOptions): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://worker').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('method not allowed\n');
    return;
  }
  switch (path) {
    case '/metrics': {
      const body = await options.registry.metrics();
      res.writeHead(200, { 'content-type': options.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    case '/healthz':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok\n');
      return;
    case '/readyz': {
      const { ready, detail } = options.readiness();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${detail}\n`);
      return;
    }
    default:
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('not found: try /metrics, /healthz or /readyz\n');
  }
}
