/**
 * SSM Parameter Store reads, for `alias` and `ssmParameter` AMI selector terms. The port is
 * one function (name → value), so resolution tests use a map and production uses
 * `@aws-sdk/client-ssm` through the same retry layer and endpoint guard as EC2.
 */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { z } from 'zod';
import { type CloudClusterRef } from './domain';
import { assertAwsEndpointAllowed, type ClusterCredentialsProvider, type EndpointPolicy } from './ec2-client';
import { isNotFoundError } from './errors';
import { callAws, type RetryDeps } from './retry';

/** Port: the value of one SSM parameter, or undefined when no parameter has that name. */
export type SsmParameterLookup = (name: string) => Promise<string | undefined>;

/** Only `send`: like Ec2Api, so tests can pass a real client against moto or a fake. */
export type SsmApi = Pick<SSMClient, 'send'>;

const GetParameterOutputSchema = z.object({ Parameter: z.object({ Name: z.string().optional(), Value: z.string() }) });

/**
 * A missing parameter is an answer (undefined), not a failure: alias variants that AWS does
 * not publish in a region are normal. Throttling and 5xx are retried; a denial leaves as
 * an AuthorizationError naming ssm:GetParameter.
 */
export function createSsmParameterLookup(deps: { ssm: SsmApi; retry: RetryDeps }): SsmParameterLookup {
  return async (name) => {
    let raw: unknown;
    try {
      raw = await callAws({ service: 'ssm', operation: 'GetParameter' }, () => deps.ssm.send(new GetParameterCommand({ Name: name })), deps.retry);
    } catch (error) {
      if (isNotFoundError(error)) return undefined;
      throw error;
    }
    return GetParameterOutputSchema.parse(raw).Parameter.Value;
  };
}

export interface SsmClientFactoryOptions {
  /** moto (which serves SSM on its EC2 port); undefined means the real regional endpoint */
  endpoint?: string;
  credentialsFor: ClusterCredentialsProvider;
  endpointPolicy: EndpointPolicy;
  requestTimeoutMs?: number;
}

/** One SSM client per cluster, built like the EC2 ones (ec2-client.ts). */
export function createSsmClientFactory(options: SsmClientFactoryOptions): (cluster: CloudClusterRef) => SSMClient {
  assertAwsEndpointAllowed('SSM', options.endpoint, options.endpointPolicy);
  return (cluster) =>
    new SSMClient({
      region: cluster.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      credentials: options.credentialsFor(cluster),
      // Retries live in retry.ts (callAws), observable like EC2's.
      maxAttempts: 1,
      requestHandler: { requestTimeout: options.requestTimeoutMs ?? 15_000, connectionTimeout: 5_000 },
    });
}
