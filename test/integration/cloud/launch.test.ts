import { DeleteLaunchTemplateCommand, DescribeInstancesCommand, DescribeLaunchTemplatesCommand, DescribeLaunchTemplateVersionsCommand } from '@aws-sdk/client-ec2';
import { startCloudHarness, aLaunchRequest, liveInstancesOf, offerings, type CloudHarness } from '../../support/cloud';
import { isAuthorizationError, isInsufficientCapacityError, isInvalidRequestError, isNotFoundError, type InstanceTypeOption } from '../../../activities/cloud';
import { FRESH_LOOKUP_MS } from '../../../activities/cloud/launch';
import { randomUUID } from 'node:crypto';

/** The request with user data of its own: a launch template this process has not kept yet (launch-template.ts). */
const withFreshTemplate = <T extends { nodeClass: { userData: string } }>(request: T): T => ({
  ...request,
  nodeClass: { ...request.nodeClass, userData: `${request.nodeClass.userData}\n# ${randomUUID()}` },
});

async function eventuallyTrue(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.proxy.reset();
  h.retries.length = 0;
});

describe('launching a NodeClaim through CreateFleet', () => {
  it('launches one tagged instance and reports where it landed', async () => {
    const request = await aLaunchRequest(h);
    const started = Date.now();
    const result = await h.provider.launch(request);
    const elapsed = Date.now() - started;

    expect(result.reused).toBe(false);
    expect(result.instance.providerId).toMatch(/^aws:\/\/\/us-east-1[abc]\/i-[0-9a-f]+$/);
    expect(result.instance).toMatchObject({ instanceType: 'm5.large', capacityType: 'spot', imageId: h.fixtures.imageId });
    expect(result.instance.privateDnsName).toMatch(/\.ec2\.internal$/);
    expect(result.instance.privateIpAddresses.length).toBeGreaterThan(0);
    expect(result.instance.tags).toMatchObject({
      [`kubernetes.io/cluster/${h.cluster.name}`]: 'owned',
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/nodeclaim': request.nodeClaim.name,
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      Name: request.nodeClaim.name,
      team: 'autonode',
    });
    const fleet = h.proxy.forwardedFleetRequests[0];
    expect(fleet?.get('SpotOptions.AllocationStrategy')).toBe('price-capacity-optimized');
    expect(fleet?.get('ClientToken')).toContain(request.nodeClaim.uid);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([result.instance.instanceId]);
    process.stdout.write(`[measure] launch latency against moto: ${elapsed} ms\n`);
  });

  it('falls back from an exhausted spot pool to another pool in the same call', async () => {
    const request = await aLaunchRequest(h, { zones: ['us-east-1a', 'us-east-1b'] });
    h.proxy.exhaust([{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' }]);

    const result = await h.provider.launch(request);

    expect(h.proxy.injected).toEqual([
      expect.objectContaining({ kind: 'insufficient-capacity', pools: [expect.objectContaining({ instanceType: 'm5.large', zone: 'us-east-1a' })], forwarded: true }),
    ]);
    expect(result.instance).toMatchObject({ capacityType: 'spot' });
    expect(`${result.instance.instanceType}/${result.instance.zone}`).not.toBe('m5.large/us-east-1a');
    expect(result.exhaustedOfferings).toEqual([
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot', reason: 'InsufficientInstanceCapacity' },
    ]);
  });

  it('reports every exhausted spot pool, and the re-planned on-demand launch succeeds', async () => {
    const request = await aLaunchRequest(h, { zones: ['us-east-1a'] });
    h.proxy.exhaust([
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' },
      { instanceType: 'm5.xlarge', zone: 'us-east-1a', capacityType: 'spot', errorCode: 'MaxSpotInstanceCountExceeded' },
    ]);

    const failure = await h.provider.launch(request).catch((e: unknown) => e);
    if (!isInsufficientCapacityError(failure)) throw failure;
    expect(failure.offerings).toEqual([
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot', reason: 'InsufficientInstanceCapacity' },
      { instanceType: 'm5.xlarge', zone: 'us-east-1a', capacityType: 'spot', reason: 'MaxSpotInstanceCountExceeded' },
    ]);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([]);

    // The caller remembers the exhausted offerings and re-plans: spot is no longer available.
    const exhausted = new Set(failure.offerings.map((o) => `${o.instanceType}/${o.zone}/${o.capacityType}`));
    const replanned = request.instanceTypes.map((it) => ({
      ...it,
      offerings: it.offerings.map((o) => ({ ...o, available: !exhausted.has(`${it.instanceType}/${o.zone}/${o.capacityType}`) })),
    }));
    const result = await h.provider.launch({ ...request, instanceTypes: replanned });
    expect(result.instance).toMatchObject({ capacityType: 'on-demand', zone: 'us-east-1a', instanceType: 'm5.large' });
    expect(h.proxy.forwardedFleetRequests.at(-1)?.get('OnDemandOptions.AllocationStrategy')).toBe('lowest-price');
  });

  it('survives a lost CreateFleet response: retried, and exactly one instance exists', async () => {
    const request = await aLaunchRequest(h);
    h.proxy.inject({ kind: 'drop-response', action: 'CreateFleet' });

    const result = await h.provider.launch(request);

    expect(h.proxy.injected).toEqual([{ kind: 'drop-response', action: 'CreateFleet' }]);
    expect(h.retries).toEqual([expect.objectContaining({ operation: 'CreateFleet', errorKind: 'network' })]);
    expect(result.reused).toBe(true);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([result.instance.instanceId]);

    // A later activity retry (e.g. after a worker crash) finds the same instance.
    const again = await h.provider.launch(request);
    expect(again.instance.instanceId).toBe(result.instance.instanceId);
    expect(h.proxy.count('CreateFleet')).toBe(1);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([result.instance.instanceId]);
  });

  it('an attempt overtaken while it was slow finds the instance a later attempt launched, and launches no second one', async () => {
    // a template no launch has used yet: this process must look it up
    const request = withFreshTemplate(await aLaunchRequest(h));
    // the first attempt looks for the claim's instance, then stalls before its launch
    // template is found (a loaded worker, throttled calls) for longer than FRESH_LOOKUP_MS
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    h.proxy.inject({ kind: 'hold', action: 'DescribeLaunchTemplates', hold: () => held });
    const first = h.provider.launch(request);
    await eventuallyTrue(() => h.proxy.injected.length > 0);
    // meanwhile the server gave up on it and a second attempt launched, on another worker
    const second = await h.otherWorker.launch(request);
    expect(second.reused).toBe(false);
    await new Promise((r) => setTimeout(r, FRESH_LOOKUP_MS + 500));
    release();

    const overtaken = await first;
    expect(overtaken).toMatchObject({ reused: true, instance: { instanceId: second.instance.instanceId } });
    expect(h.proxy.count('CreateFleet')).toBe(1);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([second.instance.instanceId]);
  });

  it('an attempt given up on (its signal aborted) sends no CreateFleet', async () => {
    const request = await aLaunchRequest(h);
    const abandoned = new AbortController();
    abandoned.abort(new Error('activity timed out'));
    const failure = await h.provider.launch({ ...request, signal: abandoned.signal }).catch((e: unknown) => e);
    expect(failure).toEqual(expect.objectContaining({ message: 'activity timed out' }));
    expect(h.proxy.count('CreateFleet')).toBe(0);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([]);
  });

  it('absorbs throttling and 5xx without failing the launch', async () => {
    const request = withFreshTemplate(await aLaunchRequest(h));
    h.proxy.inject({ kind: 'throttle', action: 'CreateFleet', times: 2 });
    h.proxy.inject({ kind: 'server-error', action: 'DescribeInstances', times: 1 });
    h.proxy.inject({ kind: 'throttle', action: 'DescribeLaunchTemplates', times: 1 });

    const result = await h.provider.launch(request);

    expect(h.proxy.injected.map((f) => `${f.kind}:${f.action}`).sort()).toEqual([
      'server-error:DescribeInstances',
      'throttle:CreateFleet',
      'throttle:CreateFleet',
      'throttle:DescribeLaunchTemplates',
    ]);
    expect(h.retries.map((r) => `${r.operation}:${r.code}`).sort()).toEqual([
      'CreateFleet:RequestLimitExceeded',
      'CreateFleet:RequestLimitExceeded',
      'DescribeInstances:InternalError',
      'DescribeLaunchTemplates:RequestLimitExceeded',
    ]);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([result.instance.instanceId]);
    process.stdout.write(`[measure] retries absorbed in one launch: ${h.retries.length}\n`);
  });

  it('a launch refused for a template deleted behind its back forgets it: the next launch creates it again', async () => {
    const request = withFreshTemplate(await aLaunchRequest(h));
    const owned = async () =>
      ((await h.direct.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: `tag:kubernetes.io/cluster/${h.cluster.name}`, Values: ['owned'] }] }))).LaunchTemplates ?? []).map((t) => t.LaunchTemplateId);
    const before = await owned();
    const launched = await h.provider.launch(request);
    const created = (await owned()).filter((id) => !before.includes(id));
    expect(created).toHaveLength(1);
    await h.direct.send(new DeleteLaunchTemplateCommand({ LaunchTemplateId: created[0] }));
    await h.provider.terminate(launched.instance.providerId);
    const again = { ...request, nodeClaim: { name: `${request.nodeClaim.name}-b`, uid: randomUUID() } };
    const refused = await h.provider.launch(again).catch((e: unknown) => e);
    if (!isNotFoundError(refused)) throw refused;
    expect(refused.message).toContain('InvalidLaunchTemplateId.NotFound');
    // forgotten: this launch looks the template up, finds none, and creates it again
    const third = await h.provider.launch({ ...request, nodeClaim: { name: `${request.nodeClaim.name}-c`, uid: randomUUID() } });
    expect(await liveInstancesOf(h, `${request.nodeClaim.name}-c`)).toEqual([third.instance.instanceId]);
    await h.provider.terminate(third.instance.providerId);
  });

  it('fails at once, naming the missing permission, when CreateFleet is not authorised', async () => {
    const request = await aLaunchRequest(h);
    h.proxy.inject({ kind: 'unauthorized', action: 'CreateFleet', times: 5 });

    const failure = await h.provider.launch(request).catch((e: unknown) => e);

    if (!isAuthorizationError(failure)) throw failure;
    const auth = failure;
    expect(auth.retryable).toBe(false);
    expect(auth.missingPermissions).toEqual(['ec2:CreateFleet']);
    expect(auth.message).toContain('ec2:CreateFleet');
    expect(h.proxy.count('CreateFleet')).toBe(1);
    expect(h.retries).toEqual([]);
  });
});

/** The LaunchTemplateConfigs of a CreateFleet request as moto received it. */
function fleetConfigs(params: URLSearchParams | undefined): { templateId: string; overrides: string[] }[] {
  const configs: { templateId: string; overrides: string[] }[] = [];
  for (let c = 1; params?.has(`LaunchTemplateConfigs.${c}.LaunchTemplateSpecification.LaunchTemplateId`); c++) {
    const overrides: string[] = [];
    for (let o = 1; params.has(`LaunchTemplateConfigs.${c}.Overrides.${o}.InstanceType`); o++) {
      const field = (name: string) => params.get(`LaunchTemplateConfigs.${c}.Overrides.${o}.${name}`) ?? '';
      overrides.push(`${field('InstanceType')}/${field('AvailabilityZone')} ${field('ImageId')}`);
    }
    configs.push({ templateId: params.get(`LaunchTemplateConfigs.${c}.LaunchTemplateSpecification.LaunchTemplateId`) ?? '', overrides });
  }
  return configs;
}

describe('launching a NodeClaim whose instance types span amd64 and arm64', () => {
  // t4g.large is the cheaper: moto launches the first override of the first config, which is it.
  const mixed: InstanceTypeOption[] = [
    { instanceType: 'm5.large', architecture: 'amd64', offerings: offerings({ zones: ['us-east-1a'], onDemand: 0.096 }) },
    { instanceType: 't4g.large', architecture: 'arm64', offerings: offerings({ zones: ['us-east-1a', 'us-east-1b'], onDemand: 0.067 }) },
  ];
  const bothImages = () => ({ amd64: h.fixtures.imageId, arm64: h.fixtures.arm64ImageId });

  async function templateImage(templateId: string): Promise<string | undefined> {
    const out = await h.direct.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: templateId, Versions: ['$Default'] }));
    return out.LaunchTemplateVersions?.[0]?.LaunchTemplateData?.ImageId;
  }

  it('sends one launch template per image, every override naming its own architecture’s image, and boots t4g.large from the arm64 AMI', async () => {
    const { imageId: x86, arm64ImageId: arm } = h.fixtures;
    const request = await aLaunchRequest(h, { images: bothImages(), instanceTypes: mixed, capacityTypes: ['on-demand'] });

    const result = await h.provider.launch(request);

    const configs = fleetConfigs(h.proxy.forwardedFleetRequests[0]);
    expect(configs.map((c) => c.overrides)).toEqual([
      [`t4g.large/us-east-1a ${arm}`, `t4g.large/us-east-1b ${arm}`],
      [`m5.large/us-east-1a ${x86}`],
    ]);
    expect(await Promise.all(configs.map((c) => templateImage(c.templateId)))).toEqual([arm, x86]);
    expect(result.instance).toMatchObject({ instanceType: 't4g.large', imageId: arm });
    const described = await h.direct.send(new DescribeInstancesCommand({ InstanceIds: [result.instance.instanceId] }));
    expect(described.Reservations?.[0]?.Instances?.[0]).toMatchObject({ InstanceType: 't4g.large', ImageId: arm, Architecture: 'arm64' });
  });

  it('moves to the amd64 config when every arm64 pool is exhausted, and boots the x86_64 AMI', async () => {
    const request = await aLaunchRequest(h, { images: bothImages(), instanceTypes: mixed, capacityTypes: ['on-demand'] });
    h.proxy.exhaust(['us-east-1a', 'us-east-1b'].map((zone) => ({ instanceType: 't4g.large', zone, capacityType: 'on-demand' as const })));

    const result = await h.provider.launch(request);

    expect(result.instance).toMatchObject({ instanceType: 'm5.large', imageId: h.fixtures.imageId });
    expect(result.exhaustedOfferings).toEqual([
      { instanceType: 't4g.large', zone: 'us-east-1a', capacityType: 'on-demand', reason: 'InsufficientInstanceCapacity' },
      { instanceType: 't4g.large', zone: 'us-east-1b', capacityType: 'on-demand', reason: 'InsufficientInstanceCapacity' },
    ]);
    // the fault proxy removed the emptied arm64 config; what moto saw is the amd64 one alone
    expect(fleetConfigs(h.proxy.forwardedFleetRequests[0]).map((c) => c.overrides)).toEqual([[`m5.large/us-east-1a ${h.fixtures.imageId}`]]);
  });

  it('leaves out the types of an architecture the node class has no AMI for', async () => {
    const request = await aLaunchRequest(h, { images: { amd64: h.fixtures.imageId }, instanceTypes: mixed, capacityTypes: ['on-demand'] });

    const result = await h.provider.launch(request);

    expect(result.instance).toMatchObject({ instanceType: 'm5.large', imageId: h.fixtures.imageId });
    expect(fleetConfigs(h.proxy.forwardedFleetRequests[0]).map((c) => c.overrides)).toEqual([[`m5.large/us-east-1a ${h.fixtures.imageId}`]]);
  });

  it('refuses without calling CreateFleet, naming the architecture, when no type has an AMI', async () => {
    const request = await aLaunchRequest(h, { images: { amd64: h.fixtures.imageId }, instanceTypes: mixed.filter((o) => o.architecture === 'arm64'), capacityTypes: ['on-demand'] });

    const failure = await h.provider.launch(request).catch((e: unknown) => e);

    if (!isInvalidRequestError(failure)) throw failure;
    expect(failure.message).toMatch(/no image for arm64.*t4g\.large/);
    expect(h.proxy.count('CreateFleet')).toBe(0);
    expect(await liveInstancesOf(h, request.nodeClaim.name)).toEqual([]);
  });
});
