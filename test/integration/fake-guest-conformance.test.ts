// The in-memory guest API server the metrics unit tests use (test/unit/metrics/fake-guest.ts)
// answers as the real kube-apiserver does, for what those activities send: the same script of
// NodeClaim calls goes to both, through the same client, and every answer must match.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { type KubeClients, kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { apiStatus as statusOf } from '../../activities/kube/errors';
import { startFakeGuest, type FakeGuest } from '../unit/metrics/fake-guest';
import { installCrds } from '../support/crds';
import { loadStackInfo } from '../support/stack';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const api = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
type Stored = { metadata: { name: string; uid?: string; resourceVersion?: string; generation?: number; deletionTimestamp?: string; finalizers?: string[] }; status?: { providerID?: string } };

/** What one call came to: the HTTP status, and the fields the activities read. */
async function outcome(call: () => Promise<unknown>): Promise<{ status: number; uid?: boolean; generation?: number; deleting?: boolean; finalizers?: string[]; providerID?: string }> {
  try {
    const body = (await call()) as Stored | { kind?: string } | undefined;
    const o = body && 'metadata' in body ? body : undefined;
    return {
      status: 200,
      ...(o ? { uid: Boolean(o.metadata.uid), ...(o.metadata.generation !== undefined ? { generation: o.metadata.generation } : {}), deleting: o.metadata.deletionTimestamp !== undefined, finalizers: o.metadata.finalizers ?? [] } : {}),
      ...(o?.status?.providerID ? { providerID: o.status.providerID } : {}),
    };
  } catch (err) {
    return { status: statusOf(err) ?? -1 };
  }
}

/** The script: create, create again, read a missing one, patch status stale and current, delete with a finalizer, release it. */
async function script(kube: KubeClients, name: string) {
  const body = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, finalizers: ['autonode.io/conformance'] },
    spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'conformance' }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }] },
  };
  const get = () => kube.customObjects.getClusterCustomObject({ ...api, name });
  const steps: Record<string, Awaited<ReturnType<typeof outcome>>> = {};
  steps.create = await outcome(() => kube.customObjects.createClusterCustomObject({ ...api, body }));
  steps.createAgain = await outcome(() => kube.customObjects.createClusterCustomObject({ ...api, body }));
  steps.getMissing = await outcome(() => kube.customObjects.getClusterCustomObject({ ...api, name: `${name}-missing` }));
  const before = (await get()) as Stored;
  steps.patchStatus = await outcome(() => kube.customObjects.patchClusterCustomObjectStatus({ ...api, name, body: { metadata: { resourceVersion: before.metadata.resourceVersion }, status: { providerID: 'aws:///us-east-1a/i-0123' } } }, mergePatch));
  // the version read before that patch is stale now
  steps.patchStatusStale = await outcome(() => kube.customObjects.patchClusterCustomObjectStatus({ ...api, name, body: { metadata: { resourceVersion: before.metadata.resourceVersion }, status: { providerID: 'aws:///us-east-1a/i-stale' } } }, mergePatch));
  steps.delete = await outcome(() => kube.customObjects.deleteClusterCustomObject({ ...api, name }));
  steps.getDeleting = await outcome(get);
  steps.deleteAgain = await outcome(() => kube.customObjects.deleteClusterCustomObject({ ...api, name }));
  steps.release = await outcome(() => kube.customObjects.patchClusterCustomObject({ ...api, name, body: { metadata: { finalizers: null } } }, mergePatch));
  steps.getGone = await outcome(get);
  steps.deleteGone = await outcome(() => kube.customObjects.deleteClusterCustomObject({ ...api, name }));
  return steps;
}

describe('the fake guest API server answers as kube-apiserver does (NodeClaims)', () => {
  const stack = loadStackInfo();
  let fake: FakeGuest;
  beforeAll(async () => {
    await installCrds(stack.guest.kubeconfigPath);
    fake = await startFakeGuest();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('the same script, the same answers', async () => {
    const name = `conformance-${randomUUID().slice(0, 6)}`;
    const real = await script(kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath), name);
    const faked = await script(fake.kube, name);
    // the real server's answers are what the fake is held to; they are checked too, so a
    // script that exercised nothing would fail here
    expect(real.create).toEqual(expect.objectContaining({ status: 200, uid: true, generation: 1, deleting: false }));
    expect(real.createAgain?.status).toBe(409);
    expect(real.getMissing?.status).toBe(404);
    expect(real.patchStatusStale?.status).toBe(409);
    expect(real.getDeleting).toEqual(expect.objectContaining({ status: 200, deleting: true, finalizers: ['autonode.io/conformance'], providerID: 'aws:///us-east-1a/i-0123' }));
    expect(real.getGone?.status).toBe(404);
    expect(faked).toEqual(real);
  });

  it('lists by equality label selectors the same way (the batch gate reads a batch so)', async () => {
    const run = randomUUID().slice(0, 6);
    const batch = `b-${run}`;
    const claim = (name: string, labels: Record<string, string>) => ({
      apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name, labels },
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'conformance' }, requirements: [] },
    });
    const names = async (kube: KubeClients, selector: string) => {
      const list = (await kube.customObjects.listClusterCustomObject({ ...api, labelSelector: selector })) as { items: Stored[] };
      return list.items.map((item) => item.metadata.name).filter((name) => name.endsWith(run)).sort();
    };
    const answers = async (kube: KubeClients) => {
      for (const [name, labels] of [[`in-a-${run}`, { 'autonode.io/batch': batch, pool: 'a' }], [`in-b-${run}`, { 'autonode.io/batch': batch, pool: 'b' }], [`other-${run}`, { 'autonode.io/batch': `${batch}-x`, pool: 'a' }], [`bare-${run}`, {}]] as const) {
        await kube.customObjects.createClusterCustomObject({ ...api, body: claim(name, labels) });
      }
      const result = { batch: await names(kube, `autonode.io/batch=${batch}`), both: await names(kube, `autonode.io/batch=${batch},pool=a`), none: await names(kube, 'autonode.io/batch=nope') };
      for (const name of [`in-a-${run}`, `in-b-${run}`, `other-${run}`, `bare-${run}`]) await kube.customObjects.deleteClusterCustomObject({ ...api, name });
      return result;
    };
    const real = await answers(kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath));
    expect(real).toEqual({ batch: [`in-a-${run}`, `in-b-${run}`], both: [`in-a-${run}`], none: [] });
    expect(await answers(fake.kube)).toEqual(real);
  });
});
