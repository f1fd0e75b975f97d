// Disruption's view of the world: the candidates' nodes gone, their movable pods Pending.
import { withoutNodes } from '../../../activities/provisioner/activity';
import { type World } from '../../../activities/provisioner/world';
import { podDisposition } from '../../../core/provisioning';
import { type StoredNodeClaim } from '../../../core/api/nodeclaim';

const pod = (name: string, nodeName: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'app', ...extra },
  spec: { nodeName, containers: [{ name: 'c' }] },
  status: { phase: 'Running' },
});
const claim = (name: string, nodeName: string) => ({ metadata: { name, uid: name, resourceVersion: '1' }, spec: { requirements: [], nodeClassRef: { name: 'default' } }, status: { nodeName } }) as unknown as StoredNodeClaim;
const world: World = {
  awaiting: 0,
  provisionable: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pending', namespace: 'app' }, spec: {}, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } }],
  bound: [
    pod('web-1', 'old'),
    pod('fluentd-old', 'old', { ownerReferences: [{ kind: 'DaemonSet', name: 'fluentd', controller: true }] }),
    pod('static', 'old', { annotations: { 'kubernetes.io/config.mirror': 'x' } }),
    pod('web-2', 'stays'),
  ],
  nodes: [{ metadata: { name: 'old' } }, { metadata: { name: 'stays' } }],
  daemonSets: [],
  nodeClaims: [claim('c-old', 'old'), claim('c-stays', 'stays')],
  nodePools: [],
  nodeClasses: [],
};

it('leaves the nodes and their claims out; what must move is the only Pending work', () => {
  const view = withoutNodes(world, new Set(['old']));
  expect(view.nodes).toEqual([{ metadata: { name: 'stays' } }]);
  expect(view.nodeClaims.map((c) => c.metadata.name)).toEqual(['c-stays']);
  expect(view.bound.map((p) => (p as { metadata: { name: string } }).metadata.name)).toEqual(['web-2']);
  // DaemonSet and mirror pods do not move; pods pending for other reasons are not this plan's
  expect(view.provisionable.map((p) => (p as { metadata: { name: string } }).metadata.name)).toEqual(['web-1']);
  expect(view.provisionable.every((p) => podDisposition(p) === 'provisionable')).toBe(true);
  expect((view.provisionable[0] as { spec: Record<string, unknown> }).spec.nodeName).toBeUndefined();
});

it('nothing leaving: nothing to plan, the rest unchanged', () => {
  const view = withoutNodes(world, new Set());
  expect(view.provisionable).toEqual([]);
  expect(view.bound).toHaveLength(4);
  expect(view.nodes).toHaveLength(2);
});
