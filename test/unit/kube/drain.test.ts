import { type KubeClients } from '../../../activities/kube/clients';
import { DO_NOT_DISRUPT_ANNOTATION, drainPass } from '../../../activities/kube/drain';
import { apiStatus, startFakeApiServer, type ApiReply, type ApiRequest } from './fake-api-server';

// drainPass against the real Kubernetes client and a small fake API server: the client's
// own deserializer turns the JSON into V1Pods (Dates for timestamps), which is what the
// drain's pod schema must accept.

interface PodOptions {
  namespace?: string;
  node?: string;
  daemonSet?: boolean;
  priorityClassName?: string;
  phase?: string;
  annotations?: Record<string, string>;
  deleting?: boolean;
}

/** A Pod as the API server sends it (JSON). */
interface PodJson {
  metadata: { name: string; namespace: string; [field: string]: unknown };
  spec: { nodeName: string; [field: string]: unknown };
  [field: string]: unknown;
}

function aPod(name: string, options: PodOptions = {}): PodJson {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.daemonSet ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'u1' }] } : {}),
      ...(options.deleting ? { deletionTimestamp: '2026-11-24T10:00:00Z' } : {}),
    },
    spec: {
      nodeName: options.node ?? 'node-a',
      containers: [{ name: 'c', image: 'i' }],
      ...(options.priorityClassName ? { priorityClassName: options.priorityClassName } : {}),
    },
    status: { phase: options.phase ?? 'Running' },
  };
}

/** The three calls the drain makes; records evictions and deletions, refuses evictions of `pdbBlocked` with 429. */
class FakePodApi {
  readonly evicted: string[] = [];
  readonly deleted: string[] = [];
  readonly pdbBlocked = new Set<string>();

  constructor(readonly pods: PodJson[]) {}

  handle({ method, url }: ApiRequest): ApiReply {
    if (method === 'GET' && url.pathname === '/api/v1/pods') {
      const node = url.searchParams.get('fieldSelector')?.replace('spec.nodeName=', '');
      const items = this.pods.filter((p) => p.spec.nodeName === node);
      return { status: 200, body: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items } };
    }
    const pod = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(\/eviction)?$/);
    if (pod) {
      const key = `${pod[1]}/${pod[2]}`;
      if (method === 'POST' && pod[3]) {
        if (this.pdbBlocked.has(key)) return apiStatus(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.");
        this.evicted.push(key);
        return apiStatus(201, 'Created');
      }
      if (method === 'DELETE' && !pod[3]) {
        this.deleted.push(key);
        return { status: 200, body: this.pods.find((p) => `${p.metadata.namespace}/${p.metadata.name}` === key) };
      }
    }
    return apiStatus(404, 'NotFound');
  }
}

async function withFake<T>(pods: PodJson[], run: (api: FakePodApi, kube: KubeClients) => Promise<T>): Promise<T> {
  const api = new FakePodApi(pods);
  const server = await startFakeApiServer((request) => api.handle(request));
  try {
    return await run(api, server.kube);
  } finally {
    await server.close();
  }
}

describe('drainPass', () => {
  it('evicts only the first tier with pods, skipping mirror, finished and terminating pods', async () => {
    await withFake([
      aPod('web'),
      aPod('going', { deleting: true }),
      aPod('static', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }),
      aPod('job', { phase: 'Succeeded' }),
      aPod('logs', { daemonSet: true }),
      aPod('dns', { namespace: 'kube-system', priorityClassName: 'system-cluster-critical' }),
      aPod('elsewhere', { node: 'node-b' }),
    ], async (api, kube) => {
      const progress = await drainPass(kube, 'node-a', { pastDeadline: false });
      expect(progress).toEqual({
        remaining: ['default/going', 'default/logs', 'default/web', 'kube-system/dns'],
        tier: 'non-critical',
        evicted: ['default/web'],
        blockedByPdb: [],
        doNotDisrupt: [],
        forceDeleted: [],
        done: false,
      });
      expect(api.evicted).toEqual(['default/web']);
    });
  });

  it('moves to DaemonSet pods, then critical pods, once the tiers before are gone', async () => {
    await withFake([aPod('logs', { daemonSet: true }), aPod('dns', { namespace: 'kube-system', priorityClassName: 'system-node-critical' })], async (api, kube) => {
      expect(await drainPass(kube, 'node-a', { pastDeadline: false })).toEqual(expect.objectContaining({ tier: 'non-critical-daemonset', evicted: ['default/logs'] }));
      api.pods.shift();
      expect(await drainPass(kube, 'node-a', { pastDeadline: false })).toEqual(expect.objectContaining({ tier: 'critical', evicted: ['kube-system/dns'] }));
    });
  });

  it('reports PDB refusals and do-not-disrupt pods without evicting them', async () => {
    await withFake([aPod('guarded'), aPod('pinned', { annotations: { [DO_NOT_DISRUPT_ANNOTATION]: 'true' } }), aPod('free')], async (api, kube) => {
      api.pdbBlocked.add('default/guarded');
      const progress = await drainPass(kube, 'node-a', { pastDeadline: false });
      expect(progress).toEqual(expect.objectContaining({ evicted: ['default/free'], blockedByPdb: ['default/guarded'], doNotDisrupt: ['default/pinned'], done: false }));
      expect(api.evicted).toEqual(['default/free']);
    });
  });

  it('past the deadline deletes every pod left, do-not-disrupt ones too', async () => {
    await withFake([aPod('pinned', { annotations: { [DO_NOT_DISRUPT_ANNOTATION]: 'true' } }), aPod('logs', { daemonSet: true }), aPod('job', { phase: 'Failed' })], async (api, kube) => {
      const progress = await drainPass(kube, 'node-a', { pastDeadline: true });
      expect(progress).toEqual(expect.objectContaining({ forceDeleted: ['default/pinned', 'default/logs'], evicted: [], done: false }));
      expect(api.deleted).toEqual(['default/pinned', 'default/logs']);
      expect(api.evicted).toEqual([]);
    });
  });

  it('is done when only finished and mirror pods are left', async () => {
    await withFake([aPod('job', { phase: 'Succeeded' }), aPod('static', { annotations: { 'kubernetes.io/config.mirror': 'abc' } })], async (api, kube) => {
      expect(await drainPass(kube, 'node-a', { pastDeadline: false })).toEqual({ remaining: [], evicted: [], blockedByPdb: [], doNotDisrupt: [], forceDeleted: [], done: true });
      expect(api.evicted).toEqual([]);
    });
  });
});
