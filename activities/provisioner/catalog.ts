import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import type { CatalogResult } from '../../core/instancetypes';
import { catalogQueryFor } from '../../core/workloads/assemble';
import { NodeClassInputSchema, type CloudProvider } from '../cloud';
import { type InstanceTypeQuery } from '../cloud/instance-types';
import { heartbeatStage } from '../heartbeat';
import { ResolutionCache } from '../cloud/resolution-cache';
export { ResolutionCache };

export type UnavailableOffering = NonNullable<InstanceTypeQuery['unavailable']>[number];

/**
 * Each node class's instance types as the cloud offers them: the class must resolve
 * (subnets, security groups, AMI), its subnets' zones bound the offerings, offerings held
 * unavailable are listed but unavailable, and allocatable follows the class's AMI family,
 * kubelet and root volume. The provisioner and `autonode plan --ec2` both read the cloud
 * through this, so what one plans the other launches.
 */
export async function cloudCatalog(
  cloud: Pick<CloudProvider, 'resolveNodeClass' | 'instanceTypes'>,
  classes: ReadonlyMap<string, EC2NodeClass>,
  unavailable: readonly UnavailableOffering[] = [],
  cache?: { scope: string; resolutions: ResolutionCache },
): Promise<Map<string, CatalogResult>> {
  const typesByClass = new Map<string, CatalogResult>();
  for (const [name, nodeClass] of classes) {
    const query = catalogQueryFor(name, nodeClass);
    if ('unsupported' in query) {
      typesByClass.set(name, { ok: false, reason: `amiFamily ${query.unsupported} is not supported` });
      continue;
    }
    const input = NodeClassInputSchema.parse({ name, spec: nodeClass.spec });
    // (inside a packing activity its beats name these steps: activities/heartbeat.ts)
    heartbeatStage('catalog: resolve node class');
    const resolution = cache ? await cache.resolutions.resolve(cache.scope, cloud, input) : await cloud.resolveNodeClass(input);
    if (!resolution.ready) {
      const why = resolution.conditions
        .filter((c) => c.status !== 'True')
        .map((c) => `${c.type}: ${c.message}`)
        .join('; ');
      typesByClass.set(name, { ok: false, reason: `EC2NodeClass ${name} is not ready: ${why}` });
      continue;
    }
    const zones = [...new Set(resolution.subnets.map((s) => s.zone))].sort();
    heartbeatStage('catalog: instance types');
    const instanceTypes = await cloud.instanceTypes({
      amiFamily: query.amiFamily,
      ...(query.kubelet ? { kubelet: stripUndefined(query.kubelet) } : {}),
      ...(query.rootVolumeSize ? { rootVolumeSize: query.rootVolumeSize } : {}),
      zones,
      unavailable: [...unavailable],
    });
    typesByClass.set(name, { ok: true, warnings: [], instanceTypes, skipped: [] });
  }
  return typesByClass;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
