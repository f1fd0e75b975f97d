import { projectRoot } from '../paths';
import { ApiextensionsV1Api, KubeConfig, loadYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isConflict } from '../../activities/kube/errors';

const GUEST_CRD_DIR = join(projectRoot(), 'k8s', 'crds');
const MANAGEMENT_DIR = join(projectRoot(), 'k8s', 'management');

/**
 * Installs the committed guest CRDs (exactly as `kubectl apply -f k8s/crds/` would send
 * them) into a cluster and waits until each is Established. Idempotent across test files.
 */
export async function installCrds(kubeconfigPath: string): Promise<void> {
  await installCrdFiles(kubeconfigPath, yamlFilesIn(GUEST_CRD_DIR, () => true));
}

/**
 * Installs the management cluster's CRDs (`k8s/management/*-crd.yaml`: HostedCluster) the
 * same way. Only for a management cluster without HyperShift (the local stack): where
 * HyperShift runs, its own CRD is there and must not be replaced by this subset.
 */
export async function installManagementCrds(kubeconfigPath: string): Promise<void> {
  await installCrdFiles(kubeconfigPath, yamlFilesIn(MANAGEMENT_DIR, (f) => f.endsWith('-crd.yaml')));
}

function yamlFilesIn(dir: string, include: (file: string) => boolean): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && include(f))
    .sort()
    .map((f) => join(dir, f));
}

/** Creates or replaces each CRD, then waits until all are Established. */
async function installCrdFiles(kubeconfigPath: string, files: readonly string[]): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const file of files) {
    // loadYaml maps the YAML into client-node's object model; a plain YAML parse would be
    // re-serialised without `default` and `x-kubernetes-*` keys (client-node renames them).
    const body = loadYaml<V1CustomResourceDefinition>(readFileSync(file, 'utf8'));
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
