// Drift as the disruption round reads it: the real launch stamps the node class's hash and
// the instance's subnet and groups on the claim, the real cloud pass (refreshCloudFacts)
// writes what the class resolves to and what each instance is in now, and the real
// planRound compares them — an in-memory guest API server behind the real client, and a
// fake cloud provider.
import { MockActivityEnvironment } from '@temporalio/testing';
import { type Client } from '@temporalio/client';
import { createDisruptionActivities } from '../../../activities/disruption/activity';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { createProvisionerActivities } from '../../../activities/provisioner/activity';
import { INSTANCE_NETWORK_ANNOTATION, NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION, NODECLASS_HASH_VERSION_ANNOTATION, nodeClassHash } from '../../../core/disruption';
import { EC2NodeClassSchema } from '../../../core/api/ec2nodeclass';
import { normaliseDocument } from '../../../core/api/normalise';
import { anEC2NodeClass, type Doc } from '../api/builders';
import { anInstanceType } from '../instancetypes/builders';
import { FakeCloudProvider } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { poolClaims, putPoolOnClass } from '../provisioning/pool-fixture';

const cluster = { name: 'c1', region: 'us-east-1' };
const classPath = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/nc';
const claimPath = (name: string) => `/apis/karpenter.sh/v1/nodeclaims/${name}`;
const temporal = { workflow: { start: async () => undefined } } as unknown as Client;
const run = <R>(activityType: string, body: () => Promise<R>) => new MockActivityEnvironment({ activityType }).run<[], R, () => Promise<R>>(body);

/** The class as the provisioner reads it (v1 defaults applied). */
const model = (doc: Doc) => {
  const normalised = normaliseDocument(doc);
  if (normalised.status !== 'ok') throw new Error(`not a valid class: ${JSON.stringify(normalised)}`);
  return EC2NodeClassSchema.parse(normalised.objects[0]);
};

describe('nodeClassHash: what an EC2NodeClass edit drifts', () => {
  const base = anEC2NodeClass({ userData: 'boot', tags: { team: 'a' } });
  const hashOf = (spec: Doc) => nodeClassHash(model({ ...base, spec: { ...(base.spec as Doc), ...spec } }));
  const hash = nodeClassHash(model(base));

  it.each([
    ['userData', { userData: 'boot v2' }],
    ['tags', { tags: { team: 'b' } }],
    ['kubelet', { kubelet: { maxPods: 50 } }],
    ['block devices', { blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi' } }] }],
    ['metadata options', { metadataOptions: { httpTokens: 'optional' } }],
    ['detailed monitoring', { detailedMonitoring: true }],
    ['the AMI family', { amiFamily: 'AL2023' }],
  ])('%s moves the hash', (_what, spec) => {
    expect(hashOf(spec)).not.toBe(hash);
  });

  it.each([
    ['subnet selector terms', { subnetSelectorTerms: [{ id: 'subnet-9' }] }],
    ['security group selector terms', { securityGroupSelectorTerms: [{ id: 'sg-9' }] }],
    ['AMI selector terms (AMI drift judges the resolved IDs)', { amiSelectorTerms: [{ id: 'ami-99999999' }] }],
    // a default spelled out is no change
    ['the default metadata options written out', { metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' } }],
  ])('%s leave it', (_what, spec) => {
    expect(hashOf(spec)).toBe(hash);
  });

  it('an alias that names another family moves it, another version of the same family does not', () => {
    const aliased = (alias: string) => nodeClassHash(model({ ...base, spec: { ...(base.spec as Doc), amiFamily: undefined, amiSelectorTerms: [{ alias }] } }));
    expect(aliased('al2023@v20250101')).toBe(aliased('al2023@latest'));
    expect(aliased('bottlerocket@latest')).not.toBe(aliased('al2023@latest'));
  });
});

describe('planRound: drift from the class hash, the instance subnet and security groups', () => {
  let guest: FakeGuest;
  let cloud: FakeCloudProvider;
  const classDoc = (): Doc => ({ ...anEC2NodeClass({ userData: 'boot' }), metadata: { name: 'nc' } });

  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new FakeCloudProvider([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    putPoolOnClass(guest);
  });
  afterEach(async () => guest.close());

  const resolve = async () => ({ guest: guest.kube, cloud });
  /** a claim created and launched by the real activities */
  async function launch(name: string) {
    const provisioner = createProvisionerActivities({ resolve, temporal });
    await run('createClaims', () => provisioner.createClaims(poolClaims([name])));
    const lifecycle = createNodeClaimCloudActivities({ resolve });
    await run('reconcileNodeClass', () => lifecycle.reconcileNodeClass({ cluster, name }));
    await run('launchClaimInstance', () => lifecycle.launchClaimInstance({ cluster, name }));
  }
  // refresh every round: these tests move what the class resolves to between rounds
  const disruption = () => createDisruptionActivities({ resolve, nodeClassRefreshMs: 0 });
  const drifted = (name: string) => {
    const conditions = ((guest.get(claimPath(name))?.status as Doc | undefined)?.conditions ?? []) as { type: string; status: string; reason: string }[];
    const c = conditions.find((x) => x.type === 'Drifted');
    return c?.status === 'True' ? c.reason : undefined;
  };
  /** as the workflow does when a pass is due: the cloud pass, then the round */
  const round = async (activities = disruption()) => {
    await run('refreshCloudFacts', () => activities.refreshCloudFacts({ cluster }));
    return run('planRound', () => activities.planRound({ cluster }));
  };
  const roundOnly = async (activities = disruption()) => run('planRound', () => activities.planRound({ cluster }));
  const annotations = (name: string) => ((guest.get(claimPath(name))?.metadata as Doc).annotations ?? {}) as Record<string, string>;

  it('the launch stamps the class hash it launched with; an edit of the class drifts the claim, undoing it ends the drift', async () => {
    await launch('a-1');
    expect(annotations('a-1')).toEqual(expect.objectContaining({ [NODECLASS_HASH_ANNOTATION]: nodeClassHash(model(classDoc())), [NODECLASS_HASH_VERSION_ANNOTATION]: NODECLASS_HASH_VERSION }));
    const activities = disruption();
    await round(activities);
    expect(drifted('a-1')).toBeUndefined();

    guest.put(classPath, { ...classDoc(), spec: { ...(classDoc().spec as Doc), userData: 'boot, release 2' }, status: guest.get(classPath)?.status });
    await round(activities);
    expect(drifted('a-1')).toBe('NodeClassDrift');

    guest.put(classPath, { ...classDoc(), status: guest.get(classPath)?.status });
    await round(activities);
    expect(drifted('a-1')).toBeUndefined();
  });

  it('a subnet the class no longer resolves to → SubnetDrift; a security group set that moved → SecurityGroupDrift', async () => {
    await launch('a-1');
    const activities = disruption();
    await round(activities);
    expect(drifted('a-1')).toBeUndefined();
    const was = cloud.resolution;

    cloud.resolution = { ...was, subnets: [{ id: 'subnet-b', zone: 'us-east-1a', availableIpCount: 100 }] };
    await round(activities);
    // the round wrote what the class resolves to now, and judged the instance by it
    expect(((guest.get(classPath)?.status as Doc).subnets as { id: string }[]).map((s) => s.id)).toEqual(['subnet-b']);
    expect(drifted('a-1')).toBe('SubnetDrift');

    cloud.resolution = { ...was, securityGroups: [{ id: 'sg-1', name: 'nodes' }, { id: 'sg-2', name: 'more' }] };
    await round(activities);
    expect(drifted('a-1')).toBe('SecurityGroupDrift');

    cloud.resolution = was;
    await round(activities);
    expect(drifted('a-1')).toBeUndefined();
  });

  it('a launched claim without the hash (launched before autonode stamped it) is stamped with the current one, not drifted', async () => {
    await launch('a-1');
    const claim = guest.get(claimPath('a-1'))!;
    const meta = claim.metadata as Doc;
    const { [NODECLASS_HASH_ANNOTATION]: _h, [NODECLASS_HASH_VERSION_ANNOTATION]: _v, ...rest } = annotations('a-1');
    guest.put(claimPath('a-1'), { ...claim, metadata: { ...meta, annotations: rest } });
    guest.put(classPath, { ...classDoc(), spec: { ...(classDoc().spec as Doc), userData: 'edited since' }, status: guest.get(classPath)?.status });

    await round();
    expect(drifted('a-1')).toBeUndefined();
    expect(annotations('a-1')[NODECLASS_HASH_ANNOTATION]).toBe(nodeClassHash(model({ ...classDoc(), spec: { ...(classDoc().spec as Doc), userData: 'edited since' } })));
  });
  it('the launch writes where the instance is; the round alone asks EC2 nothing', async () => {
    await launch('a-1');
    expect(JSON.parse(annotations('a-1')[INSTANCE_NETWORK_ANNOTATION]!)).toEqual({ subnet: 'subnet-a', securityGroups: ['sg-1'] });
    const before = cloud.calls.length;
    await roundOnly();
    expect(cloud.calls.slice(before)).toEqual([]);
  });

  it('an instance whose groups were changed outside autonode: the cloud pass writes it, the round drifts it', async () => {
    await launch('a-1');
    const activities = disruption();
    await round(activities);
    expect(drifted('a-1')).toBeUndefined();
    const instance = cloud.instances.get('a-1')!;
    cloud.instances.set('a-1', { ...instance, securityGroupIds: ['sg-1', 'sg-rogue'] });
    // the round alone has not heard of it yet
    await roundOnly(activities);
    expect(drifted('a-1')).toBeUndefined();
    await round(activities);
    expect(JSON.parse(annotations('a-1')[INSTANCE_NETWORK_ANNOTATION]!)).toEqual({ subnet: 'subnet-a', securityGroups: ['sg-1', 'sg-rogue'] });
    expect(drifted('a-1')).toBe('SecurityGroupDrift');
  });

  it('a pass writes the claims launched since the last one a few at a time, not one after another', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `a-${i + 1}`);
    for (const name of names) await launch(name);
    // as if launched before the launch wrote it (a claim made by an older worker)
    for (const name of names) {
      const claim = guest.get(claimPath(name))!;
      const { [INSTANCE_NETWORK_ANNOTATION]: _n, ...rest } = annotations(name);
      guest.put(claimPath(name), { ...claim, metadata: { ...(claim.metadata as Doc), annotations: rest } });
    }
    // a loaded API server: each claim write takes 30 ms
    let inFlight = 0;
    let most = 0;
    const customObjects = new Proxy(guest.kube.customObjects, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (key !== 'patchClusterCustomObject' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          most = Math.max(most, ++inFlight);
          await new Promise((r) => setTimeout(r, 30));
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const slow = createDisruptionActivities({ resolve: async () => ({ guest: { ...guest.kube, customObjects }, cloud }), nodeClassRefreshMs: 0 });
    const pass = await run('refreshCloudFacts', () => slow.refreshCloudFacts({ cluster }));
    expect(pass).toMatchObject({ instances: 12, claimsWritten: 12 });
    for (const name of names) expect(JSON.parse(annotations(name)[INSTANCE_NETWORK_ANNOTATION]!)).toEqual({ subnet: 'subnet-a', securityGroups: ['sg-1'] });
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
  });

  it('a claim whose instance facts are not known keeps its subnet drift (it does not flap off and on), and a pass that finds nothing moved writes nothing', async () => {
    await launch('a-1');
    const activities = disruption();
    cloud.resolution = { ...cloud.resolution, subnets: [{ id: 'subnet-b', zone: 'us-east-1a', availableIpCount: 100 }] };
    await round(activities);
    expect(drifted('a-1')).toBe('SubnetDrift');
    const since = ((guest.get(claimPath('a-1'))?.status as Doc).conditions as { type: string; lastTransitionTime: string }[]).find((c) => c.type === 'Drifted')!.lastTransitionTime;
    // the annotation lost (an edit, a claim made by another tool): the round cannot judge subnets
    const claim = guest.get(claimPath('a-1'))!;
    const { [INSTANCE_NETWORK_ANNOTATION]: _n, ...rest } = annotations('a-1');
    guest.put(claimPath('a-1'), { ...claim, metadata: { ...(claim.metadata as Doc), annotations: rest } });
    await roundOnly(activities);
    expect(drifted('a-1')).toBe('SubnetDrift');
    expect(((guest.get(claimPath('a-1'))?.status as Doc).conditions as { type: string; lastTransitionTime: string }[]).find((c) => c.type === 'Drifted')!.lastTransitionTime).toBe(since);
    // the next pass writes it back; a second pass finds nothing to write
    const first = await run('refreshCloudFacts', () => activities.refreshCloudFacts({ cluster }));
    expect(first).toEqual({ instances: 1, classesWritten: 0, claimsWritten: 1 });
    const second = await run('refreshCloudFacts', () => activities.refreshCloudFacts({ cluster }));
    expect(second).toEqual({ instances: 1, classesWritten: 0, claimsWritten: 0 });
  });
});
