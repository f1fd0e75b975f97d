import { EC2Client } from '@aws-sdk/client-ec2';
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { managementSecretResolver } from '../../../activities/cluster';
import { SecretTokenSource, kubeClientsFollowingToken, parseSecretKubeconfig } from '../../../activities/kube/secret-kubeconfig';
import { startFakeApiServer, type FakeApiServer } from './fake-api-server';

/** A guest API server that knows some tokens: what it saw, and 401 for any other. */
async function aGuest(valid: Set<string>) {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    seen.push(token);
    if (!valid.has(token)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/version') res.end(JSON.stringify({ major: '1', minor: '34', gitVersion: 'v1.34.0' }));
    else res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // the clients keep connections open (activities/kube/clients.ts)
        server.closeAllConnections();
      }),
  };
}

function kubeconfigText(server: string, token: string): string {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'guest', server, skipTLSVerify: true }],
    users: [{ name: 'autonode', token }],
    contexts: [{ name: 'autonode', cluster: 'guest', user: 'autonode' }],
    currentContext: 'autonode',
  });
  return config.exportConfig();
}

describe('guest clients that follow the token in their Secret', () => {
  let guest: Awaited<ReturnType<typeof aGuest>>;
  const valid = new Set<string>();
  let secret: string;
  let reads: number;
  let now: number;
  const read = async () => {
    reads++;
    return parseSecretKubeconfig(secret, 'test Secret');
  };
  beforeEach(async () => {
    valid.clear();
    valid.add('token-a');
    guest = await aGuest(valid);
    secret = kubeconfigText(guest.url, 'token-a');
    reads = 0;
    now = 0;
  });
  afterEach(async () => guest.close());
  const clientsFor = () => {
    const source = new SecretTokenSource({ read, initial: parseSecretKubeconfig(secret, 'test Secret'), maxAgeMs: 60_000, now: () => now });
    return { source, clients: kubeClientsFollowingToken(parseSecretKubeconfig(secret, 'test Secret'), source) };
  };

  it('re-reads the Secret once its last read is older than the maximum age, and then sends the renewed token', async () => {
    const { clients } = clientsFor();
    await clients.core.readNamespace({ name: 'kube-system' });
    // the enablement renews at half-life: both tokens are valid for a while
    secret = kubeconfigText(guest.url, 'token-b');
    valid.add('token-b');
    now = 30_000;
    await clients.core.readNamespace({ name: 'kube-system' });
    expect(reads).toBe(0);
    now = 61_000;
    await clients.core.readNamespace({ name: 'kube-system' });
    expect(reads).toBe(1);
    expect(guest.seen).toEqual(['token-a', 'token-a', 'token-b']);
  });

  it('after a 401, re-reads the Secret before the next request, even within the maximum age', async () => {
    const { clients } = clientsFor();
    secret = kubeconfigText(guest.url, 'token-b');
    valid.clear();
    valid.add('token-b');
    await expect(clients.core.readNamespace({ name: 'kube-system' })).rejects.toThrow(/401/);
    await clients.core.readNamespace({ name: 'kube-system' });
    expect(reads).toBe(1);
    expect(guest.seen).toEqual(['token-a', 'token-b']);
  });

  it('watches send the current token too', async () => {
    const { clients } = clientsFor();
    secret = kubeconfigText(guest.url, 'token-b');
    now = 61_000;
    const options = await clients.config.applyToFetchOptions({});
    expect(new Headers(options.headers as Record<string, string>).get('authorization')).toBe('Bearer token-b');
  });

  it('keeps the current token when a re-read by age fails, and fails the request when a re-read after a 401 does', async () => {
    const failures: unknown[] = [];
    let broken = false;
    const source = new SecretTokenSource({
      read: async () => {
        if (broken) throw new Error('management API unreachable');
        return read();
      },
      initial: parseSecretKubeconfig(secret, 'test Secret'),
      maxAgeMs: 60_000,
      now: () => now,
      onStaleReadFailed: (e) => failures.push(e),
    });
    broken = true;
    now = 61_000;
    expect(await source.token()).toBe('token-a');
    expect(failures).toHaveLength(1);
    source.unauthorized();
    await expect(source.token()).rejects.toThrow('management API unreachable');
    broken = false;
    secret = kubeconfigText(guest.url, 'token-c');
    expect(await source.token()).toBe('token-c');
  });
});

describe('managementSecretResolver', () => {
  let management: FakeApiServer;
  let guest: Awaited<ReturnType<typeof aGuest>>;
  let other: Awaited<ReturnType<typeof aGuest>>;
  let secretText: string;
  let secretReads = 0;
  let now = 0;
  const valid = new Set(['token-a']);
  const cluster = { name: 'dev', region: 'us-east-1', kubeconfigSecret: { namespace: 'clusters', name: 'dev-autonode-kubeconfig', key: 'kubeconfig' } };
  beforeAll(async () => {
    guest = await aGuest(valid);
    other = await aGuest(new Set(['token-x']));
    secretText = kubeconfigText(guest.url, 'token-a');
    management = await startFakeApiServer((request) => {
      if (request.url.pathname !== '/api/v1/namespaces/clusters/secrets/dev-autonode-kubeconfig') return { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } };
      secretReads++;
      return { status: 200, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dev-autonode-kubeconfig', namespace: 'clusters' }, data: { kubeconfig: Buffer.from(secretText).toString('base64') } } };
    });
  });
  afterAll(async () => {
    await management.close();
    await guest.close();
    await other.close();
  });

  it('keeps one set of clients while the Secret names the same cluster, following its token; new clients when it names another', async () => {
    const ec2 = new EC2Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const resolve = managementSecretResolver({ management: management.kube, ec2ClientFor: () => ec2, tokenMaxAgeMs: 60_000, now: () => now });
    const first = await resolve(cluster);
    await first.guest.core.readNamespace({ name: 'kube-system' });
    expect(secretReads).toBe(1);

    // renewed: the same clients carry the new token after the age check
    secretText = kubeconfigText(guest.url, 'token-b');
    valid.add('token-b');
    now = 61_000;
    const again = await resolve(cluster);
    expect(again).toBe(first);
    await again.guest.core.readNamespace({ name: 'kube-system' });
    expect(guest.seen.at(-1)).toBe('token-b');

    // the Secret now names another API server: new clients for it
    secretText = kubeconfigText(other.url, 'token-x');
    now = 122_000;
    const moved = await resolve(cluster);
    expect(moved).not.toBe(first);
    await moved.guest.core.readNamespace({ name: 'kube-system' });
    expect(other.seen.at(-1)).toBe('token-x');
    ec2.destroy();
  });
});
