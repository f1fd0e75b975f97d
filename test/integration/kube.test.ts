import { AuthorizationV1Api, type V1ConfigMap, type V1Node } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { loadStackInfo } from '../support/stack';
import { eventually } from '../support/eventually';

const clusters = ['management', 'guest'] as const;

function clientsFor(cluster: (typeof clusters)[number]): KubeClients {
  return kubeClientsFromKubeconfigFile(loadStackInfo()[cluster].kubeconfigPath);
}


describe.each(clusters)('%s kube-apiserver (real)', (cluster) => {
  let kube: KubeClients;
  beforeAll(() => {
    kube = clientsFor(cluster);
  });

  it('creates, lists and watches an object', async () => {
    const namespace = `smoke-${randomUUID().slice(0, 8)}`;
    await kube.core.createNamespace({ body: { metadata: { name: namespace } } });

    const seen: string[] = [];
    const added = new Promise<void>((resolve, reject) => {
      void kube.watch
        .watch(
          `/api/v1/namespaces/${namespace}/configmaps`,
          {},
          (type: string, obj: V1ConfigMap) => {
            seen.push(`${type} ${obj.metadata?.name}`);
            if (type === 'ADDED' && obj.metadata?.name === 'smoke') resolve();
          },
          (err: unknown) => (err ? reject(err) : undefined),
        )
        .then((controller) => added.finally(() => controller.abort()));
    });
    // the watch is registered before the object exists, so ADDED must come from the stream
    await new Promise((r) => setTimeout(r, 300));
    await kube.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'smoke' }, data: { cluster } } });
    await added;
    expect(seen).toContain('ADDED smoke');

    const list = await kube.core.listNamespacedConfigMap({ namespace });
    expect(list.items.map((cm) => cm.metadata?.name)).toContain('smoke');
    expect(list.items.find((cm) => cm.metadata?.name === 'smoke')?.data).toEqual({ cluster });
    await kube.core.deleteNamespace({ name: namespace });
  });

  it('authorizes with Node and RBAC: no binding, no access; a node may read only its own Node', async () => {
    const authz = kube.config.makeApiClient(AuthorizationV1Api);
    const review = async (user: string, groups: string[], verb: string, resource: string, name?: string) =>
      (await authz.createSubjectAccessReview({
        body: { spec: { user, groups, resourceAttributes: { verb, resource, name } } },
      })).status?.allowed;
    expect(await review('nobody', ['system:authenticated'], 'list', 'namespaces')).toBe(false);
    expect(await review('admin', ['system:masters'], 'list', 'namespaces')).toBe(true);
    // The Node authorizer lets a kubelet read its own Node but not create CSR approvals.
    expect(await review('system:node:ip-10-0-0-1.ec2.internal', ['system:nodes'], 'get', 'nodes', 'ip-10-0-0-1.ec2.internal')).toBe(true);
    expect(await review('system:node:ip-10-0-0-1.ec2.internal', ['system:nodes'], 'update', 'certificatesigningrequests/approval')).toBe(false);
  });
});

describe('guest cluster nodes (kwok)', () => {
  it('a Node annotated for kwok becomes Ready', async () => {
    const kube = clientsFor('guest');
    const name = `ip-kwok-${randomUUID().slice(0, 8)}.ec2.internal`;
    const node: V1Node = {
      metadata: {
        name,
        annotations: { 'kwok.x-k8s.io/node': 'fake' },
        labels: { 'kubernetes.io/hostname': name, 'node.kubernetes.io/instance-type': 'm5.large' },
      },
      spec: { providerID: 'aws:///us-east-1a/i-0123456789abcdef0' },
    };
    await kube.core.createNode({ body: node });
    const ready = await eventually('kwok to mark the node Ready', async () => {
      const n = await kube.core.readNode({ name });
      return n.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    });
    expect(ready.status).toBe('True');
    await kube.core.deleteNode({ name });
  });

  it('a Node without the kwok annotation is left alone', async () => {
    const kube = clientsFor('guest');
    const name = `ip-untouched-${randomUUID().slice(0, 8)}.ec2.internal`;
    await kube.core.createNode({ body: { metadata: { name } } });
    await new Promise((r) => setTimeout(r, 3000));
    const n = await kube.core.readNode({ name });
    expect(n.status?.conditions ?? []).toEqual([]);
    await kube.core.deleteNode({ name });
  });
});
