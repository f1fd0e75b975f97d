import { heapMbOf, shippedWorkerEnv, shippedWorkerEnvOfCheckout, shippedWorkerTuning } from '../../support/shipped-worker';

describe('the worker as shipped (k8s/worker/worker.yaml)', () => {
  it('reads the Deployment’s heap, resync and rate from this checkout’s manifest', () => {
    const tuning = shippedWorkerTuning(shippedWorkerEnvOfCheckout());
    expect(tuning.heapMb).toBe(512);
    expect(tuning.env).toMatchObject({ AUTONODE_STEADY_RESYNC: '30m', AUTONODE_CLOUD_RPS: '20' });
    // what a harness sets itself is not taken from the manifest
    expect(Object.keys(tuning.env)).not.toContain('AUTONODE_METRICS_PORT');
    expect(Object.keys(tuning.env)).not.toContain('AUTONODE_DEPLOYMENT_NAME');
  });

  it('takes only literal values, and names what is missing', () => {
    const manifest = `
apiVersion: v1
kind: ServiceAccount
metadata: { name: autonode }
---
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: worker
          env:
            - { name: NODE_OPTIONS, value: "--max-old-space-size=640" }
            - name: AWS_REGION
              valueFrom: { fieldRef: { fieldPath: metadata.annotations['region'] } }
`;
    expect(shippedWorkerEnv(manifest)).toEqual({ NODE_OPTIONS: '--max-old-space-size=640' });
    expect(() => shippedWorkerEnv('kind: ConfigMap\n')).toThrow('has no Deployment');
    expect(() => shippedWorkerEnv('kind: Deployment\nspec: { template: { spec: { containers: [ { name: other } ] } } }\n')).toThrow('no container named worker');
  });

  it.each([
    ['--max-old-space-size=512', 512],
    ['--enable-source-maps --max-old-space-size 768', 768],
    ['--enable-source-maps', undefined],
    [undefined, undefined],
  ])('heap of NODE_OPTIONS %s → %s MiB', (options, mb) => {
    expect(heapMbOf(options)).toBe(mb);
  });
});
