// Every launch reconciles its node class first. In a burst of claims of one class the status
// it would write is the same each time: the first launch writes it, the rest read the class
// once and write nothing (the scale run's 3 × 2,000 pods made ~500 such claims). A
// resolution that moves is written again. The real API server reads the written status
// back as equal: test/integration/nodeclass-status.test.ts.
import { type Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeClaimCloudActivities } from '../../../activities/nodeclaim/cloud';
import { createProvisionerActivities } from '../../../activities/provisioner/activity';
import { anInstanceType } from '../instancetypes/builders';
import { RecordingCloud } from '../metrics/fake-cloud';
import { startFakeGuest, type FakeGuest } from '../metrics/fake-guest';
import { poolClaims, putPoolOnClass } from '../provisioning/pool-fixture';

const cluster = { name: 'c1', region: 'us-east-1' };
const temporal = { workflow: { start: async () => undefined } } as unknown as Client;
const classPath = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/nc';
const run = <R>(activityType: string, body: () => Promise<R>) => new MockActivityEnvironment({ activityType }).run<[], R, () => Promise<R>>(body);

describe('reconcileNodeClass in a burst of claims of one class', () => {
  let guest: FakeGuest;
  let cloud: RecordingCloud;
  beforeEach(async () => {
    guest = await startFakeGuest();
    cloud = new RecordingCloud([anInstanceType('m5.large', {}, ['us-east-1a'])]);
    cloud.resolution = { ...cloud.resolution, conditions: [{ type: 'SubnetsReady', status: 'True', reason: 'SubnetsResolved', message: '' }, { type: 'Ready', status: 'True', reason: 'Ready', message: '' }] };
    putPoolOnClass(guest);
    const provisioner = createProvisionerActivities({ resolve: async () => ({ guest: guest.kube, cloud }), temporal });
    await run('createClaims', () => provisioner.createClaims(poolClaims(['a-1', 'a-2', 'a-3'])));
  });
  afterEach(async () => guest.close());

  const classWrites = () => guest.requests.filter((r) => r.method === 'PATCH' && r.url.pathname === `${classPath}/status`).length;
  const classReads = () => guest.requests.filter((r) => r.method === 'GET' && r.url.pathname === classPath).length;

  it('the first claim writes the status; the next read the class once and write nothing; a moved resolution is written', async () => {
    const lifecycle = createNodeClaimCloudActivities({ resolve: async () => ({ guest: guest.kube, cloud }), now: () => new Date('2026-11-29T00:00:00Z') });
    await expect(run('reconcileNodeClass', () => lifecycle.reconcileNodeClass({ cluster, name: 'a-1' }))).resolves.toMatchObject({ nodeClass: 'nc', ready: true });
    expect(classWrites()).toBe(1);
    const stored = guest.get(classPath) as { status: { subnets: unknown[]; conditions: { type: string; status: string }[] } };
    expect(stored.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');

    const readsBefore = classReads();
    await run('reconcileNodeClass', () => lifecycle.reconcileNodeClass({ cluster, name: 'a-2' }));
    expect(classWrites()).toBe(1);
    expect(classReads() - readsBefore).toBe(1);

    cloud.resolution = { ...cloud.resolution, subnets: [...cloud.resolution.subnets, { id: 'subnet-extra', zone: 'us-east-1c', availableIpCount: 9 }] };
    // another worker (this one serves its resolution for a while, and refreshes it behind)
    const other = createNodeClaimCloudActivities({ resolve: async () => ({ guest: guest.kube, cloud }), now: () => new Date('2026-11-29T00:05:00Z') });
    await run('reconcileNodeClass', () => other.reconcileNodeClass({ cluster, name: 'a-3' }));
    expect(classWrites()).toBe(2);
    expect((guest.get(classPath) as typeof stored).status.subnets).toHaveLength(stored.status.subnets.length + 1);
  });
});
