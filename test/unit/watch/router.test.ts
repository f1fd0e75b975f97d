import { EXPECTED_NODE_NAME_ANNOTATION } from '../../../core/lifecycle';
import { ClusterEventRouter, type NodeClaimFacts, type NodeFacts } from '../../../activities/watch/router';

const aClaim = (overrides: Partial<NodeClaimFacts> = {}): NodeClaimFacts => ({ name: 'default-abc12', uid: 'uid-1', deleting: false, ...overrides });
const aNode = (overrides: Partial<NodeFacts> = {}): NodeFacts => ({ name: 'ip-10-0-0-4.ec2.internal', deleting: false, ready: false, taints: [], ...overrides });
const launched = aClaim({ providerID: 'aws:///us-east-1a/i-1', annotations: { [EXPECTED_NODE_NAME_ANNOTATION]: 'ip-10-0-0-4.ec2.internal' } });

describe('cluster event router', () => {
  it('starts a workflow for a claim the first time it is seen, and again when it is recreated', () => {
    const r = new ClusterEventRouter();
    expect(r.onNodeClaim('ADDED', aClaim())).toEqual([{ kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-1' }]);
    expect(r.onNodeClaim('MODIFIED', aClaim())).toEqual([]);
    expect(r.onNodeClaim('MODIFIED', aClaim({ uid: 'uid-2' }))).toEqual([{ kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-2' }]);
  });

  it('signals on the transition to deleting and on deletion, only once each', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', aClaim());
    const signal = [{ kind: 'signal', nodeClaim: 'default-abc12', signal: 'nodeClaimChanged' }];
    expect(r.onNodeClaim('MODIFIED', aClaim({ deleting: true }))).toEqual(signal);
    expect(r.onNodeClaim('MODIFIED', aClaim({ deleting: true }))).toEqual([]);
    expect(r.onNodeClaim('DELETED', aClaim({ deleting: true }))).toEqual(signal);
  });

  it('a claim first seen deleting (deleted while no watcher ran) is started and signalled: its running workflow missed the transition', () => {
    const r = new ClusterEventRouter();
    expect(r.onNodeClaim('ADDED', aClaim({ deleting: true }))).toEqual([
      { kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-1' },
      { kind: 'signal', nodeClaim: 'default-abc12', signal: 'nodeClaimChanged' },
    ]);
    expect(r.onNodeClaim('MODIFIED', aClaim({ deleting: true }))).toEqual([]);
  });

  it('routes Node changes to the claim by providerID, only on transitions', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', launched);
    const node = aNode({ providerID: 'aws:///us-east-1a/i-1' });
    const signal = [{ kind: 'signal', nodeClaim: 'default-abc12', signal: 'nodeChanged' }];
    expect(r.onNode('ADDED', node)).toEqual(signal);
    expect(r.onNode('MODIFIED', node)).toEqual([]); // a heartbeat: nothing that matters changed
    expect(r.onNode('MODIFIED', { ...node, ready: true })).toEqual(signal);
    expect(r.onNode('MODIFIED', { ...node, ready: true, taints: ['karpenter.sh/disrupted:NoSchedule'] })).toEqual(signal);
    expect(r.onNode('MODIFIED', { ...node, ready: true, taints: ['karpenter.sh/disrupted:NoSchedule'], deleting: true })).toEqual(signal);
    expect(r.onNode('DELETED', node)).toEqual(signal);
  });

  it('ignores Nodes and CSRs that belong to no claim of ours', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', launched);
    expect(r.onNode('ADDED', aNode({ name: 'hypershift-worker-1', providerID: 'aws:///us-east-1a/i-other' }))).toEqual([]);
    expect(r.onCsr('ADDED', { name: 'csr-x', nodeNames: ['hypershift-worker-1'], pending: true })).toEqual([]);
    expect(r.onCsr('ADDED', { name: 'csr-y', nodeNames: [], pending: true })).toEqual([]);
  });

  it('rings the claim for a pending CSR naming its expected node, with the CSR name only', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', launched);
    expect(r.onCsr('ADDED', { name: 'csr-abc', nodeNames: ['ip-10-0-0-4.ec2.internal'], pending: true })).toEqual([
      { kind: 'signal', nodeClaim: 'default-abc12', signal: 'csrCreated', arg: 'csr-abc' },
    ]);
    expect(r.onCsr('MODIFIED', { name: 'csr-abc', nodeNames: ['ip-10-0-0-4.ec2.internal'], pending: false })).toEqual([]);
  });

  it('rings every claim a CSR names, by any of its CNs or its requester, once each', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', launched);
    r.onNodeClaim('ADDED', aClaim({ name: 'other', uid: 'u-other', annotations: { 'autonode.io/node-name': 'ip-10-0-0-9.ec2.internal' } }));
    expect(r.onCsr('ADDED', { name: 'csr-two-cns', nodeNames: ['ip-10-0-0-9.ec2.internal', 'ip-10-0-0-4.ec2.internal', 'ip-10-0-0-4.ec2.internal', 'elsewhere'], pending: true })).toEqual([
      { kind: 'signal', nodeClaim: 'default-abc12', signal: 'csrCreated', arg: 'csr-two-cns' },
      { kind: 'signal', nodeClaim: 'other', signal: 'csrCreated', arg: 'csr-two-cns' },
    ]);
  });

  it('routes a CSR that came before its claim named the node once the name arrives, and only while it is pending', () => {
    const r = new ClusterEventRouter();
    const csr = { name: 'csr-early', nodeNames: ['ip-10-0-0-4.ec2.internal'], pending: true };
    expect(r.onNodeClaim('ADDED', aClaim())).toEqual([{ kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-1' }]);
    // the kubelet asks before the launch wrote the expected node name on the claim
    expect(r.onCsr('ADDED', csr)).toEqual([]);
    expect(r.onCsr('ADDED', { name: 'csr-elsewhere', nodeNames: ['ip-10-9-9-9.ec2.internal'], pending: true })).toEqual([]);
    const ring = [{ kind: 'signal', nodeClaim: 'default-abc12', signal: 'csrCreated', arg: 'csr-early' }];
    expect(r.onNodeClaim('MODIFIED', launched)).toEqual(ring);
    expect(r.onNodeClaim('MODIFIED', launched)).toEqual([]); // the name did not move: nothing again
    // a claim first seen with the name already set is started, then told
    const fresh = new ClusterEventRouter();
    fresh.onCsr('ADDED', csr);
    expect(fresh.onNodeClaim('ADDED', launched)).toEqual([{ kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-1' }, ...ring]);
    // answered, deleted, or gone from a relist: forgotten
    for (const forget of [
      (x: ClusterEventRouter) => x.onCsr('MODIFIED', { ...csr, pending: false }),
      (x: ClusterEventRouter) => x.onCsr('DELETED', csr),
      (x: ClusterEventRouter) => x.reconcileCsrs(new Set(['csr-other'])),
    ]) {
      const later = new ClusterEventRouter();
      later.onCsr('ADDED', csr);
      forget(later);
      expect(later.onNodeClaim('ADDED', launched)).toEqual([{ kind: 'start', nodeClaim: 'default-abc12', uid: 'uid-1' }]);
    }
  });

  it('after a relist, reports claims deleted while the watch was away', () => {
    const r = new ClusterEventRouter();
    r.onNodeClaim('ADDED', aClaim({ name: 'a' }));
    r.onNodeClaim('ADDED', aClaim({ name: 'b' }));
    expect(r.reconcileClaims(new Set(['b']))).toEqual([{ kind: 'signal', nodeClaim: 'a', signal: 'nodeClaimChanged' }]);
    expect(r.reconcileClaims(new Set(['b']))).toEqual([]);
  });
});
