import { BOOTSTRAP_KUBECONFIG_PATH, KUBELET_DROP_IN_PATH, NODE_SIZING_PATH, bootFromIgnition, dataUrl, nodeIgnition, readDataUrl, withKubeletConfig } from '../../../core/enablement/ignition';
import { catalogInstanceTypes, type NodeBootstrap } from '../../../core/instancetypes';
import { nodeShapes, planBoot } from '../../../dev/simkubelet';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const credentials = { server: 'https://127.0.0.1:6443', caPem: CA, token: 'eyJhbGciOi.payload.sig' };
const tuned: NodeBootstrap = { amiFamily: 'Custom', kubelet: { maxPods: 110, systemReserved: { cpu: '600m', memory: '1536Mi' }, evictionHard: { 'memory.available': '200Mi' } } };

describe('the node Ignition config', () => {
  it('carries the bootstrap kubeconfig a node joins with', () => {
    const booted = bootFromIgnition(nodeIgnition(credentials));
    expect(booted).toEqual({ ok: true, node: { credentials, kubelet: {} } });
  });

  it('gets the class’s kubelet settings and sizing profile at launch, and boots with them', () => {
    const launched = withKubeletConfig(nodeIgnition(credentials), { ...tuned, kubeletProfile: 'openshift-autosize' });
    expect(bootFromIgnition(launched)).toEqual({ ok: true, node: { credentials, kubelet: tuned.kubelet, kubeletProfile: 'openshift-autosize' } });
    const paths = (JSON.parse(launched) as { storage: { files: { path: string }[] } }).storage.files.map((f) => f.path);
    expect(paths).toEqual([BOOTSTRAP_KUBECONFIG_PATH, KUBELET_DROP_IN_PATH, NODE_SIZING_PATH]);
  });

  it('merging again replaces autonode’s files instead of adding twins (a re-rendered class)', () => {
    const once = withKubeletConfig(nodeIgnition(credentials), tuned);
    const again = withKubeletConfig(once, { amiFamily: 'Custom', kubelet: { maxPods: 42 } });
    const files = (JSON.parse(again) as { storage: { files: { path: string }[] } }).storage.files;
    expect(files.filter((f) => f.path === KUBELET_DROP_IN_PATH)).toHaveLength(1);
    expect(bootFromIgnition(again)).toEqual(expect.objectContaining({ ok: true, node: expect.objectContaining({ kubelet: { maxPods: 42 } }) }));
    expect(withKubeletConfig(once, tuned)).toBe(once);
  });

  it('leaves a userData that is not Ignition as it is', () => {
    const script = '#!/bin/bash\necho join\n';
    expect(withKubeletConfig(script, tuned)).toBe(script);
    expect(withKubeletConfig('{"ignition":{"version":"2.2.0"}}', tuned)).toBe('{"ignition":{"version":"2.2.0"}}');
  });

  it.each([
    ['a script', '#!/bin/bash\necho join\n', /not JSON/],
    ['Ignition 2', '{"ignition":{"version":"2.2.0"}}', /ignition\.version/],
    ['Ignition without the bootstrap kubeconfig', '{"ignition":{"version":"3.4.0"}}', new RegExp(BOOTSTRAP_KUBECONFIG_PATH)],
    [
      'a kubeconfig without a token',
      JSON.stringify({ ignition: { version: '3.4.0' }, storage: { files: [{ path: BOOTSTRAP_KUBECONFIG_PATH, contents: { source: dataUrl(JSON.stringify({ clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority-data': 'QQ==' } }], users: [{ name: 'u', user: {} }] })) } }] } }),
      /users\.0\.user\.token/,
    ],
    [
      'a drop-in of the wrong kind',
      withKubeletConfig(nodeIgnition(credentials), tuned).replace(encodeURIComponent('"KubeletConfiguration"'), encodeURIComponent('"Other"')),
      new RegExp(`${KUBELET_DROP_IN_PATH}: kind`),
    ],
  ])('names what is wrong when a machine cannot boot from %s', (_what, userData, reason) => {
    const booted = bootFromIgnition(userData);
    expect(booted.ok).toBe(false);
    if (!booted.ok) expect(booted.reason).toMatch(reason);
  });

  it('reads percent-encoded and base64 data URLs', () => {
    expect(readDataUrl(dataUrl('a b/ü'))).toBe('a b/ü');
    expect(readDataUrl(`data:text/plain;charset=utf-8;base64,${Buffer.from('a b/ü').toString('base64')}`)).toBe('a b/ü');
    expect(readDataUrl('https://ignition.example/config')).toBeUndefined();
  });
});

describe('a simulated machine booting', () => {
  const shapes = nodeShapes('us-east-1', () => Date.parse('2026-11-24T00:00:00Z'));
  const m5large = { instanceId: 'i-0123', instanceType: 'm5.large', tags: { 'autonode.io/root-volume-size': '120Gi' } };

  it('from the launched userData reports the allocatable autonode predicted for the class', async () => {
    const plan = await planBoot(m5large, withKubeletConfig(nodeIgnition(credentials), { ...tuned, rootVolumeSize: '120Gi' }), { shapes });
    const predicted = catalogInstanceTypes({ region: 'us-east-1', now: Date.parse('2026-11-24T00:00:00Z'), ...tuned, rootVolumeSize: '120Gi' });
    if (!predicted.ok || !plan.ok) throw new Error(`${JSON.stringify(plan)} ${JSON.stringify(predicted)}`);
    const type = predicted.instanceTypes.find((t) => t.name === 'm5.large');
    expect(plan.shape.allocatable).toEqual(expect.objectContaining({ cpu: '1400m', pods: '110' }));
    expect(plan.shape.allocatable).toEqual(expect.objectContaining(type?.allocatable));
    expect(plan.guest).toEqual({ server: credentials.server, caPem: CA });
    expect(plan.bootstrap.getCurrentUser()?.token).toBe(credentials.token);
  });

  it('without userData does not boot unless the fleet says how (tests without enablement)', async () => {
    expect(await planBoot(m5large, undefined, { shapes })).toEqual({ ok: false, reason: expect.stringContaining('has no userData') });
    const fallback = await planBoot(m5large, undefined, {
      shapes,
      withoutUserData: {
        guest: { server: 'https://fallback', caPem: CA },
        bootstrap: async () => planBoot(m5large, nodeIgnition(credentials), { shapes }).then((p) => (p.ok ? p.bootstrap : Promise.reject(new Error('no')))),
        shapeOf: () => ({ ok: true, shape: { capacity: { cpu: '2', memory: '8Gi', pods: '29', 'ephemeral-storage': '20Gi' }, arch: 'amd64' } }),
      },
    });
    expect(fallback.ok && fallback.guest.server).toBe('https://fallback');
  });

  it('from a wrong userData does not boot, and says why', async () => {
    expect(await planBoot(m5large, '#!/bin/bash\n', { shapes })).toEqual({ ok: false, reason: expect.stringContaining('cannot boot from its userData') });
  });
});
