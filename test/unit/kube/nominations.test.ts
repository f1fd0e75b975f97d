// Nominating a claim's planned pods at registration (activities/kube/nominations.ts), behind
// the real client against a fake API server: which pods get status.nominatedNodeName, which
// are left alone, and what a missing pods/status permission does.
import { nominatePlannedPods } from '../../../activities/kube/nominations';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../../activities/kube/nodeclaims';
import { PLANNED_PODS_ANNOTATION } from '../../../core/provisioning';
import { apiStatus, startFakeApiServer, type ApiReply, type ApiRequest, type FakeApiServer } from './fake-api-server';

const NODE = 'ip-10-0-0-1.ec2.internal';

const aClaim = (planned: string | undefined): StoredNodeClaim => StoredNodeClaimSchema.parse({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name: 'default-abc12', uid: 'u-1', resourceVersion: '1', ...(planned === undefined ? {} : { annotations: { [PLANNED_PODS_ANNOTATION]: planned } }) },
  spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
});

interface PodState {
  nodeName?: string;
  nominatedNodeName?: string;
  deleting?: boolean;
}

describe('nominatePlannedPods', () => {
  let server: FakeApiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function withPods(pods: Record<string, PodState>, options: { forbidStatus?: boolean } = {}) {
    const patches: { pod: string; body: unknown }[] = [];
    server = await startFakeApiServer((request: ApiRequest): ApiReply => {
      const match = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(\/status)?$/.exec(request.url.pathname);
      if (match === null) return apiStatus(404, 'NotFound');
      const key = `${match[1]}/${match[2]}`;
      const pod = pods[key];
      if (pod === undefined) return apiStatus(404, 'NotFound');
      if (request.method === 'PATCH' && match[3] === '/status') {
        if (options.forbidStatus === true) return apiStatus(403, 'Forbidden');
        patches.push({ pod: key, body: request.body });
        return { status: 200, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: match[2], namespace: match[1] } } };
      }
      return {
        status: 200,
        body: {
          apiVersion: 'v1', kind: 'Pod',
          metadata: { name: match[2], namespace: match[1], ...(pod.deleting === true ? { deletionTimestamp: '2026-11-24T20:00:00Z' } : {}) },
          spec: { containers: [{ name: 'main', image: 'x' }], ...(pod.nodeName === undefined ? {} : { nodeName: pod.nodeName }) },
          status: pod.nominatedNodeName === undefined ? {} : { nominatedNodeName: pod.nominatedNodeName },
        },
      };
    });
    return { kube: server.kube, patches };
  }

  it('nominates every unbound planned pod to the node, and leaves alone the bound, the terminating, the gone and a preemptor nominated elsewhere', async () => {
    const { kube, patches } = await withPods({
      'app/pending': {},
      'app/already': { nominatedNodeName: NODE },
      'app/bound': { nodeName: 'other-node' },
      'app/leaving': { deleting: true },
      'app/preemptor': { nominatedNodeName: 'other-node' },
    });
    const result = await nominatePlannedPods(kube, aClaim('app/pending,app/already,app/bound,app/leaving,app/preemptor,app/gone'), NODE);
    expect(result).toEqual({ nominated: ['app/already', 'app/pending'], skipped: ['app/bound', 'app/gone', 'app/leaving', 'app/preemptor'], forbidden: false });
    expect(patches).toEqual([{ pod: 'app/pending', body: { status: { nominatedNodeName: NODE } } }]);
  });

  it('does nothing for a claim without planned pods (one made with kubectl, or past the batch budget)', async () => {
    const { kube, patches } = await withPods({ 'app/pending': {} });
    expect(await nominatePlannedPods(kube, aClaim(undefined), NODE)).toEqual({ nominated: [], skipped: [], forbidden: false });
    expect(patches).toEqual([]);
  });

  it('reports a missing pods/status permission instead of failing the registration', async () => {
    const { kube } = await withPods({ 'app/pending': {} }, { forbidStatus: true });
    expect(await nominatePlannedPods(kube, aClaim('app/pending'), NODE)).toEqual({ nominated: [], skipped: [], forbidden: true });
  });
});
