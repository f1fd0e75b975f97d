// A live worker must never look dead: each step of a packing activity (reading a large cluster,
// a throttled EC2 catalog, solving, creating claims) may outlast the workflow's 20 s heartbeat
// timeout on a loaded worker, and a step retried for that reason starts over and times out
// again (seen in `npm run scale`: planBatch at attempt 20, every one timed out in "read").
// A launch attempt heartbeats too, and hands its cancellation signal to the launch, so an
// attempt the server gave up on sends no CreateFleet (test/integration/cloud/launch.test.ts).
import { Context } from '@temporalio/activity';
import { type Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { createProvisionerActivities } from '../../../activities/provisioner/activity';
import { type LaunchRequest, type LaunchResult } from '../../../activities/cloud';
import { type LaunchOutcome } from '../../../core/lifecycle';
import { anInstanceType } from '../instancetypes/builders';
import { RecordingCloud } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { type Doc } from '../api/builders';
import { poolClaims, putPoolOnClass } from './pool-fixture';

const cluster = { name: 'c1', region: 'us-east-1' };
const taskQueues = { control: 'control', cloud: 'cloud', packing: 'packing' };
const temporal = { workflow: { start: async () => undefined } } as unknown as Client;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('packing activities heartbeat through every step', () => {
  it('a read slower than several heartbeat intervals beats all along, naming its step', async () => {
    const beats: unknown[] = [];
    // the cluster's clients take 300 ms to come (a loaded API server), then the read fails
    const resolve = async () => {
      await delay(300);
      throw new Error('guest unreachable');
    };
    const provisioner = createProvisionerActivities({ resolve, temporal, heartbeatMs: 40 });
    const env = new MockActivityEnvironment({ activityType: 'planBatch' });
    env.on('heartbeat', (details: unknown) => beats.push(details));
    await expect(env.run(() => provisioner.planBatch({ cluster, taskQueues, batchId: 'b1', unavailable: [] }))).rejects.toThrow('guest unreachable');
    // one beat as the read starts, then one every 40 ms until it failed
    expect(beats.length).toBeGreaterThanOrEqual(4);
    // each beat names the step (after the activity's first, 'start') and how long it has run
    const stages = (beats as { stage: string }[]).map((b) => b.stage);
    expect(new Set(stages)).toEqual(new Set(['start', 'read: held offerings', 'read: cluster']));
    // the slow part is named: every beat from the first of its step on says 'read: cluster'
    const from = stages.indexOf('read: cluster');
    expect(stages.slice(from).every((stage) => stage === 'read: cluster')).toBe(true);
    expect(stages.length - from).toBeGreaterThanOrEqual(4);
  });

  it('stops beating once the activity has settled', async () => {
    let beats = 0;
    const provisioner = createProvisionerActivities({ resolve: async () => Promise.reject(new Error('no cluster')), temporal, heartbeatMs: 20 });
    const env = new MockActivityEnvironment({ activityType: 'planBatch' });
    env.on('heartbeat', () => (beats += 1));
    await expect(env.run(() => provisioner.planBatch({ cluster, taskQueues, batchId: 'b1', unavailable: [] }))).rejects.toThrow('no cluster');
    const settled = beats;
    await delay(100);
    expect(beats).toBe(settled);
  });
});

describe('a launch attempt', () => {
  let guest: FakeGuest;
  let cloud: RecordingCloud;
  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new RecordingCloud([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    putPoolOnClass(guest);
  });
  afterEach(async () => guest.close());

  /** NodeClaim a-1 of pool a (one m5.large, on-demand), made by the provisioner's createClaims */
  async function createClaimA1(): Promise<void> {
    const provisioner = createProvisionerActivities({ resolve: async () => ({ guest: guest.kube, cloud }), temporal });
    await new MockActivityEnvironment({ activityType: 'createClaims' }).run(() => provisioner.createClaims(poolClaims(['a-1'])));
  }

  it('heartbeats and hands the launch its cancellation signal', async () => {
    const resolve = async () => ({ guest: guest.kube, cloud });
    await createClaimA1();
    const lifecycle = createNodeClaimCloudActivities({ resolve });
    await new MockActivityEnvironment({ activityType: 'reconcileNodeClass' }).run(() => lifecycle.reconcileNodeClass({ cluster, name: 'a-1' }));
    const env = new MockActivityEnvironment({ activityType: 'launchClaimInstance' });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    let signal: AbortSignal | undefined;
    await env.run(async () => {
      signal = Context.current().cancellationSignal;
      return lifecycle.launchClaimInstance({ cluster, name: 'a-1' });
    });
    expect(beats[0]).toMatchObject({ stage: 'launch' });
    expect(cloud.requests).toHaveLength(1);
    expect(cloud.requests[0]?.signal).toBe(signal);
  });

  it('records the instance on the claim as it is after the launch, though it changed while EC2 was called', async () => {
    const claimPath = '/apis/karpenter.sh/v1/nodeclaims/a-1';
    await createClaimA1();
    // someone else writes the claim while the (slow) CreateFleet is out: its resourceVersion moves
    class SlowCloud extends RecordingCloud {
      override async launch(request: LaunchRequest): Promise<LaunchResult> {
        const stored = guest.get(claimPath) as Doc;
        guest.put(claimPath, { ...stored, metadata: { ...(stored.metadata as Doc), annotations: { ...((stored.metadata as Doc).annotations as Doc), 'example.com/touched': 'yes' } } });
        return super.launch(request);
      }
    }
    const slow = new SlowCloud([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    const lifecycle = createNodeClaimCloudActivities({ resolve: async () => ({ guest: guest.kube, cloud: slow }) });
    await new MockActivityEnvironment({ activityType: 'reconcileNodeClass' }).run(() => lifecycle.reconcileNodeClass({ cluster, name: 'a-1' }));
    const launched = await new MockActivityEnvironment({ activityType: 'launchClaimInstance' }).run<[], LaunchOutcome, () => Promise<LaunchOutcome>>(() => lifecycle.launchClaimInstance({ cluster, name: 'a-1' }));
    const claim = guest.get(claimPath) as { metadata: { annotations: Record<string, string> }; status: { providerID?: string } };
    expect(claim.status.providerID).toBe(launched.providerId);
    expect(claim.metadata.annotations['example.com/touched']).toBe('yes');
  });
});
