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
