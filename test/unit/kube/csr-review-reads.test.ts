// How reviewNodeCsrs reads the cluster's CSRs: each request is parsed once per process
// (every registration poll of every claim reviews the whole list), and a decision is
// written only on the CSR it was made for — one deleted and re-created under the same name
// between the list and the write is left alone. A CSR API in memory behind the real client.
import { type V1CertificateSigningRequest } from '@kubernetes/client-node';
import * as csrParse from '../../../activities/kube/csr-parse';
import { createCsrActivities } from '../../../activities/kube/csr';
import { createCsrPem, generateKubeletKey } from '../../../dev/simkubelet/pki';
import { anExpectedNode, aPolicy, bootstrapper, launchedAt, nodeName } from '../csr/builders';
import { apiStatus, startFakeApiServer, type ApiRequest, type FakeApiServer } from './fake-api-server';

const base = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
type Csr = Record<string, unknown> & { metadata: { name: string; uid: string; resourceVersion?: string; creationTimestamp?: string } };

async function clientCsr(name: string, uid: string, node = nodeName): Promise<Csr> {
  const pem = await createCsrPem(await generateKubeletKey(), { commonName: `system:node:${node}`, organizations: ['system:nodes'] });
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, uid, creationTimestamp: new Date(launchedAt + 60_000).toISOString() },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      username: bootstrapper,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'],
      usages: ['digital signature', 'client auth'],
    },
  };
}

describe('reviewNodeCsrs: reading the CSR list', () => {
  let api: FakeApiServer;
  const stored = new Map<string, Csr>();
  const approvals: { name: string; uid: string }[] = [];
  /** runs once, before the next read of one CSR (the write path's re-read) */
  let beforeRead: ((name: string) => void) | undefined;
  let version = 0;

  beforeEach(async () => {
    stored.clear();
    approvals.length = 0;
    beforeRead = undefined;
    api = await startFakeApiServer((request: ApiRequest) => {
      const path = request.url.pathname;
      if (request.method === 'GET' && path === base) return { status: 200, body: { kind: 'CertificateSigningRequestList', apiVersion: 'certificates.k8s.io/v1', metadata: {}, items: [...stored.values()] } };
      const name = path.slice(base.length + 1).replace(/\/approval$/, '');
      const csr = stored.get(name);
      if (request.method === 'GET') {
        const hook = beforeRead;
        beforeRead = undefined;
        hook?.(name);
        const now = stored.get(name);
        return now ? { status: 200, body: now } : apiStatus(404, 'NotFound');
      }
      if (request.method === 'PUT' && path.endsWith('/approval')) {
        const body = request.body as Csr;
        if (!csr) return apiStatus(404, 'NotFound');
        // the API server's preconditions: the uid and resourceVersion sent must be the stored ones
        if (body.metadata.uid !== csr.metadata.uid || body.metadata.resourceVersion !== csr.metadata.resourceVersion) return apiStatus(409, 'Conflict');
        const updated = { ...csr, status: body.status, metadata: { ...csr.metadata, resourceVersion: String(++version) } };
        stored.set(name, updated);
        approvals.push({ name, uid: csr.metadata.uid });
        return { status: 200, body: updated };
      }
      return apiStatus(404, 'NotFound');
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await api.close();
  });

  const put = (csr: Csr) => stored.set(csr.metadata.name, { ...csr, metadata: { ...csr.metadata, resourceVersion: String(++version) } });
  const review = () => createCsrActivities({ guest: api.kube, recordEvent: async () => undefined }).reviewNodeCsrs({ node: anExpectedNode(), policy: aPolicy() });

  it('each CSR is parsed once, however many reviews list it; a new one (or one re-created) is parsed when it appears', async () => {
    put(await clientCsr('csr-mine', 'uid-mine'));
    for (let i = 0; i < 8; i++) put(await clientCsr(`csr-other-${i}`, `uid-other-${i}`, `ip-10-0-2-${i}.ec2.internal`));
    const parses = jest.spyOn(csrParse, 'parseCsr');
    const first = await review();
    expect(first.approved).toEqual(['csr-mine']);
    const afterFirst = parses.mock.calls.length;
    expect(afterFirst).toBeGreaterThanOrEqual(9);
    await review();
    await review();
    expect(parses.mock.calls.length).toBe(afterFirst);
    put(await clientCsr('csr-other-0', 'uid-other-0-again', 'ip-10-0-2-0.ec2.internal'));
    await review();
    expect(parses.mock.calls.length).toBe(afterFirst + 1);
  });

  it('a CSR deleted and re-created under its name after it was judged is not approved: the decision was for the other request', async () => {
    put(await clientCsr('csr-swap', 'uid-judged'));
    // between the list (judged: a good request) and the write, another request takes the name
    const swapped = await clientCsr('csr-swap', 'uid-swapped', 'ip-10-9-9-9.ec2.internal');
    beforeRead = () => put(swapped);
    const result = await review();
    expect(result.approved).toEqual([]);
    expect(approvals).toEqual([]);
    expect((stored.get('csr-swap') as unknown as V1CertificateSigningRequest).status?.conditions ?? []).toEqual([]);
  });
});
