/**
 * One more guest cluster beside a running stack: its own etcd, kube-apiserver (own PKI, so
 * its CAs, tokens and CSR signer are its own), controller-manager (signing on, approver
 * off), scheduler and kwok — the same components and flags as the stack's guest. For tests
 * that need two hosted clusters to be really apart (issue 13, test 2). Stops exactly what it
 * started, by pid, in reverse order.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinaries } from './binaries';
import { createClusterPki, kubeApiserver, writeIdentityKubeconfig } from './control-plane';
import { etcdProcess, guestNodeComponents, restartByName } from './launcher';
import { freePortsFor } from './ports';
import { type ManagedProcess } from './process';
import { type StackInfo } from './types';

export interface ExtraGuest {
  name: string;
  server: string;
  kubeconfigPath: string;
  /** stop one of its components (e.g. `kube-apiserver-<name>`) and start it again; resolves when ready, with the downtime */
  restart(component: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startExtraGuest(stack: StackInfo, o: { name: string; log?: (line: string) => void; env?: NodeJS.ProcessEnv }): Promise<ExtraGuest> {
  const log = o.log ?? (() => undefined);
  const binaries = resolveBinaries(o.env ?? process.env);
  const dir = join(stack.dir, 'extra');
  const logDir = join(stack.dir, 'logs');
  mkdirSync(join(dir, o.name), { recursive: true });
  const ports = await freePortsFor(['etcdClient', 'etcdPeer', 'api', 'scheduler', 'controllerManager', 'kwok']);
  const started: ManagedProcess[] = [];
  const stop = async () => {
    for (const p of [...started].reverse()) await p.stop();
  };
  const onExit = () => {
    for (const p of started) p.killNow();
  };
  process.once('exit', onExit);
  const run = async (p: ManagedProcess) => {
    const t0 = Date.now();
    started.push(p);
    await p.start();
    log(`${p.spec.name} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  };
  try {
    await run(etcdProcess(binaries, dir, logDir, ports, `etcd-${o.name}`));
    const pki = await createClusterPki(join(dir, o.name, 'pki'));
    const server = `https://127.0.0.1:${ports.api}`;
    await run(kubeApiserver({ name: `kube-apiserver-${o.name}`, binary: binaries.kubeApiserver, pki, port: ports.api, etcdUrl: `http://127.0.0.1:${ports.etcdClient}`, etcdPrefix: `/${o.name}`, logDir }));
    const kubeconfigPath = await writeIdentityKubeconfig({ pki, server, clusterName: o.name, user: 'admin', groups: ['system:masters'], path: join(dir, o.name, 'admin.kubeconfig') });
    const components = await guestNodeComponents({ binaries, dir, logDir, ports, pki, server, adminKubeconfig: kubeconfigPath, name: o.name });
    await Promise.all(components.map(run));
    return {
      name: o.name,
      server,
      kubeconfigPath,
      restart: (component) => restartByName(started, component),
      stop: async () => {
        process.removeListener('exit', onExit);
        await stop();
      },
    };
  } catch (err) {
    await stop();
    process.removeListener('exit', onExit);
    throw err;
  }
}
