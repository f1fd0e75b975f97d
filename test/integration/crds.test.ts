import { ApiException, ApiextensionsV1Api, CustomObjectsApi, KubeConfig, loadYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { buildCrds, normaliseDocument, parseManifests, toManifest, type KarpenterObject } from '../../core/api';
import { loadStackInfo } from '../support/stack';
import { aNodePool, anEC2NodeClass, withField, type Doc } from '../unit/api/builders';

// The generated CRDs on the real guest kube-apiserver: they install, the seeds apply
// verbatim, reading them back through either served version normalises to the same model
// as normalising the file directly (docs/adr/0001, conversion: None), and bad manifests
// are rejected by the API server and by `autonode validate` at the same field.

const SEEDS = join(__dirname, '..', 'fixtures', 'seeds');
const CRD_DIR = join(__dirname, '..', '..', 'k8s', 'crds');
const PLURALS: Record<string, string> = { NodePool: 'nodepools', NodeClaim: 'nodeclaims', EC2NodeClass: 'ec2nodeclasses' };

/** Where an object lives in the API: group, version and plural from its apiVersion and kind. */
interface ObjectRef {
  group: string;
  version: string;
  plural: string;
  name: string;
}

function refOf(object: Doc): ObjectRef {
  const header = z
    .object({ apiVersion: z.string().regex(/^[^/]+\/[^/]+$/), kind: z.enum(['NodePool', 'NodeClaim', 'EC2NodeClass']), metadata: z.object({ name: z.string() }) })
    .parse(object);
  const [group = '', version = ''] = header.apiVersion.split('/');
  return { group, version, plural: PLURALS[header.kind] ?? '', name: header.metadata.name };
}

function seedObjects(file: string): Doc[] {
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

const hopLimitOf = (object: KarpenterObject) => (object.kind === 'EC2NodeClass' ? object.spec.metadataOptions.httpPutResponseHopLimit : undefined);

/** The metav1.Status the API server answers a rejected write with. */
const statusSchema = z.object({
  code: z.number(),
  reason: z.string().optional(),
  message: z.string(),
  details: z.object({ causes: z.array(z.object({ field: z.string().optional(), message: z.string() })).optional() }).optional(),
});
type Status = z.infer<typeof statusSchema>;

/**
 * The Status of a rejected request. client-node puts the response body, JSON-escaped, into
 * the ApiException's message, so matching the message is matching an escaped string;
 * the parsed body is what the server actually said.
 */
function statusOf(error: unknown): Status {
  if (!(error instanceof ApiException)) throw error;
  return statusSchema.parse(JSON.parse(String(error.body)));
}

const isNotFound = (error: unknown) => error instanceof ApiException && error.code === 404;

describe('CRDs on the guest kube-apiserver (real)', () => {
  const kc = new KubeConfig();
  let extensions: ApiextensionsV1Api;
  let custom: CustomObjectsApi;
  /** Everything a test created, deleted after it so one run cannot leak into the next. */
  const created: ObjectRef[] = [];

  async function deleteIfPresent(ref: ObjectRef): Promise<void> {
    await custom.deleteClusterCustomObject(ref).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  async function create(object: Doc): Promise<ObjectRef> {
    const ref = refOf(object);
    created.push(ref);
    await custom.createClusterCustomObject({ ...ref, body: object });
    return ref;
  }

  beforeAll(async () => {
    kc.loadFromFile(loadStackInfo().guest.kubeconfigPath);
    extensions = kc.makeApiClient(ApiextensionsV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    for (const crd of buildCrds()) {
      // The committed files, exactly as `kubectl apply -f k8s/crds/` sends them. loadYaml
      // turns the wire form into client-node's model, which it serialises back: a plain
      // parsed object would lose `default` and every `x-kubernetes-*` key on the typed
      // schema levels (the serialiser only knows `_default`, `xKubernetesValidations`, …),
      // and the API server would then neither default nor run most CEL rules.
      const body = loadYaml<V1CustomResourceDefinition>(readFileSync(join(CRD_DIR, crd.fileName), 'utf8'));
      const name = body.metadata?.name ?? '';
      await extensions.createCustomResourceDefinition({ body }).catch(async (error: unknown) => {
        if (!(error instanceof ApiException) || error.code !== 409) throw error;
        const existing = await extensions.readCustomResourceDefinition({ name });
        await extensions.replaceCustomResourceDefinition({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } } });
      });
    }
    for (const name of ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws']) {
      for (let attempt = 0; ; attempt++) {
        const crd = await extensions.readCustomResourceDefinition({ name });
        if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (attempt >= 100) throw new Error(`CRD ${name} not Established after 10s: ${JSON.stringify(crd.status?.conditions)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  afterEach(async () => {
    for (const ref of created.splice(0)) await deleteIfPresent(ref);
  });

  it.each(['000-hypershift-nodepool-and-nodeclass.yaml'])('%s applies verbatim and reads back identically as v1 and v1beta1', async (file) => {
    for (const object of seedObjects(file)) {
      const expected = userView(model(object));
      const ref = refOf(object);
      await deleteIfPresent(ref);
      await create(object);
      for (const version of ['v1', 'v1beta1']) {
        const read: unknown = await custom.getClusterCustomObject({ ...ref, version });
        expect({ version, model: userView(model(read)) }).toEqual({ version, model: expected });
      }
    }
  });

  // Seed 002's sku-family selector is Azure's: the API server stores the pool (it is
  // well-formed Karpenter), and autonode refuses it the same way whichever version reads it.
  it('002-aks-nodepool.yaml applies verbatim, and both reads are refused at its sku-family requirement', async () => {
    const [object] = seedObjects('002-aks-nodepool.yaml');
    if (object === undefined) throw new Error('seed 002 has no NodePool');
    const ref = refOf(object);
    await deleteIfPresent(ref);
    await create(object);
    for (const version of ['v1', 'v1beta1']) {
      const read: unknown = await custom.getClusterCustomObject({ ...ref, version });
      expect({ version, result: normaliseDocument(read) }).toEqual({
        version,
        result: { status: 'invalid', issues: [expect.objectContaining({ path: 'spec.template.spec.requirements[3].key', fix: expect.stringContaining('instance-category') })] },
      });
    }
  });

  // A v1beta1 NodePool without capacity-type meant on-demand (the AWS v1beta1 defaulting);
  // with conversion: None a v1 read cannot tell the versions apart by apiVersion, but the
  // server's managedFields record the version each writer used.
  it.each([
    ['karpenter.sh/v1beta1', [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }]],
    ['karpenter.sh/v1', []],
  ])('a NodePool written as %s without capacity-type reads back, through v1 and v1beta1, with %j', async (apiVersion, expected) => {
    const object = {
      apiVersion,
      kind: 'NodePool',
      metadata: { name: `no-capacity-type-${apiVersion.replace(/\W/g, '-')}` },
      spec: {
        template: {
          spec: {
            requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        },
      },
    };
    const ref = await create(object);
    for (const version of ['v1', 'v1beta1']) {
      const read: unknown = await custom.getClusterCustomObject({ ...ref, version });
      const nodePool = model(read);
      const capacityType = nodePool.kind === 'NodePool' ? nodePool.spec.template.spec.requirements.filter((r) => r.key === 'karpenter.sh/capacity-type') : undefined;
      expect({ version, capacityType }).toEqual({ version, capacityType: expected });
    }
  });

  // The API server defaults with the schema of the version a request is written in, and
  // stores the result: an object written as v1beta1 keeps v1beta1's hop limit of 2 under
  // either read, and one written as v1 keeps 1. (Were the default applied only on read,
  // the same object would launch instances with different IMDS settings by version.)
  it.each([
    ['karpenter.k8s.aws/v1beta1', 2],
    ['karpenter.k8s.aws/v1', 1],
  ])('an EC2NodeClass written as %s gets hop limit %d, whichever version reads it', async (apiVersion, hopLimit) => {
    const object = { ...withField(anEC2NodeClass(), 'metadata.name', `hop-limit-${apiVersion.replace(/\W/g, '-')}`), apiVersion };
    expect(hopLimitOf(model(object))).toBe(hopLimit);
    const ref = await create(object);
    for (const version of ['v1', 'v1beta1']) {
      const read: unknown = await custom.getClusterCustomObject({ ...ref, version });
      expect({ version, hopLimit: hopLimitOf(model(read)) }).toEqual({ version, hopLimit });
    }
  });

  const reqs = 'spec.template.spec.requirements';
  const v1beta1 = (doc: Doc): Doc => ({ ...doc, apiVersion: 'karpenter.sh/v1beta1' });

  // [case, manifest, field autonode validate reports, field the API server reports, server message]
  // The server's field differs only where its rule sits on a list or map (upstream's CEL
  // placement) and so cannot name the element.
  it.each<[string, Doc, string, string, RegExp]>([
    ['unknown operator', withField(aNodePool(), `${reqs}[2].operator`, 'Equals'), `${reqs}[2].operator`, `${reqs}[2].operator`, /Unsupported value: "Equals"/],
    ['Gt with a non-integer', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4.5'] }), `${reqs}[1].values`, `${reqs}[1].values`, /single non-negative integer value/],
    ['Lt with a hexadecimal number', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['0x10'] }), `${reqs}[1].values`, `${reqs}[1].values`, /single non-negative integer value/],
    ['Gte without values', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-memory', operator: 'Gte' }), `${reqs}[1].values`, `${reqs}[1].values`, /single non-negative integer value/],
    ['Lte with two values', withField(aNodePool(), `${reqs}[1]`, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['4', '8'] }), `${reqs}[1].values`, `${reqs}[1].values`, /single non-negative integer value/],
    ['In with no values', withField(aNodePool(), `${reqs}[0].values`, []), `${reqs}[0].values`, `${reqs}[0].values`, /operator 'In' must have a value/],
    ['Exists with values', withField(aNodePool(), `${reqs}[0]`, { key: 'kubernetes.io/arch', operator: 'Exists', values: ['amd64'] }), `${reqs}[0].values`, `${reqs}[0].values`, /must not have values/],
    ['minValues above the values listed', withField(aNodePool(), `${reqs}[2].minValues`, 2), `${reqs}[2].minValues`, `${reqs}[2].minValues`, /at least that many values/],
    ['restricted label', withField(aNodePool(), `${reqs}[0].key`, 'kubernetes.io/hostname'), `${reqs}[0].key`, `${reqs}[0].key`, /label "kubernetes.io\/hostname" is restricted/],
    ['template label karpenter.sh/nodepool', withField(aNodePool(), 'spec.template.metadata', { labels: { 'karpenter.sh/nodepool': 'x' } }), 'spec.template.metadata.labels["karpenter.sh/nodepool"]', 'spec.template.metadata.labels', /label "karpenter.sh\/nodepool" is restricted/],
    ['missing nodeClassRef', withField(aNodePool(), 'spec.template.spec.nodeClassRef', undefined), 'spec.template.spec.nodeClassRef', 'spec.template.spec.nodeClassRef', /Required value/],
    ['bad quantity in limits', withField(aNodePool(), 'spec.limits', { cpu: '1 core' }), 'spec.limits.cpu', 'spec.limits.cpu', /Invalid value: "1 core"/],
    ['budget nodes 110%', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: '110%' }] }), 'spec.disruption.budgets[0].nodes', 'spec.disruption.budgets[0].nodes', /Invalid value: "110%"/],
    ['budget nodes as a YAML number', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: 5 }] }), 'spec.disruption.budgets[0].nodes', 'spec.disruption.budgets[0].nodes', /must be of type string/],
    ['budget schedule without duration', withField(aNodePool(), 'spec.disruption', { budgets: [{ nodes: '0', schedule: '@daily' }] }), 'spec.disruption.budgets[0].duration', 'spec.disruption.budgets', /'schedule' must be set with 'duration'/],
    ['expireAfter in days', withField(aNodePool(), 'spec.template.spec.expireAfter', '30d'), 'spec.template.spec.expireAfter', 'spec.template.spec.expireAfter', /Invalid value: "30d"/],
    ['unknown consolidation policy', withField(aNodePool(), 'spec.disruption', { consolidationPolicy: 'Always' }), 'spec.disruption.consolidationPolicy', 'spec.disruption.consolidationPolicy', /Unsupported value: "Always"/],
    ['taint with a bad effect', withField(aNodePool(), 'spec.template.spec.taints', [{ key: 'a', effect: 'NoWay' }]), 'spec.template.spec.taints[0].effect', 'spec.template.spec.taints[0].effect', /Unsupported value: "NoWay"/],
    ['weight out of range', withField(aNodePool(), 'spec.weight', 101), 'spec.weight', 'spec.weight', /less than or equal to 100/],
    ['v1beta1 WhenEmpty without consolidateAfter', v1beta1(aNodePool({ disruption: { consolidationPolicy: 'WhenEmpty' } })), 'spec.disruption.consolidateAfter', 'spec.disruption.consolidateAfter', /must be specified with consolidationPolicy=WhenEmpty/],
    ['EC2NodeClass with role and instanceProfile', anEC2NodeClass({ role: 'r', instanceProfile: 'p' }), 'spec.instanceProfile', 'spec.instanceProfile', /at most one of role or instanceProfile/],
    ['EC2NodeClass volume size in GB', anEC2NodeClass({ blockDeviceMappings: [{ ebs: { volumeSize: '120GB' } }] }), 'spec.blockDeviceMappings[0].ebs.volumeSize', 'spec.blockDeviceMappings[0].ebs.volumeSize', /Invalid value: "120GB"/],
    ['EC2NodeClass alias combined with other terms', anEC2NodeClass({ amiFamily: undefined, amiSelectorTerms: [{ alias: 'al2023@latest' }, { id: 'ami-1' }] }), 'spec.amiSelectorTerms[0].alias', 'spec.amiSelectorTerms', /'alias' is mutually exclusive/],
    ['EC2NodeClass without subnets', anEC2NodeClass({ subnetSelectorTerms: [] }), 'spec.subnetSelectorTerms', 'spec.subnetSelectorTerms', /at least 1 items/],
  ])('rejects %s, in autonode validate and on the API server', async (name, doc, validateField, serverField, serverMessage) => {
    const object = withField(doc, 'metadata.name', `invalid-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);

    expect(normaliseDocument(object)).toEqual(expect.objectContaining({ status: 'invalid', issues: expect.arrayContaining([expect.objectContaining({ path: validateField })]) }));

    const status = await create(object).then(
      (ref) => {
        throw new Error(`the API server accepted ${ref.plural}/${ref.name}: ${JSON.stringify(object)}`);
      },
      (error: unknown) => statusOf(error),
    );
    expect(status).toEqual(expect.objectContaining({ code: 422, reason: 'Invalid' }));
    expect(status.details?.causes).toContainEqual({ field: serverField, message: expect.stringMatching(serverMessage) });
  });
});
