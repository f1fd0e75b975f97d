import { InvalidRequestError } from './errors';

/** Kubernetes' AWS provider id: `aws:///<zone>/<instance-id>`. */
export function formatProviderId(zone: string, instanceId: string): string {
  return `aws:///${zone}/${instanceId}`;
}

const PROVIDER_ID = /^aws:\/\/\/([a-z0-9-]+)\/(i-[0-9a-f]+)$/;

export function parseProviderId(providerId: string): { zone: string; instanceId: string } {
  const match = PROVIDER_ID.exec(providerId);
  const zone = match?.[1];
  const instanceId = match?.[2];
  if (zone === undefined || instanceId === undefined) {
    throw new InvalidRequestError('parseProviderId', 'InvalidProviderId', `"${providerId}" is not an AWS provider id (aws:///<zone>/i-<hex>)`);
  }
  return { zone, instanceId };
}
