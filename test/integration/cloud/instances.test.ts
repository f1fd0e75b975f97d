import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { startCloudHarness, aLaunchRequest, type CloudHarness } from '../../support/cloud';
import { isNotFoundError, formatProviderId } from '../../../activities/cloud';

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('get, list and terminate by provider id', () => {
  it('gets a launched instance, lists it, terminates it idempotently, then reports it gone', async () => {
    const request = await aLaunchRequest(h);
    const { instance } = await h.provider.launch(request);

    await expect(h.provider.get(instance.providerId)).resolves.toMatchObject({ instanceId: instance.instanceId, state: 'running' });
    expect((await h.provider.list()).map((i) => i.providerId)).toContain(instance.providerId);
    await expect(h.provider.findByNodeClaim(request.nodeClaim.name)).resolves.toMatchObject({ providerId: instance.providerId });

    await expect(h.provider.terminate(instance.providerId)).resolves.toEqual({
      outcome: 'terminating',
      providerId: instance.providerId,
      previousState: 'running',
    });
    await expect(h.provider.terminate(instance.providerId)).resolves.toMatchObject({ outcome: 'already-gone', reason: 'terminated' });

    const gone = await h.provider.get(instance.providerId).catch((e: unknown) => e);
    if (!isNotFoundError(gone)) throw gone;
    expect(gone.reason).toBe('terminated');
    expect((await h.provider.list()).map((i) => i.providerId)).not.toContain(instance.providerId);
    await expect(h.provider.findByNodeClaim(request.nodeClaim.name)).resolves.toBeUndefined();
  });

  it('treats an instance id EC2 does not know as NotFound, and terminating it as already gone', async () => {
    const providerId = formatProviderId('us-east-1a', 'i-0123456789abcdef0');
    const missing = await h.provider.get(providerId).catch((e: unknown) => e);
    if (!isNotFoundError(missing)) throw missing;
    expect(missing.reason).toBe('absent');
    await expect(h.provider.terminate(providerId)).resolves.toEqual({ outcome: 'already-gone', providerId, reason: 'absent' });
  });
});

it('fails a DescribeInstances whose id list holds one unknown id as a whole (what the halving in instance-reads.ts relies on)', async () => {
  const { instance } = await h.provider.launch(await aLaunchRequest(h));
  const error = await h.direct
    .send(new DescribeInstancesCommand({ InstanceIds: [instance.instanceId, 'i-0123456789abcdef0'] }))
    .catch((e: unknown) => e);
  expect(error).toMatchObject({ name: 'InvalidInstanceID.NotFound' });
  await h.provider.terminate(instance.providerId);
});

describe('concurrent reads share DescribeInstances calls (instance-reads.ts), read as moto answers them', () => {
  it('answers each concurrent get and find-by-claim with its own instance, an unknown id as absent, in fewer calls than reads', async () => {
    const requests = await Promise.all([aLaunchRequest(h), aLaunchRequest(h), aLaunchRequest(h)]);
    const launched = await Promise.all(requests.map((r) => h.provider.launch(r)));
    const unknown = formatProviderId('us-east-1a', 'i-0123456789abcdef0');
    const before = h.proxy.count('DescribeInstances');

    const [gets, missing, finds] = await Promise.all([
      Promise.all(launched.map(({ instance }) => h.provider.get(instance.providerId))),
      h.provider.get(unknown).catch((e: unknown) => e),
      Promise.all([...requests.map((r) => h.provider.findByNodeClaim(r.nodeClaim.name)), h.provider.findByNodeClaim('no-such-claim')]),
    ]);

    expect(gets.map((i) => i.instanceId)).toEqual(launched.map(({ instance }) => instance.instanceId));
    if (!isNotFoundError(missing)) throw missing;
    expect(missing.reason).toBe('absent');
    expect(finds.map((i) => i?.instanceId)).toEqual([...launched.map(({ instance }) => instance.instanceId), undefined]);
    // 8 reads in 6 calls: the 4 ids (moto fails the list for the unknown id, as EC2 does),
    // halved to 2 + 2, the unknown's half to 1 + 1; and one call for the 4 claims' tag values
    expect(h.proxy.count('DescribeInstances') - before).toBe(6);

    await Promise.all(launched.map(({ instance }) => h.provider.terminate(instance.providerId)));
  });
});
