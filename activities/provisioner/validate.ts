import { z } from 'zod';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import { normaliseDocument } from '../../core/api/normalise';
import type { NodePool } from '../../core/api/nodepool';
import { type RecordEvent } from '../kube/events';
import { type World } from './world';

const PoolMetaSchema = z.object({ metadata: z.object({ name: z.string(), uid: z.string(), generation: z.number().optional() }) });

/**
 * Karpenter objects as users wrote them: each NodePool and EC2NodeClass is normalised
 * (v1 and v1beta1 alike). An invalid NodePool is reported — a `ValidationSucceeded=False`
 * condition naming the field, and a Warning Event — and skipped, and the rest provision.
 * An invalid EC2NodeClass is only skipped (its pools then say it does not exist): its own
 * condition and Event are still to do.
 */
export async function validateKarpenterObjects(world: World, event: RecordEvent) {
  const pools = new Map<string, { pool: NodePool; uid: string; raw: unknown }>();
  const classes = new Map<string, EC2NodeClass>();
  const skipped: string[] = [];
  const invalid: { name: string; raw: unknown; why: string }[] = [];
  for (const raw of world.nodeClasses) {
    const normalised = normaliseDocument(raw);
    if (normalised.status === 'ok') for (const o of normalised.objects) if (o.kind === 'EC2NodeClass') classes.set(o.metadata.name ?? '', o);
  }
  for (const raw of world.nodePools) {
    const meta = PoolMetaSchema.safeParse(raw);
    if (!meta.success) continue;
    const { name, uid } = meta.data.metadata;
    const normalised = normaliseDocument(raw);
    const pool = normalised.status === 'ok' ? normalised.objects.find((o): o is NodePool => o.kind === 'NodePool') : undefined;
    if (!pool) {
      const why = normalised.status === 'invalid' ? normalised.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : normalised.status === 'unsupported' ? normalised.reason : 'not a NodePool';
      skipped.push(`NodePool ${name}: invalid: ${why}`);
      invalid.push({ name, raw, why });
      await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name, uid }, type: 'Warning', reason: 'FailedValidation', message: `NodePool ${name} is invalid and is not used for provisioning: ${why}` });
      continue;
    }
    pools.set(name, { pool, uid, raw });
  }
  return { pools, classes, skipped, invalid };
}
