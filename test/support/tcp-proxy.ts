/**
 * A TCP proxy for tests that must catch a process between two of its requests: it adds
 * latency to every byte in both directions (order kept), and can freeze — after which
 * nothing more is forwarded either way. TLS passes through untouched (the client still
 * verifies the real server's certificate: the proxy listens on the same loopback address).
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>` */
  address: string;
  port: number;
  /** delay added to each chunk, each way */
  setLatency(ms: number): void;
  /** forward nothing more, either way, on any connection; new connections are held */
  freeze(): void;
  readonly frozen: boolean;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, options: { latencyMs?: number } = {}): Promise<TcpProxy> {
  let latency = options.latencyMs ?? 0;
  let frozen = false;
  const sockets = new Set<Socket>();
  // One FIFO per direction, drained in order: separate timers could fire out of order
  // (an end before the last bytes, which the client reads as a hang-up).
  const relay = (from: Socket, to: Socket) => {
    const queue: { at: number; chunk?: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      while (queue.length > 0 && !frozen) {
        const next = queue[0];
        if (next === undefined) break;
        const wait = next.at - Date.now();
        if (wait > 0) {
          timer = setTimeout(pump, wait);
          return;
        }
        queue.shift();
        if (to.destroyed) continue;
        if (next.chunk) to.write(next.chunk);
        else to.end();
      }
    };
    const push = (chunk?: Buffer) => {
      if (frozen) return;
      queue.push({ at: Date.now() + latency, ...(chunk ? { chunk } : {}) });
      if (timer === undefined) pump();
    };
    from.on('data', (chunk: Buffer) => push(chunk));
    // end (not destroy) after the delayed bytes: destroy would drop what is still buffered
    from.on('end', () => push());
    from.on('close', () => push());
    from.on('error', () => to.destroy());
  };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (frozen) return; // held: never connected upstream
    const upstream = connect(target.port, target.host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the TCP proxy has no port');
  return {
    address: `127.0.0.1:${address.port}`,
    port: address.port,
    setLatency: (ms) => void (latency = ms),
    freeze: () => void (frozen = true),
    get frozen() {
      return frozen;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
