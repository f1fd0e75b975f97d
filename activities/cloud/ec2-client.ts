/**
 * Builds one EC2 client per cluster. Credentials come from a per-cluster provider port —
 * the cluster's role in production, static keys against moto — never from a workflow
 * payload. Under tests the factory refuses any endpoint that is not loopback, so a test
 * run can never touch a real account by accident.
 */
import { EC2Client, type EC2ClientConfig } from '@aws-sdk/client-ec2';
import { type CloudClusterRef } from './domain';

export type AwsCredentials = NonNullable<EC2ClientConfig['credentials']>;

/** Port: the credentials to act for one cluster (e.g. an STS AssumeRole provider). */
export type ClusterCredentialsProvider = (cluster: CloudClusterRef) => AwsCredentials;

export function staticCredentialsProvider(keys: { accessKeyId: string; secretAccessKey: string }): ClusterCredentialsProvider {
  return () => ({ accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey });
}

export type EndpointPolicy = 'loopback-only' | 'any';

/** Read once at the edge (worker or test setup) and passed to the factory. */
export function endpointPolicyFromEnv(env: Readonly<Record<string, string | undefined>>): EndpointPolicy {
  const runningTests = env.JEST_WORKER_ID !== undefined || env.NODE_ENV === 'test';
  return runningTests && env.AUTONODE_ALLOW_REMOTE_EC2 !== '1' ? 'loopback-only' : 'any';
}

export function isLoopbackEndpoint(endpoint: string): boolean {
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export function assertEc2EndpointAllowed(endpoint: string | undefined, policy: EndpointPolicy): void {
  assertAwsEndpointAllowed('EC2', endpoint, policy);
}

/** The same guard for every AWS client the provider builds (EC2, SSM): one opt-in switch. */
export function assertAwsEndpointAllowed(service: string, endpoint: string | undefined, policy: EndpointPolicy): void {
  if (policy === 'any') return;
  if (endpoint === undefined) {
    throw new Error(`refusing to use real AWS while running tests: no ${service} endpoint given (set AUTONODE_ALLOW_REMOTE_EC2=1 to opt in)`);
  }
  if (!isLoopbackEndpoint(endpoint)) {
    throw new Error(`refusing ${service} endpoint ${endpoint} while running tests: only loopback is allowed (set AUTONODE_ALLOW_REMOTE_EC2=1 to opt in)`);
  }
}

export interface Ec2ClientFactoryOptions {
  /** moto or the fault proxy; undefined means the real regional endpoint */
  endpoint?: string;
  credentialsFor: ClusterCredentialsProvider;
  endpointPolicy: EndpointPolicy;
  requestTimeoutMs?: number;
}

export function createEc2ClientFactory(options: Ec2ClientFactoryOptions): (cluster: CloudClusterRef) => EC2Client {
  assertEc2EndpointAllowed(options.endpoint, options.endpointPolicy);
  return (cluster) =>
    new EC2Client({
      region: cluster.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      credentials: options.credentialsFor(cluster),
      // Retries live in retry.ts (callEc2): observable, and launch re-checks by tag between attempts.
      maxAttempts: 1,
      requestHandler: { requestTimeout: options.requestTimeoutMs ?? 15_000, connectionTimeout: 5_000 },
    });
}
