import { PatchStrategy, loadAllYaml } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { isConflict } from '../../activities/kube/errors';
import { loadStackInfo } from '../support/stack';

const DocSchema = z.object({ apiVersion: z.string(), kind: z.string(), metadata: z.object({ name: z.string(), namespace: z.string().optional() }) }).passthrough();

function docs(file: string) {
  return z.array(DocSchema).parse(loadAllYaml(readFileSync(join(__dirname, '..', '..', 'k8s', file), 'utf8')));
}

describe('shipped manifests (real kube-apiservers, server-side dry run)', () => {
  it.each([
    ['worker/worker.yaml', 'management'],
    ['guest/rbac.yaml', 'guest'],
  ] as const)('%s is accepted by the %s API server', async (file, cluster) => {
    const kube = kubeClientsFromKubeconfigFile(loadStackInfo()[cluster].kubeconfigPath);
    const objects = docs(file);
    // dry-run needs the namespaces to exist: those the file declares are created for real
    // below, in order; others (a hosted control plane's) are created here.
    const declared = new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
    const referenced = new Set(objects.flatMap((o) => (o.metadata.namespace && !declared.has(o.metadata.namespace) ? [o.metadata.namespace] : [])));
    for (const ns of referenced) {
      await kube.core.createNamespace({ body: { metadata: { name: ns } } }).catch((err: unknown) => {
        if (!isConflict(err)) throw err;
      });
    }
    const accepted: string[] = [];
    for (const object of objects) {
      if (object.kind === 'Namespace') {
        await kube.objects.create(object).catch((err: unknown) => {
          if (!isConflict(err)) throw err;
        });
      } else {
        // Server-side apply, dry run: validated whether or not another test applied it already.
        await kube.objects.patch(object, undefined, 'All', 'autonode-manifest-test', true, PatchStrategy.ServerSideApply);
      }
      accepted.push(`${object.kind}/${object.metadata.name}`);
    }
    expect(accepted).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    expect(accepted.length).toBeGreaterThan(2);
  });
});
