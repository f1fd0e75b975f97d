import { DescribeImagesCommand, DescribeInstancesCommand, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { randomUUID } from 'node:crypto';
import { createEc2ClientFactory, endpointPolicyFromEnv, staticCredentialsProvider } from '../../activities/cloud/ec2-client';
import { loadStackInfo } from '../support/stack';

describe('EC2 API (moto, real HTTP)', () => {
  const { ec2 } = loadStackInfo();
  const clientFor = createEc2ClientFactory({
    endpoint: ec2.endpoint,
    // moto accepts any keys; these are not AWS credentials
    credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    endpointPolicy: endpointPolicyFromEnv(process.env),
  });
  const client = clientFor({ name: 'smoke', region: ec2.region });
  afterAll(() => client.destroy());

  it('runs, describes and terminates an instance', async () => {
    const images = await client.send(new DescribeImagesCommand({}));
    const imageId = images.Images?.[0]?.ImageId;
    expect(imageId).toMatch(/^ami-/);

    const marker = randomUUID();
    const run = await client.send(
      new RunInstancesCommand({
        ImageId: imageId,
        InstanceType: 'm5.large',
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'autonode-smoke', Value: marker }] }],
      }),
    );
    const instanceId = run.Instances?.[0]?.InstanceId;
    expect(instanceId).toMatch(/^i-/);

    const described = await client.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:autonode-smoke', Values: [marker] }] }));
    const instances = described.Reservations?.flatMap((r) => r.Instances ?? []) ?? [];
    expect(instances.map((i) => [i.InstanceId, i.InstanceType, i.State?.Name])).toEqual([[instanceId, 'm5.large', 'running']]);

    await client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId!] }));
    const after = await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId!] }));
    expect(after.Reservations?.[0]?.Instances?.[0]?.State?.Name).toBe('terminated');
  });

  it('refuses a non-loopback endpoint while running tests', () => {
    expect(() =>
      createEc2ClientFactory({
        endpoint: 'https://ec2.us-east-1.amazonaws.com',
        credentialsFor: staticCredentialsProvider({ accessKeyId: 'x', secretAccessKey: 'y' }),
        endpointPolicy: endpointPolicyFromEnv(process.env),
      }),
    ).toThrow(/only loopback is allowed/);
  });
});
