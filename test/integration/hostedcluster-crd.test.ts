import { ApiException, ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { HOSTED_CLUSTER_API, HostedClusterSchema, invalidAutoNodeCondition, validateAutoNode, type AutoNodeProblemReason } from '../../core/hostedcluster';
import { setCondition } from '../../core/lifecycle/conditions';
import { loadStackInfo } from '../support/stack';
import { aHostedCluster, DEFAULTS, withRoleArn, type HostedClusterManifest } from '../unit/hostedcluster/builders';

// The HostedCluster CRD (k8s/management/hostedcluster-crd.yaml) on the local stack's real
// management kube-apiserver, where the stack installed it at start: what it accepts and
// rejects, that a HostedCluster round-trips with the HyperShift fields autonode does not
// model, that status is a subresource, and that what the API server accepts but autonode
// cannot serve is caught by validateAutoNode with the reason the condition will carry.

const { group, version, plural } = HOSTED_CLUSTER_API;

/** The metav1.Status the API server answers a rejected write with. */
const StatusSchema = z.object({
  code: z.number(),
  message: z.string(),
  details: z.object({ causes: z.array(z.object({ field: z.string().optional(), message: z.string() })).optional() }).optional(),
});
type Status = z.infer<typeof StatusSchema>;

function statusOf(error: unknown): Status {
  if (!(error instanceof ApiException)) throw error;
  return StatusSchema.parse(JSON.parse(String(error.body)));
}

describe('HostedCluster CRD on the management kube-apiserver (real)', () => {
  const kc = new KubeConfig();
  kc.loadFromFile(loadStackInfo().management.kubeconfigPath);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = `hc-crd-${randomUUID().slice(0, 8)}`;
  let counter = 0;

  /** A HostedCluster with a name of its own in this file's namespace. */
  const named = (hc: HostedClusterManifest): HostedClusterManifest => ({ ...hc, metadata: { ...hc.metadata, name: `hc-${++counter}`, namespace } });
  const create = (hc: HostedClusterManifest) => custom.createNamespacedCustomObject({ group, version, plural, namespace, body: hc });
  const read = (name: string): Promise<unknown> => custom.getNamespacedCustomObject({ group, version, plural, namespace, name });
  const rejectionOf = async (write: Promise<unknown>): Promise<Status> => {
    const outcome = await write.then(
      (accepted: unknown) => ({ accepted }),
      (error: unknown) => ({ error }),
    );
    if ('accepted' in outcome) throw new Error(`the API server accepted it: ${JSON.stringify(outcome.accepted)}`);
    return statusOf(outcome.error);
  };

  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace });
  });

  it('is installed by the stack: namespaced, v1beta1, with a status subresource', async () => {
    const crd = await kc.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: `${plural}.${group}` });
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources?.status !== undefined])).toEqual([['v1beta1', true, true, true]]);
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
  });

  it('round-trips a HostedCluster with the HyperShift fields autonode does not model, and autonode reads it', async () => {
    const hc = named(
      aHostedCluster((h) => {
        h.spec['networking'] = { networkType: 'OVNKubernetes', clusterNetwork: [{ cidr: '10.132.0.0/14' }], serviceNetwork: [{ cidr: '172.31.0.0/16' }] };
        h.spec['services'] = [{ service: 'APIServer', servicePublishingStrategy: { type: 'LoadBalancer' } }];
        h.spec['pullSecret'] = { name: 'pull-secret' };
        h.spec.platform = { type: 'AWS', aws: { region: DEFAULTS.region, rolesRef: { nodePoolManagementARN: 'arn:aws:iam::210987654321:role/np' }, endpointAccess: 'Public' } };
      }),
    );
    await create(hc);
    const back = z.object({ spec: z.unknown() }).parse(await read(hc.metadata.name));
    expect(back.spec).toEqual(hc.spec);
    expect(validateAutoNode(await read(hc.metadata.name))).toEqual({
      status: 'ok',
      config: expect.objectContaining({ namespace, name: hc.metadata.name, infraID: DEFAULTS.infraID, roleARN: DEFAULTS.roleARN, region: DEFAULTS.region, generation: 1 }),
    });
  });

  it('keeps status apart from spec: the status subresource writes conditions and autoNode, a spec write does not', async () => {
    const hc = named(aHostedCluster());
    await create(hc);
    const current = HostedClusterSchema.parse(await read(hc.metadata.name));
    const conditions = setCondition([], { type: 'AutoNodeEnabled', status: 'True', reason: 'AsExpected', message: 'AutoNode is enabled' }, new Date().toISOString().replace(/\.\d+Z$/, 'Z'), 1);
    await custom.replaceNamespacedCustomObjectStatus({
      group, version, plural, namespace, name: hc.metadata.name,
      body: { ...hc, metadata: { ...hc.metadata, resourceVersion: current.metadata.resourceVersion }, status: { conditions, autoNode: { nodeCount: 3, nodeClaimCount: 4, vCPUs: 12 } } },
    });
    // a spec write carrying a status: the API server ignores the status part
    const afterStatus = HostedClusterSchema.parse(await read(hc.metadata.name));
    await custom.replaceNamespacedCustomObject({
      group, version, plural, namespace, name: hc.metadata.name,
      body: { ...hc, metadata: { ...hc.metadata, resourceVersion: afterStatus.metadata.resourceVersion }, status: { autoNode: { nodeCount: 99 } } },
    });
    const final = HostedClusterSchema.parse(await read(hc.metadata.name));
    expect(final.status?.autoNode).toEqual({ nodeCount: 3, nodeClaimCount: 4, vCPUs: 12 });
    expect(final.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([['AutoNodeEnabled', 'True', 'AsExpected']]);
  });

  // What the schema rejects, and the field the API server names.
  const rejected: [string, string, (hc: HostedClusterManifest) => void][] = [
    ['a platform type HyperShift does not know', 'spec.platform.type', (hc) => { hc.spec.platform = { type: 'GCP' }; }],
    ['a provisioner other than Karpenter', 'spec.autoNode.provisionerConfig.name', (hc) => { hc.spec.autoNode!.provisionerConfig!.name = 'ClusterAutoscaler'; }],
    ['autoNode without provisionerConfig', 'spec.autoNode.provisionerConfig', (hc) => { hc.spec.autoNode = {}; }],
    ['a Karpenter config without platform', 'spec.autoNode.provisionerConfig.karpenter.platform', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter = { aws: { roleARN: DEFAULTS.roleARN } }; }],
    ['Karpenter AWS config without roleARN', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter = { platform: 'AWS', aws: {} }; }],
    ['a roleARN that is not a string', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', withRoleArn(12)],
    ['no release', 'spec.release', (hc) => delete hc.spec.release],
    ['a release image with white space', 'spec.release.image', (hc) => { hc.spec.release = { image: 'quay.io/ocp release' }; }],
    ['an infraID with capitals', 'spec.infraID', (hc) => { hc.spec.infraID = 'Team-A'; }],
    ['an AWS platform block without region', 'spec.platform.aws.region', (hc) => { hc.spec.platform = { type: 'AWS', aws: {} }; }],
  ];

  it.each(rejected)('rejects %s, naming %s', async (_, field, change) => {
    const status = await rejectionOf(create(named(aHostedCluster(change))));
    expect(status.code).toBe(422);
    expect(status.details?.causes?.map((c) => c.field)).toContain(field);
  });

  it.each([
    ['a condition reason that is not CamelCase', { conditions: [{ type: 'AutoNodeEnabled', status: 'False', reason: 'not a reason', message: '', lastTransitionTime: '2026-11-24T10:00:00Z' }] }, 'status.conditions[0].reason'],
    ['a condition status other than True/False/Unknown', { conditions: [{ type: 'AutoNodeEnabled', status: 'Yes', reason: 'AsExpected', message: '', lastTransitionTime: '2026-11-24T10:00:00Z' }] }, 'status.conditions[0].status'],
    ['a negative node count', { autoNode: { nodeCount: -1 } }, 'status.autoNode.nodeCount'],
  ])('rejects a status with %s', async (_, status, field) => {
    const hc = named(aHostedCluster());
    await create(hc);
    const current = HostedClusterSchema.parse(await read(hc.metadata.name));
    const rejection = await rejectionOf(
      custom.replaceNamespacedCustomObjectStatus({ group, version, plural, namespace, name: hc.metadata.name, body: { ...hc, metadata: { ...hc.metadata, resourceVersion: current.metadata.resourceVersion }, status } }),
    );
    expect(rejection.details?.causes?.map((c) => c.field)).toContain(field);
  });

  it.each([
    ['infraID', (hc: HostedClusterManifest) => { hc.spec.infraID = 'another-infra-id'; }, 'infraID is immutable'],
    ['platform type', (hc: HostedClusterManifest) => { hc.spec.platform = { type: 'None' }; }, 'Type is immutable'],
  ])('keeps %s immutable', async (_, change, message) => {
    const hc = named(aHostedCluster());
    await create(hc);
    const current = HostedClusterSchema.parse(await read(hc.metadata.name));
    const changed = aHostedCluster(change);
    const rejection = await rejectionOf(
      custom.replaceNamespacedCustomObject({ group, version, plural, namespace, name: hc.metadata.name, body: { ...changed, metadata: { ...hc.metadata, resourceVersion: current.metadata.resourceVersion } } }),
    );
    expect(rejection.message).toContain(message);
  });

  // Accepted by the API server (as HyperShift's own CRD accepts them), refused by autonode
  // with the reason its AutoNodeEnabled condition will carry — which the API server then
  // accepts as a condition reason.
  const acceptedButInvalid: [string, AutoNodeProblemReason, (hc: HostedClusterManifest) => void][] = [
    ['a malformed role ARN', 'InvalidRoleARN', withRoleArn('arn:aws:iam::123:role/autonode')],
    ['Karpenter on another platform', 'UnsupportedPlatform', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter!.platform = 'GCP'; }],
    ['an Azure cluster', 'UnsupportedPlatform', (hc) => { hc.spec.platform = { type: 'Azure', azure: { location: 'eastus' } }; }],
    ['no infraID yet', 'MissingInfraID', (hc) => delete hc.spec.infraID],
    ['no AWS platform block', 'MissingRegion', (hc) => { hc.spec.platform = { type: 'AWS' }; }],
    ['a Karpenter config without AWS role', 'MissingRoleARN', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter = { platform: 'AWS' }; }],
    ['no Karpenter config', 'MissingKarpenterConfig', (hc) => { hc.spec.autoNode = { provisionerConfig: { name: 'Karpenter' } }; }],
  ];

  it.each(acceptedButInvalid)('accepts %s; autonode reports %s in a condition the API server takes', async (_, reason, change) => {
    const hc = named(aHostedCluster(change));
    await create(hc);
    const result = validateAutoNode(await read(hc.metadata.name));
    if (result.status !== 'invalid') throw new Error(`autonode accepted it: ${JSON.stringify(result)}`);
    expect(result.problems.map((p) => p.reason)).toEqual([reason]);

    const current = HostedClusterSchema.parse(await read(hc.metadata.name));
    const conditions = setCondition([], invalidAutoNodeCondition(result.problems), '2026-11-24T10:00:00Z', 1);
    await custom.replaceNamespacedCustomObjectStatus({
      group, version, plural, namespace, name: hc.metadata.name,
      body: { ...hc, metadata: { ...hc.metadata, resourceVersion: current.metadata.resourceVersion }, status: { conditions } },
    });
    const written = HostedClusterSchema.parse(await read(hc.metadata.name));
    expect(written.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([['AutoNodeEnabled', 'False', reason]]);
  });
});
