import { apiStatus, startFakeApiServer, type ApiReply, type ApiRequest } from '../kube/fake-api-server';
import { type KubeClients } from '../../../activities/kube/clients';

type Doc = Record<string, unknown>;

/**
 * A guest API server in memory, behind the real client, that behaves as the real one does
 * for what the instrumented activities send: create (409 on a taken name), get (404),
 * list, JSON merge patch of an object or its status with resourceVersion checked (409 when
 * stale), delete (a deletionTimestamp while finalizers remain; gone once the last one is
 * patched away). Lists take the equality label selectors the activities send (`k=v,k2=v2`).
 * Every request is recorded; `afterRequest`, when set, runs after each one is answered (a
 * test's way to change the world between two of an activity's calls).
 */
export interface FakeGuest {
  kube: KubeClients;
  requests: ApiRequest[];
  /** seeds an object at its path, e.g. `/apis/karpenter.sh/v1/nodeclaims/a` */
  put(path: string, object: Doc): void;
  get(path: string): Doc | undefined;
  afterRequest?: (request: ApiRequest) => void;
  close(): Promise<void>;
}

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: objects merge key by key, null deletes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isDoc(patch)) return patch;
  const out: Doc = isDoc(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

const metaOf = (doc: Doc): Doc => (isDoc(doc.metadata) ? doc.metadata : {});

export async function startFakeGuest(): Promise<FakeGuest> {
  const objects = new Map<string, Doc>();
  const requests: ApiRequest[] = [];
  let version = 0;
  const stamp = (doc: Doc, meta: Doc): Doc => ({ ...doc, metadata: { ...meta, resourceVersion: String(++version) } });

  const handle = (request: ApiRequest): ApiReply => {
    requests.push(request);
    const path = request.url.pathname.replace(/\/status$/, '');
    const status = request.url.pathname.endsWith('/status');
    const stored = objects.get(path);
    switch (request.method) {
      case 'GET': {
        if (stored) return { status: 200, body: stored };
        // discovery, as KubernetesObjectApi asks it before listing DaemonSets
        if (path === '/apis/apps/v1') return { status: 200, body: { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [{ name: 'daemonsets', singularName: 'daemonset', namespaced: true, kind: 'DaemonSet', verbs: ['get', 'list', 'watch'] }] } };
        // a collection at cluster scope (…/pods) lists its namespaced objects too (…/namespaces/<ns>/pods/<name>)
        const scope = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/([^/]+)$/.exec(path);
        const inCollection = (p: string) => (p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes('/'))
          || (scope !== null && new RegExp(`^${scope[1]}/namespaces/[^/]+/${scope[2]}/[^/]+$`).test(p));
        // the one field selector the activities send: spec.nodeName=<name> ("": not bound yet)
        const nodeName = /^spec\.nodeName=(.*)$/.exec(request.url.searchParams.get('fieldSelector') ?? '')?.[1];
        // equality label selectors only (`k=v,k2=v2`): the form the activities send
        const wantedLabels = (request.url.searchParams.get('labelSelector') ?? '').split(',').filter((term) => term !== '').map((term) => {
          const [key = '', value = ''] = term.split('=');
          return [key, value] as const;
        });
        const labelled = (o: Doc) => {
          const labels = metaOf(o).labels;
          return wantedLabels.every(([key, value]) => isDoc(labels) && labels[key] === value);
        };
        const items = [...objects].filter(([p, o]) => inCollection(p) && labelled(o) && (nodeName === undefined || (isDoc(o.spec) && (o.spec.nodeName ?? '') === nodeName))).map(([, o]) => o);
        // a collection is known by the objects in it, or by its plural (…/nodes, …/nodeclaims)
        if (items.length > 0 || /\/(nodes|pods|daemonsets|poddisruptionbudgets|nodeclaims|nodepools|ec2nodeclasses|events)$/.test(path)) return { status: 200, body: { kind: 'List', apiVersion: 'v1', metadata: {}, items } };
        return apiStatus(404, 'NotFound', `${path} not found`);
      }
      case 'POST': {
        const body = isDoc(request.body) ? request.body : {};
        const name = String(metaOf(body).name ?? '');
        const key = `${path}/${name}`;
        if (objects.has(key)) return apiStatus(409, 'AlreadyExists', `${key} already exists`);
        const created = stamp(body, { ...metaOf(body), uid: `uid-${name}`, creationTimestamp: '2026-11-24T12:00:00Z', generation: 1 });
        objects.set(key, created);
        return { status: 201, body: created };
      }
      case 'PATCH': {
        if (!stored) return apiStatus(404, 'NotFound', `${path} not found`);
        const patch = isDoc(request.body) ? request.body : {};
        const wanted = metaOf(patch).resourceVersion;
        if (wanted !== undefined && wanted !== metaOf(stored).resourceVersion) return apiStatus(409, 'Conflict', `${path}: the object has been modified`);
        const { metadata: patchMeta, ...rest } = patch;
        const applied = status ? { status: rest.status } : { metadata: patchMeta, ...rest };
        const merged = mergePatch(stored, applied) as Doc;
        const meta = metaOf(merged);
        const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
        if (meta.deletionTimestamp !== undefined && finalizers.length === 0) {
          objects.delete(path);
          return { status: 200, body: merged };
        }
        const updated = stamp(merged, meta);
        objects.set(path, updated);
        return { status: 200, body: updated };
      }
      case 'PUT': {
        // a replace, as kube-apiserver does one: the stored version must be the one sent
        if (!stored) return apiStatus(404, 'NotFound', `${path} not found`);
        const body = isDoc(request.body) ? request.body : {};
        const wanted = metaOf(body).resourceVersion;
        if (wanted !== undefined && wanted !== metaOf(stored).resourceVersion) return apiStatus(409, 'Conflict', `${path}: the object has been modified`);
        const replaced = status ? { ...stored, status: body.status } : { ...body, ...(stored.status === undefined ? {} : { status: stored.status }) };
        const updated = stamp(replaced, { ...metaOf(stored), ...(status ? {} : metaOf(body)) });
        objects.set(path, updated);
        return { status: 200, body: updated };
      }
      case 'DELETE': {
        if (!stored) return apiStatus(404, 'NotFound', `${path} not found`);
        const meta = metaOf(stored);
        const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
        if (finalizers.length === 0) {
          objects.delete(path);
          return apiStatus(200, 'Success');
        }
        if (meta.deletionTimestamp !== undefined) return { status: 200, body: stored };
        // as kube-apiserver does, marking an object for deletion moves its generation
        const deleting = stamp(stored, { ...meta, deletionTimestamp: '2026-11-24T12:05:00Z', ...(typeof meta.generation === 'number' ? { generation: meta.generation + 1 } : {}) });
        objects.set(path, deleting);
        return { status: 200, body: deleting };
      }
      default:
        return apiStatus(405, 'MethodNotAllowed', request.method);
    }
  };
  const fake: { afterRequest?: (request: ApiRequest) => void } = {};
  const server = await startFakeApiServer((request) => {
    const reply = handle(request);
    fake.afterRequest?.(request);
    return reply;
  });
  return {
    get afterRequest() {
      return fake.afterRequest;
    },
    set afterRequest(hook) {
      if (hook === undefined) delete fake.afterRequest;
      else fake.afterRequest = hook;
    },
    kube: server.kube,
    requests,
    put: (path, object) => void objects.set(path, stamp(object, { uid: `uid-${String(metaOf(object).name)}`, creationTimestamp: '2026-11-24T12:00:00Z', ...metaOf(object) })),
    get: (path) => objects.get(path),
    close: () => server.close(),
  };
}
