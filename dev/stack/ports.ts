import { createServer, type Server } from 'node:net';

/**
 * Reserves `count` distinct free TCP ports on 127.0.0.1. All listeners are held open
 * until every port is known, so the same port is never handed out twice; the window
 * between release and the component's bind is the usual, accepted race.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address === null || typeof address === 'string') reject(new Error('no TCP address'));
            else resolve(address.port);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** Named free ports: `const p = await freePortsFor(['api', 'etcd'])` → `p.api`, `p.etcd`. */
export async function freePortsFor<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const ports = await freePorts(names.length);
  return Object.fromEntries(names.map((name, i) => [name, ports[i]])) as Record<K, number>;
}
