import { type NodeClaimResult } from '../../core/lifecycle';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

/**
 * Issue 10's related faults: a NodeClaim naming a class that is missing or of another kind,
 * or asking for impossible resources, is told so on its status and in an Event — never
 * launched with some other class, never a failed workflow, and deletion always works.
 */
describe('NodeClaim input the lifecycle cannot launch (real guest API server, Temporal, moto)', () => {
  let lh: LifecycleHarness;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
  });
  afterAll(async () => {
    await lh?.close();
  });

  async function warnings(name: string) {
    const events = await lh.guest.core.listEventForAllNamespaces({ fieldSelector: `source=karpenter,involvedObject.name=${name},type=Warning` });
    return events.items.map((e) => `${e.reason}: ${e.message}`);
  }

  it('a missing EC2NodeClass: NodeClassReady=False and a Warning Event, no instance, and `kubectl delete` ends it', async () => {
    const name = `in-${lh.id}-missing`;
    const uid = await lh.createNodeClaim(name, { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: `nope-${lh.id}` } });
    const handle = await lh.startLifecycle(name, uid);
    const condition = await eventually('NodeClassReady=False on the claim', async () => {
      const c = await lh.claims.get(name);
      return c?.status?.conditions?.find((x) => x.type === 'NodeClassReady' && x.status === 'False');
    });
    expect(condition).toMatchObject({ reason: 'NodeClassNotFound', message: expect.stringContaining(`EC2NodeClass nope-${lh.id} (spec.nodeClassRef.name) does not exist`) });
    expect(await eventually('the Warning Event', async () => ((await warnings(name)).length > 0 ? warnings(name) : undefined))).toEqual([expect.stringMatching(/^NodeClassNotReady: EC2NodeClass nope-/)]);
    await lh.claims.delete(name);
    const result: NodeClaimResult = await handle.result();
    expect(result).toEqual({ nodeClaim: name, end: { kind: 'deleted', by: 'nodeclaim' } });
    await eventually('the claim to be gone', async () => ((await lh.claims.get(name)) === undefined ? true : undefined));
    expect(await lh.h.provider.list()).not.toContainEqual(expect.objectContaining({ tags: expect.objectContaining({ 'karpenter.sh/nodeclaim': name }) }));
  });

  it.each([
    ['another kind of node class', { nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' } }, /UnsupportedNodeClass|autonode launches only from karpenter\.k8s\.aws EC2NodeClass/],
    ['a negative cpu request', { resources: { requests: { cpu: '-5' } } }, /spec\.resources\.requests\.cpu: "-5" is negative/],
    ['a cpu request no instance type holds', { resources: { requests: { cpu: '1000' } } }, /allocatable for spec\.resources\.requests \(cpu: 1000\)/],
  ])('%s: ends the claim with the reason in a Warning Event, launching nothing', async (_what, spec, says) => {
    const name = `in-${lh.id}-${Math.abs(JSON.stringify(spec).split('').reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7)).toString(36)}`;
    const uid = await lh.createNodeClaim(name, spec);
    const handle = await lh.startLifecycle(name, uid);
    const result: NodeClaimResult = await handle.result();
    expect(result.end).toEqual({ kind: 'launchFailed', reason: expect.stringMatching(says) });
    expect(result.instance).toBeUndefined();
    expect((await warnings(name)).join('\n')).toMatch(says);
    await eventually('the claim to be gone', async () => ((await lh.claims.get(name)) === undefined ? true : undefined));
  });
});
