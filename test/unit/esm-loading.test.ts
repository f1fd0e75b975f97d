// Day-one proof that jest loads @kubernetes/client-node 1.x (an ES module, transformed by
// the allowlist in jest.config.js) and the Temporal worker together in one test file.
import { KubeConfig, CoreV1Api } from '@kubernetes/client-node';
import { Worker, DefaultLogger } from '@temporalio/worker';

describe('module loading under jest', () => {
  it('loads @kubernetes/client-node and builds an API client from a kubeconfig', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(kc.makeApiClient(CoreV1Api)).toBeInstanceOf(CoreV1Api);
  });

  it('loads the Temporal worker (native bridge included)', () => {
    expect(typeof Worker.create).toBe('function');
    expect(new DefaultLogger('WARN')).toBeDefined();
  });
});
