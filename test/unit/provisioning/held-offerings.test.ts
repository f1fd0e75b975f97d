// The offerings planning held unavailable (an insufficient-capacity error, an interrupted
// spot pool) reach the launch: the plan keeps those among its claims' types, createClaims
// writes each claim's on it, and the launch leaves them out while Karpenter's 3-minute TTL
// runs from the claim's creation — unless they are all the claim has.
import { MockActivityEnvironment } from '@temporalio/testing';
import { type Client } from '@temporalio/client';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { createProvisionerActivities } from '../../../activities/provisioner/activity';
import { planView } from '../../../activities/provisioner/plan-view';
import { solve } from '../../../core/packing';
import { heldOfferingsOf, unavailableOfferingsValue, UNAVAILABLE_OFFERINGS_ANNOTATION, type HeldOffering } from '../../../core/provisioning';
import { anInstanceType } from '../instancetypes/builders';
import { RecordingCloud } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { type Doc } from '../api/builders';
import { poolClaims, putPoolOnClass } from './pool-fixture';
import { benchCatalog, BENCH_NOW, planningOf, worldOf, type SimCluster } from '../../bench/disruption-cluster';

const held = (instanceType: string, zone: string, capacityType: 'spot' | 'on-demand' = 'on-demand'): HeldOffering => ({ instanceType, zone, capacityType });
const created = '2026-11-24T12:00:00Z';
const claimWith = (value: string | undefined, creationTimestamp: string | null = created) => ({
  metadata: { ...(value !== undefined ? { annotations: { [UNAVAILABLE_OFFERINGS_ANNOTATION]: value } } : {}), ...(creationTimestamp ? { creationTimestamp } : {}) },
});

describe('the annotation', () => {
  it('names only the claim’s own types, once each, sorted', () => {
    const value = unavailableOfferingsValue([held('m5.large', 'us-east-1b'), held('c5.large', 'us-east-1a'), held('m5.large', 'us-east-1a'), held('m5.large', 'us-east-1b')], ['m5.large', 'm5.xlarge']);
    expect(value).toBe('m5.large/us-east-1a/on-demand,m5.large/us-east-1b/on-demand');
    expect(unavailableOfferingsValue([held('c5.large', 'us-east-1a')], ['m5.large'])).toBeUndefined();
  });

  it.each([
    ['within the TTL', '2026-11-24T12:02:59Z', ['m5.large/us-east-1a/spot']],
    ['at the TTL', '2026-11-24T12:03:00Z', []],
    ['long after', '2026-11-24T13:00:00Z', []],
  ])('is honoured %s (3 minutes from the claim’s creation)', (_when, at, expected) => {
    expect([...heldOfferingsOf(claimWith('m5.large/us-east-1a/spot'), Date.parse(at))]).toEqual(expected);
  });

  it('ignores entries that are not type/zone/capacityType, and a claim without a creation time', () => {
    const at = Date.parse('2026-11-24T12:01:00Z');
    expect([...heldOfferingsOf(claimWith('m5.large/us-east-1a/spot, ,m5.large,a/b/c/d,/us-east-1a/spot,c5.large/us-east-1b/on-demand'), at)]).toEqual(['m5.large/us-east-1a/spot', 'c5.large/us-east-1b/on-demand']);
    expect(heldOfferingsOf(claimWith('m5.large/us-east-1a/spot', null), at).size).toBe(0);
    expect(heldOfferingsOf(claimWith(undefined), at).size).toBe(0);
  });
});

describe('planning keeps the held offerings among its claims’ types', () => {
  const pool = { types: ['m5.large', 'm5.xlarge'], zones: ['us-east-1a', 'us-east-1b'], budget: '10%' };
  const empty: SimCluster = { pool, catalog: benchCatalog(pool), nodes: new Map(), pods: new Map(), launched: 0 };
  const pending = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'a', namespace: 'app' },
    spec: { containers: [{ name: 'main', resources: { requests: { cpu: '500m', memory: '1Gi' } } }] },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
  };

  it('a held offering of a type the claims may use travels; one of a type no claim uses does not', async () => {
    const world = { ...worldOf(empty), provisionable: [pending] };
    const state = { ...planningOf(empty, world, 'batch-1'), unavailable: [held('m5.large', 'us-east-1a'), held('r5.large', 'us-east-1a')] };
    const { planned } = await planView(state, { now: BENCH_NOW, solve: async (input) => solve(input) });
    expect(planned.claims).toHaveLength(1);
    expect(planned.unavailable).toEqual([held('m5.large', 'us-east-1a')]);
  });

  it('nothing held, nothing carried', async () => {
    const world = { ...worldOf(empty), provisionable: [pending] };
    const { planned } = await planView(planningOf(empty, world, 'batch-2'), { now: BENCH_NOW, solve: async (input) => solve(input) });
    expect(planned.unavailable).toBeUndefined();
  });
});

describe('createClaims writes it, the launch honours it', () => {
  const cluster = { name: 'c1', region: 'us-east-1' };
  const temporal = { workflow: { start: async () => undefined } } as unknown as Client;
  const run = <R>(activityType: string, body: () => Promise<R>) => new MockActivityEnvironment({ activityType }).run<[], R, () => Promise<R>>(body);

  let guest: FakeGuest;
  let cloud: RecordingCloud;
  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new RecordingCloud([anInstanceType('m5.large', {}, ['us-east-1a', 'us-east-1b'])]);
    putPoolOnClass(guest);
  });
  afterEach(async () => guest.close());
  const resolve = async () => ({ guest: guest.kube, cloud });

  async function createAndLaunch(unavailable: HeldOffering[], at: string) {
    const provisioner = createProvisionerActivities({ resolve, temporal });
    await run('createClaims', () => provisioner.createClaims(poolClaims(['a-1'], unavailable)));
    const lifecycle = createNodeClaimCloudActivities({ resolve, now: () => new Date(at) });
    await run('reconcileNodeClass', () => lifecycle.reconcileNodeClass({ cluster, name: 'a-1' }));
    await run('launchClaimInstance', () => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }));
    const request = cloud.requests.at(-1)!;
    const annotations = ((guest.get('/apis/karpenter.sh/v1/nodeclaims/a-1')?.metadata as Doc).annotations ?? {}) as Record<string, string>;
    const offered = request.instanceTypes.flatMap((t) => t.offerings.filter((o) => o.available).map((o) => `${t.instanceType}/${o.zone}/${o.capacityType}`));
    return { annotation: annotations[UNAVAILABLE_OFFERINGS_ANNOTATION], offered, zones: request.zones };
  }

  it('within the TTL the held zone is not offered to the fleet', async () => {
    const got = await createAndLaunch([held('m5.large', 'us-east-1a'), held('c5.large', 'us-east-1b')], '2026-11-24T12:01:00Z');
    expect(got.annotation).toBe('m5.large/us-east-1a/on-demand');
    expect(got.offered).toEqual(['m5.large/us-east-1b/on-demand']);
    expect(got.zones).toEqual(['us-east-1b']);
  });

  it('after the TTL the memory is forgotten', async () => {
    const got = await createAndLaunch([held('m5.large', 'us-east-1a')], '2026-11-24T12:05:00Z');
    expect(got.offered).toEqual(['m5.large/us-east-1a/on-demand', 'm5.large/us-east-1b/on-demand']);
  });

  it('when every offering the claim has is held, EC2 decides (the memory is advice, not a failed launch)', async () => {
    const got = await createAndLaunch([held('m5.large', 'us-east-1a'), held('m5.large', 'us-east-1b')], '2026-11-24T12:01:00Z');
    expect(got.annotation).toBe('m5.large/us-east-1a/on-demand,m5.large/us-east-1b/on-demand');
    expect(got.offered).toEqual(['m5.large/us-east-1a/on-demand', 'm5.large/us-east-1b/on-demand']);
  });
});
