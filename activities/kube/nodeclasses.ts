import { isDeepStrictEqual } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { z } from 'zod';
import { type Condition } from '../../core/api';
import { setCondition } from '../../core/lifecycle';
import { type NodeClassResolution } from '../cloud';
import { type KubeClients } from './clients';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ref = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;

const StoredConditionsSchema = z.object({
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.enum(['True', 'False', 'Unknown']), reason: z.string().optional(), message: z.string().optional(), lastTransitionTime: z.string().optional() })).optional() }).passthrough().optional(),
});

/**
 * Writes what a node class resolved to onto the EC2NodeClass's status — subnets, security
 * groups, AMIs, conditions with messages that say which selector matched nothing — so
 * `kubectl get ec2nodeclass -o yaml` explains a launch that cannot happen.
 *
 * Every launch reconciles its class, so a burst of claims would write the same status once
 * each: nothing is written when each field it sets already holds that value. `current` is
 * the class as the caller read it, to compare against without another read; a write is
 * always computed from a fresh read, so another writer's conditions since are kept. Says
 * whether it wrote.
 */
export async function recordNodeClassResolution(
  kube: KubeClients,
  name: string,
  resolution: NodeClassResolution,
  options: { instanceProfile?: string; nowIso: string; current?: unknown },
): Promise<boolean> {
  const statusFrom = (raw: unknown) => {
    const current = StoredConditionsSchema.parse(raw).status;
    let conditions: Condition[] = current?.conditions ?? [];
    for (const c of resolution.conditions) conditions = setCondition(conditions, { type: c.type, status: c.status, reason: c.reason, message: c.message }, options.nowIso);
    const status: Record<string, unknown> = {
      subnets: resolution.subnets.map((s) => ({ id: s.id, zone: s.zone, ...(s.zoneId ? { zoneID: s.zoneId } : {}) })),
      securityGroups: resolution.securityGroups.map((g) => ({ id: g.id, name: g.name })),
      amis: resolution.amis.map((a) => ({
        id: a.id,
        name: a.name,
        ...(a.deprecated ? { deprecated: true } : {}),
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: [a.architecture === 'arm64' ? 'arm64' : 'amd64'] }],
      })),
      ...(options.instanceProfile ? { instanceProfile: options.instanceProfile } : {}),
      conditions,
    };
    const unchanged = Object.entries(status).every(([key, value]) => isDeepStrictEqual(current?.[key], value));
    return { status, unchanged };
  };
  if (options.current !== undefined && statusFrom(options.current).unchanged) return false;
  const { status, unchanged } = statusFrom(await kube.customObjects.getClusterCustomObject({ ...ref, name }));
  if (unchanged) return false;
  await kube.customObjects.patchClusterCustomObjectStatus({ ...ref, name, body: { status } }, mergePatch);
  return true;
}
