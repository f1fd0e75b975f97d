// Concurrent single-instance reads of one cluster leave as shared DescribeInstances calls:
// each caller still gets exactly its own answer, and a quiet caller waits for no window.
import { type Filter } from '@aws-sdk/client-ec2';
import { createInstanceReads, type DescribeInstances } from '../../../activities/cloud/instance-reads';
import { Ec2InstanceSchema, type Ec2Instance } from '../../../activities/cloud/ec2-schemas';
import { NotFoundError, TransientCloudError } from '../../../activities/cloud/errors';

const TAG = 'karpenter.sh/nodeclaim';
const CLUSTER_FILTERS: Filter[] = [{ Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] }];

const instance = (id: string, claim: string): Ec2Instance =>
  Ec2InstanceSchema.parse({
    InstanceId: id,
    InstanceType: 'm5.large',
    ImageId: 'ami-1',
    State: { Name: 'running' },
    Placement: { AvailabilityZone: 'us-east-1a' },
    LaunchTime: new Date('2026-11-24T12:00:00Z'),
    Tags: [{ Key: TAG, Value: claim }],
  });

/**
 * An EC2 that knows `known`, answers like DescribeInstances (an unknown id fails the whole
 * call; tag filter values are ORed), records each call, and holds each answer until
 * `release()` when `gated`.
 */
function fakeEc2(known: Ec2Instance[], gated = false) {
  const calls: { instanceIds?: string[]; values?: string[] }[] = [];
  const held: (() => void)[] = [];
  const describe: DescribeInstances = async (query) => {
    const values = query.filters?.find((f) => f.Name === `tag:${TAG}`)?.Values;
    calls.push({ ...(query.instanceIds ? { instanceIds: query.instanceIds } : {}), ...(values ? { values } : {}) });
    if (gated) await new Promise<void>((resolve) => held.push(resolve));
    if (query.instanceIds) {
      const unknown = query.instanceIds.find((id) => !known.some((i) => i.InstanceId === id));
      if (unknown) throw new NotFoundError(unknown, 'absent', `InvalidInstanceID.NotFound: ${unknown}`);
      return known.filter((i) => query.instanceIds?.includes(i.InstanceId));
    }
    expect(query.filters).toEqual(expect.arrayContaining(CLUSTER_FILTERS));
    return known.filter((i) => values?.includes(i.Tags[TAG] ?? ''));
  };
  const release = () => held.splice(0).forEach((r) => r());
  return { describe, calls, release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

it('a lone read goes out on the next turn, alone', async () => {
  const ec2 = fakeEc2([instance('i-1', 'a')]);
  const reads = createInstanceReads(ec2.describe, { key: TAG, filters: CLUSTER_FILTERS });
  await expect(reads.byId('i-1')).resolves.toMatchObject({ InstanceId: 'i-1' });
  expect(ec2.calls).toEqual([{ instanceIds: ['i-1'] }]);
});

it('reads made while the calls are out wait and leave as one call, each answered with its own instance', async () => {
  const known = ['i-1', 'i-2', 'i-3', 'i-4', 'i-5'].map((id) => instance(id, id));
  const ec2 = fakeEc2(known, true);
  const reads = createInstanceReads(ec2.describe, { key: TAG, filters: CLUSTER_FILTERS }, { maxInFlight: 2 });
  const first = reads.byId('i-1');
  await tick();
  const second = reads.byId('i-2');
  await tick();
  // two calls out: the next three wait together
  const rest = ['i-3', 'i-4', 'i-5'].map((id) => reads.byId(id));
  await tick();
  expect(ec2.calls).toEqual([{ instanceIds: ['i-1'] }, { instanceIds: ['i-2'] }]);
  ec2.release();
  await Promise.all([first, second]);
  await tick();
  expect(ec2.calls[2]).toEqual({ instanceIds: ['i-3', 'i-4', 'i-5'] });
  ec2.release();
  const answers = await Promise.all(rest);
  expect(answers.map((i) => i?.InstanceId)).toEqual(['i-3', 'i-4', 'i-5']);
  expect(ec2.calls).toHaveLength(3);
});

it('an id EC2 does not know fails only its own read: the batch is halved until it is alone', async () => {
  const known = ['i-1', 'i-2', 'i-3', 'i-5', 'i-6', 'i-7', 'i-8'].map((id) => instance(id, id));
  const ec2 = fakeEc2(known);
  const reads = createInstanceReads(ec2.describe, { key: TAG, filters: CLUSTER_FILTERS });
  const ids = ['i-1', 'i-2', 'i-3', 'i-4', 'i-5', 'i-6', 'i-7', 'i-8'];
  const answers = await Promise.all(ids.map((id) => reads.byId(id)));
  expect(answers.map((i) => i?.InstanceId)).toEqual(['i-1', 'i-2', 'i-3', undefined, 'i-5', 'i-6', 'i-7', 'i-8']);
  // 8 → 4+4 → (2+2) → (1+1): 7 calls, where one call per id would be 8 and a batch that gave up 9
  expect(ec2.calls.map((c) => c.instanceIds)).toEqual([
    ids,
    ['i-1', 'i-2', 'i-3', 'i-4'],
    ['i-5', 'i-6', 'i-7', 'i-8'],
    ['i-1', 'i-2'],
    ['i-3', 'i-4'],
    ['i-3'],
    ['i-4'],
  ]);
});

it('a call that fails for another reason fails every read it carried, and the next batch goes on', async () => {
  let fail = true;
  const ec2 = fakeEc2([instance('i-1', 'a'), instance('i-2', 'b')]);
  const describe: DescribeInstances = (query) => {
    if (fail) return Promise.reject(new TransientCloudError('DescribeInstances', 'RequestLimitExceeded', 6, 'throttled'));
    return ec2.describe(query);
  };
  const reads = createInstanceReads(describe, { key: TAG, filters: CLUSTER_FILTERS });
  const failed = await Promise.allSettled([reads.byId('i-1'), reads.byId('i-2')]);
  expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  fail = false;
  await expect(reads.byId('i-2')).resolves.toMatchObject({ InstanceId: 'i-2' });
});

it('reads by NodeClaim tag share one filter whose values are the claims, each answered with its own instances', async () => {
  const ec2 = fakeEc2([instance('i-1', 'claim-a'), instance('i-2', 'claim-b'), instance('i-3', 'claim-a')]);
  const reads = createInstanceReads(ec2.describe, { key: TAG, filters: CLUSTER_FILTERS });
  const [a, b, c] = await Promise.all([reads.byTag('claim-a'), reads.byTag('claim-b'), reads.byTag('claim-c')]);
  expect(a.map((i) => i.InstanceId)).toEqual(['i-1', 'i-3']);
  expect(b.map((i) => i.InstanceId)).toEqual(['i-2']);
  expect(c).toEqual([]);
  expect(ec2.calls).toEqual([{ values: ['claim-a', 'claim-b', 'claim-c'] }]);
});

it('a batch holds at most maxIds ids', async () => {
  const known = Array.from({ length: 5 }, (_, n) => instance(`i-${n}`, `c${n}`));
  const ec2 = fakeEc2(known);
  const reads = createInstanceReads(ec2.describe, { key: TAG, filters: CLUSTER_FILTERS }, { maxIds: 2, maxInFlight: 5 });
  await Promise.all(known.map((i) => reads.byId(i.InstanceId)));
  expect(ec2.calls.map((c) => c.instanceIds)).toEqual([['i-0', 'i-1'], ['i-2', 'i-3'], ['i-4']]);
});
