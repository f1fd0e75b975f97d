import { ApiextensionsV1Api, CustomObjectsApi, KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildCrds, normaliseDocument, parseManifests, toManifest, type KarpenterObject } from '../../core/api';
import { loadStackInfo } from '../support/stack';

// The generated CRDs on the real guest kube-apiserver: they install, the seeds apply
// verbatim, and reading them back through either served version normalises to the same
// model as normalising the file directly (docs/adr/0001, conversion: None).

const SEEDS = join(__dirname, '..', 'fixtures', 'seeds');
const CRD_DIR = join(__dirname, '..', '..', 'k8s', 'crds');
const plural: Record<string, string> = { NodePool: 'nodepools', NodeClaim: 'nodeclaims', EC2NodeClass: 'ec2nodeclasses' };

function seedObjects(file: string): Record<string, unknown>[] {
  return parseManifests(readFileSync(join(SEEDS, file), 'utf8')).flatMap((d) =>
    d.status === 'parsed' && typeof d.object === 'object' && d.object !== null ? [{ ...d.object }] : [],
  );
}

function model(object: unknown): KarpenterObject {
  const result = normaliseDocument(object);
  if (result.status !== 'ok' || result.objects[0] === undefined) throw new Error(JSON.stringify(result));
  return result.objects[0];
}

/** What a user wrote, without what the API server adds (uid, timestamps, last-applied). */
const userView = (object: KarpenterObject) => {
  const manifest = toManifest(object);
  return { ...manifest, metadata: { name: object.metadata.name, annotations: object.metadata.annotations } };
};

describe('CRDs on the guest kube-apiserver (real)', () => {
  const kc = new KubeConfig();
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    kc.loadFromFile(loadStackInfo().guest.kubeconfigPath);
    extensions = kc.makeApiClient(ApiextensionsV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    for (const crd of buildCrds()) {
      // The committed files, exactly as `kubectl apply -f k8s/crds/` would send them.
      const body: V1CustomResourceDefinition = parse(readFileSync(join(CRD_DIR, crd.fileName), 'utf8'));
      await extensions.createCustomResourceDefinition({ body }).catch(async () => {
        const name = body.metadata?.name ?? '';
        const existing = await extensions.readCustomResourceDefinition({ name });
        await extensions.replaceCustomResourceDefinition({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } } });
      });
    }
    for (const name of ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws']) {
      for (let i = 0; i < 100; i++) {
        const crd = await extensions.readCustomResourceDefinition({ name });
        if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  it.each(['000-hypershift-nodepool-and-nodeclass.yaml', '002-aks-nodepool.yaml'])('%s applies verbatim and reads back identically as v1 and v1beta1', async (file) => {
    for (const object of seedObjects(file)) {
      const expected = userView(model(object));
      const [group = '', version = ''] = String(object['apiVersion']).split('/');
      const kind = String(object['kind']);
      const name = expected.metadata.name ?? '';
      await custom.deleteClusterCustomObject({ group, version, plural: plural[kind] ?? '', name }).catch(() => undefined);
      await custom.createClusterCustomObject({ group, version, plural: plural[kind] ?? '', body: object });
      for (const readVersion of ['v1', 'v1beta1']) {
        const read: unknown = await custom.getClusterCustomObject({ group, version: readVersion, plural: plural[kind] ?? '', name });
        expect(userView(model(read))).toEqual(expected);
      }
    }
  });

  it.each([
    ['unknown operator', { key: 'a', operator: 'Equals', values: ['x'] }, /Unsupported value: "Equals"/],
    ['Gt with a non-integer', { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4.5'] }, /single positive integer/],
    ['restricted label', { key: 'kubernetes.io/hostname', operator: 'In', values: ['x'] }, /"kubernetes.io\/hostname" is restricted/],
  ])('rejects a NodePool with %s', async (_name, requirement, message) => {
    const body = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'invalid' },
      spec: { template: { spec: { requirements: [requirement], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } } } },
    };
    await expect(custom.createClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', body })).rejects.toThrow(message);
  });
});
