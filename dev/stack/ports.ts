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

/**
 * Like `freePortsFor`, but every port within [from, to]: the kernel's own choice is an
 * ephemeral port (32768 and up on Linux), and some servers store ports in a signed 16-bit
 * column (Temporal's cluster_membership.rpc_port on PostgreSQL is a smallint). Random ports
 * in the range are tried until enough bind; all are held until every one is known.
 */
export async function freePortsInRange<K extends string>(names: readonly K[], range: { from: number; to: number }): Promise<Record<K, number>> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let attempt = 0; ports.length < names.length; attempt++) {
      if (attempt > names.length * 50) throw new Error(`no ${names.length} free ports between ${range.from} and ${range.to}`);
      const port = range.from + Math.floor(Math.random() * (range.to - range.from + 1));
      if (ports.includes(port)) continue;
      const server = createServer();
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!bound) continue;
      held.push(server);
      ports.push(port);
    }
    return Object.fromEntries(names.map((name, i) => [name, ports[i]])) as Record<K, number>;
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
