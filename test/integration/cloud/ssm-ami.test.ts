/**
 * `alias` and `ssmParameter` AMI terms against moto's SSM (served on its EC2 port). moto
 * refuses PutParameter under `/aws/` and has no EKS AMI parameters, so the test publishes
 * Karpenter's tree under its own prefix and points the provider's ssmPathPrefix at it.
 */
import { randomUUID } from 'node:crypto';
import { DeleteParametersCommand, PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import {
  createEc2CloudProvider,
  createSsmClientFactory,
  endpointPolicyFromEnv,
  staticCredentialsProvider,
  type CloudProvider,
  type NodeClassCondition,
} from '../../../activities/cloud';
import { loadStackInfo } from '../../support/stack';
import { aNodeClass, startCloudHarness, type CloudHarness } from '../../support/cloud';

const KUBERNETES_VERSION = '1.31';

let h: CloudHarness;
let ssm: SSMClient;
let prefix: string;
const published: string[] = [];

/** A provider like production's, reading SSM under this file's own prefix. */
function providerWith(options: { kubernetesVersion: string }): CloudProvider {
  return createEc2CloudProvider({
    ec2: h.direct,
    ssm,
    cluster: h.cluster,
    ssmPathPrefix: `${prefix}/service`,
    kubernetesVersion: options.kubernetesVersion,
    retryPolicy: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100 },
  });
}

async function publish(name: string, value: string): Promise<void> {
  await ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: 'String', Overwrite: true }));
  published.push(name);
}

const conditionsOf = (conditions: NodeClassCondition[]) => Object.fromEntries(conditions.map((c) => [c.type, c]));

beforeAll(async () => {
  h = await startCloudHarness();
  const stack = loadStackInfo();
  ssm = createSsmClientFactory({
    endpoint: stack.ec2.endpoint,
    credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    endpointPolicy: endpointPolicyFromEnv(process.env),
  })(h.cluster);
  prefix = `/autonode-test-${randomUUID().slice(0, 8)}`;
  await publish(`${prefix}/service/eks/optimized-ami/${KUBERNETES_VERSION}/amazon-linux-2023/x86_64/standard/recommended/image_id`, h.fixtures.imageId);
  await publish(`${prefix}/team/node-ami`, h.fixtures.imageId);
});

afterAll(async () => {
  if (ssm && published.length > 0) await ssm.send(new DeleteParametersCommand({ Names: published }));
  ssm?.destroy();
  await h?.close();
});

describe('AMIs from SSM', () => {
  it('resolves an alias through the EKS parameters under the configured prefix', async () => {
    const resolution = await providerWith({ kubernetesVersion: KUBERNETES_VERSION }).resolveNodeClass(
      aNodeClass(h, { amiSelectorTerms: [{ alias: 'al2023@latest' }] }),
    );

    expect(resolution.amis.map((a) => a.id)).toEqual([h.fixtures.imageId]);
    expect(resolution.amis[0]?.variants).toEqual(['standard']);
    expect(conditionsOf(resolution.conditions).AMIsReady).toMatchObject({ status: 'True', reason: 'AMIsResolved', message: '' });
    // amiFamily Custom (the harness's): the alias picks the AMI, userData passes through.
    expect(resolution.ready).toBe(true);
    expect(resolution.userData).toBe(aNodeClass(h).spec.userData);
  });

  it('resolves an ssmParameter term to the AMI the parameter names', async () => {
    const resolution = await providerWith({ kubernetesVersion: KUBERNETES_VERSION }).resolveNodeClass(
      aNodeClass(h, { amiSelectorTerms: [{ ssmParameter: `${prefix}/team/node-ami` }] }),
    );

    expect(resolution.ready).toBe(true);
    expect(resolution.amis.map((a) => a.id)).toEqual([h.fixtures.imageId]);
    expect(resolution.amis[0]?.variants).toBeUndefined();
  });

  it('is not Ready when the parameter does not exist, and says which', async () => {
    const missing = `${prefix}/team/no-such-ami`;
    const resolution = await providerWith({ kubernetesVersion: KUBERNETES_VERSION }).resolveNodeClass(
      aNodeClass(h, { amiSelectorTerms: [{ ssmParameter: missing }] }),
    );

    expect(resolution.ready).toBe(false);
    expect(resolution.amis).toEqual([]);
    expect(conditionsOf(resolution.conditions).AMIsReady).toEqual({
      type: 'AMIsReady',
      status: 'False',
      reason: 'AMIsNotFound',
      message: `no amis resolved: amiSelectorTerms[0] {"ssmParameter":"${missing}"} names SSM parameter ${missing}, which does not exist`,
    });
  });

  it('is not Ready when nothing is published for the cluster\'s Kubernetes version, naming a path it tried', async () => {
    const resolution = await providerWith({ kubernetesVersion: '1.30' }).resolveNodeClass(
      aNodeClass(h, { amiSelectorTerms: [{ alias: 'al2023@latest' }] }),
    );

    expect(resolution.ready).toBe(false);
    expect(conditionsOf(resolution.conditions).AMIsReady?.message).toBe(
      'no amis resolved: amiSelectorTerms[0] {"alias":"al2023@latest"} found no AMI: none of the 5 SSM parameter(s) it maps to holds one ' +
        `(e.g. ${prefix}/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id)`,
    );
  });
});
