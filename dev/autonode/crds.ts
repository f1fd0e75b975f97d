import { projectRoot } from '../paths';
import { ApiextensionsV1Api, KubeConfig, loadYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isConflict } from '../../activities/kube/errors';

const CRD_DIR = join(projectRoot(), 'k8s', 'crds');

/**
 * Installs the committed CRDs (exactly as `kubectl apply -f k8s/crds/` would send them)
 * into a cluster and waits until each is Established. Idempotent across test files.
 */
export async function installCrds(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const file of readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml')).sort()) {
    // loadYaml maps the YAML into client-node's object model; a plain YAML parse would be
    // re-serialised without `default` and `x-kubernetes-*` keys (client-node renames them).
    const body = loadYaml<V1CustomResourceDefinition>(readFileSync(join(CRD_DIR, file), 'utf8'));
    const name = body.metadata?.name ?? '';
    names.push(name);
    await extensions.createCustomResourceDefinition({ body }).catch(async (err: unknown) => {
      if (!isConflict(err)) throw err;
      const existing = await extensions.readCustomResourceDefinition({ name });
      await extensions.replaceCustomResourceDefinition({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } } });
    });
  }
  for (const name of names) {
    for (let i = 0; ; i++) {
      const crd = await extensions.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (i > 300) throw new Error(`CRD ${name} not Established after 30s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
