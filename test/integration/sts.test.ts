import { CreateVpcCommand, DeleteVpcCommand, DescribeRegionsCommand, DescribeVpcsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import {
  createAssumeRoleCredentialsFactory,
  createEc2ClientFactory,
  createStsClientFactory,
  endpointPolicyFromEnv,
  staticCredentialsProvider,
  type AssumedRoleCredentials,
  type CloudClusterRef,
} from '../../activities/cloud';
import { z } from 'zod';
import { loadStackInfo } from '../support/stack';

// Per-cluster credentials by AssumeRole against moto's STS (served on the EC2 endpoint),
// over real HTTP, used by a real EC2 client. moto does not enforce IAM: this proves the
// call path (assume, cache, sign EC2 requests with the session), not a policy.

const SignedRequestSchema = z.object({ headers: z.record(z.string(), z.string()) });

/** The session token each EC2 request went out with, read after signing. */
function recordSessionTokens(client: EC2Client): (string | undefined)[] {
  const tokens: (string | undefined)[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = SignedRequestSchema.safeParse(args.request);
      tokens.push(request.success ? request.data.headers['x-amz-security-token'] : undefined);
      return next(args);
    },
    // the deserialize step is the innermost: the request here is signed and final
    { step: 'deserialize', name: 'recordSessionToken' },
  );
  return tokens;
}

describe('STS AssumeRole credentials (moto, real HTTP)', () => {
  const { ec2 } = loadStackInfo();
  const endpointPolicy = endpointPolicyFromEnv(process.env);
  // moto accepts any keys; these stand for the worker's own identity, not AWS credentials
  const workerIdentity = { accessKeyId: 'testing', secretAccessKey: 'testing' };
  const credentialsFor = createAssumeRoleCredentialsFactory({
    stsFor: createStsClientFactory({ endpoint: ec2.endpoint, credentials: workerIdentity, endpointPolicy }),
  });
  const ec2ClientFor = createEc2ClientFactory({ endpoint: ec2.endpoint, credentialsFor, endpointPolicy });
  const staticClient = createEc2ClientFactory({ endpoint: ec2.endpoint, credentialsFor: staticCredentialsProvider(workerIdentity), endpointPolicy })({ name: 'worker', region: ec2.region });
  const cluster: CloudClusterRef = { name: 'sts-it-a1b2c', region: ec2.region, credentialsRef: 'arn:aws:iam::111122223333:role/autonode-sts-it' };
  const clients: EC2Client[] = [staticClient];
  afterAll(() => clients.forEach((c) => c.destroy()));

  async function credentialsOf(ref: CloudClusterRef): Promise<AssumedRoleCredentials> {
    const provider = credentialsFor(ref);
    if (typeof provider !== 'function') throw new Error('expected a credentials provider');
    const identity = await provider();
    if (identity.sessionToken === undefined || identity.expiration === undefined) throw new Error('expected temporary credentials');
    return { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey, sessionToken: identity.sessionToken, expiration: identity.expiration };
  }

  it('assumes the cluster\'s role and gets temporary credentials for about an hour', async () => {
    const before = Date.now();
    const credentials = await credentialsOf(cluster);
    expect(credentials.accessKeyId).toMatch(/^ASIA/);
    expect(credentials.secretAccessKey).not.toBe(workerIdentity.secretAccessKey);
    expect(credentials.sessionToken.length).toBeGreaterThan(20);
    const lifetimeMs = credentials.expiration.getTime() - before;
    expect(lifetimeMs).toBeGreaterThan(55 * 60_000);
    expect(lifetimeMs).toBeLessThanOrEqual(61 * 60_000);
    // cached: asking again makes no new session
    expect(await credentialsOf({ ...cluster })).toEqual(credentials);
  });

  it('signs the cluster\'s EC2 calls with the assumed session (DescribeRegions)', async () => {
    const client = ec2ClientFor(cluster);
    clients.push(client);
    const tokens = recordSessionTokens(client);
    const regions = await client.send(new DescribeRegionsCommand({}));
    expect(regions.Regions?.map((r) => r.RegionName)).toContain(ec2.region);
    expect(tokens).toEqual([(await credentialsOf(cluster)).sessionToken]);
  });

  it('keeps what one role\'s session creates in that role\'s account, as moto models accounts', async () => {
    const client = ec2ClientFor(cluster);
    clients.push(client);
    const vpc = await client.send(new CreateVpcCommand({ CidrBlock: '10.231.0.0/16' }));
    const vpcId = vpc.Vpc?.VpcId ?? '';
    try {
      expect(vpc.Vpc?.OwnerId).toBe('111122223333');
      const own = await client.send(new DescribeVpcsCommand({ VpcIds: [vpcId] }));
      expect(own.Vpcs?.map((v) => v.VpcId)).toEqual([vpcId]);
      const seenByWorker = await staticClient.send(new DescribeVpcsCommand({ Filters: [{ Name: 'cidr', Values: ['10.231.0.0/16'] }] }));
      expect(seenByWorker.Vpcs?.map((v) => v.VpcId) ?? []).not.toContain(vpcId);
    } finally {
      await client.send(new DeleteVpcCommand({ VpcId: vpcId }));
    }
  });

  it('refuses a non-loopback STS endpoint while running tests', () => {
    expect(() => createStsClientFactory({ endpoint: 'https://sts.us-east-1.amazonaws.com', endpointPolicy })).toThrow(/only loopback is allowed/);
  });
});
