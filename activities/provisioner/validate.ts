import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass';
import { assertNever } from '../../core/assert';
import { formatIssue } from '../../core/api/issues';
import { normaliseDocument } from '../../core/api/normalise';
import type { NodePool } from '../../core/api/nodepool';
import { conditionSchema } from '../../core/api/primitives';
import type { NormaliseResult } from '../../core/api/result';
import { nodeClassValidationConditions } from '../../core/provisioning';
import { type KubeClients } from '../kube/clients';
import { isConflict, isNotFound } from '../kube/errors';
import { type RecordEvent } from '../kube/events';
import { type World } from './world';

const PoolMetaSchema = z.object({ metadata: z.object({ name: z.string(), uid: z.string(), generation: z.number().optional() }) });
const ClassMetaSchema = z.object({ metadata: z.object({ name: z.string(), uid: z.string() }) });
const StoredClassSchema = z.object({
  metadata: z.object({ resourceVersion: z.string() }),
  status: z.object({ conditions: z.array(conditionSchema).optional() }).optional(),
});

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ec2NodeClasses = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;
/** Kubernetes truncates Event messages at 1024 characters; ours stop short of it, visibly. */
const MAX_EVENT_MESSAGE = 1000;

export interface ValidateOptions {
  event: RecordEvent;
  /** writes the EC2NodeClass status (its `ValidationSucceeded` and `Ready` conditions) */
  guest: KubeClients;
  now: Date;
}

/**
 * Karpenter objects as users wrote them: each NodePool and EC2NodeClass is normalised
 * (v1 and v1beta1 alike). An invalid one is reported and skipped, and the rest provision:
 * - a NodePool: a `ValidationSucceeded=False` condition naming the field (written with the
 *   pool's status by the caller, from `invalid`) and a Warning Event `FailedValidation`;
 * - an EC2NodeClass: `ValidationSucceeded=False` (reason `InvalidEC2NodeClass`, each field
 *   path with its fix) and `Ready=False` on its status, written here, and a Warning Event
 *   `FailedValidation`. Its pools are not used: `invalidClasses` holds, per class, the
 *   catalog failure their `NodeClassReady=False` condition says.
 * The API server already enforces the CRD schema; what reaches here invalid is what only
 * autonode's rules catch (e.g. an eviction threshold that is neither a percentage nor a
 * quantity). Events repeat every batch; the recorder folds repeats into one Event's count.
 */
export async function validateKarpenterObjects(world: World, { event, guest, now }: ValidateOptions) {
  const pools = new Map<string, { pool: NodePool; uid: string; raw: unknown }>();
  const classes = new Map<string, EC2NodeClass>();
  const invalidClasses = new Map<string, { ok: false; reason: string }>();
  const skipped: string[] = [];
  const invalid: { name: string; raw: unknown; why: string }[] = [];
  for (const raw of world.nodeClasses) {
    const meta = ClassMetaSchema.safeParse(raw);
    if (!meta.success) continue;
    const { name, uid } = meta.data.metadata;
    const normalised = normaliseDocument(raw);
    const nodeClass = normalised.status === 'ok' ? normalised.objects.find((o): o is EC2NodeClass => o.kind === 'EC2NodeClass') : undefined;
    const problem = nodeClass ? undefined : problemOf(normalised, 'an EC2NodeClass');
    await writeNodeClassValidation(guest, { name, raw, problem, nowIso: now.toISOString() });
    if (nodeClass) {
      classes.set(name, nodeClass);
      continue;
    }
    const why = problem ?? '';
    skipped.push(`EC2NodeClass ${name}: invalid: ${why}`);
    invalidClasses.set(name, { ok: false, reason: `EC2NodeClass ${name} (spec.template.spec.nodeClassRef.name) is invalid: ${why}` });
    await event({
      involvedObject: { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', name, uid },
      type: 'Warning',
      reason: 'FailedValidation',
      message: clip(`EC2NodeClass ${name} is invalid and is not used for provisioning: ${why}`, MAX_EVENT_MESSAGE),
    });
  }
  for (const raw of world.nodePools) {
    const meta = PoolMetaSchema.safeParse(raw);
    if (!meta.success) continue;
    const { name, uid } = meta.data.metadata;
    const normalised = normaliseDocument(raw);
    const pool = normalised.status === 'ok' ? normalised.objects.find((o): o is NodePool => o.kind === 'NodePool') : undefined;
    if (!pool) {
      // with each issue's fix, so ValidationSucceeded=False alone says what to change
      const why = problemOf(normalised, 'a NodePool');
      skipped.push(`NodePool ${name}: invalid: ${why}`);
      invalid.push({ name, raw, why });
      await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name, uid }, type: 'Warning', reason: 'FailedValidation', message: clip(`NodePool ${name} is invalid and is not used for provisioning: ${why}`, MAX_EVENT_MESSAGE) });
      continue;
    }
    pools.set(name, { pool, uid, raw });
  }
  return { pools, classes, invalidClasses, skipped, invalid };
}

/** Each issue as "path: what is wrong (got value). Fix: what to write", so the status alone says what to change. */
function problemOf(normalised: NormaliseResult, expected: string): string {
  switch (normalised.status) {
    case 'invalid':
      return normalised.issues.map(formatIssue).join('; ');
    case 'unsupported':
      return normalised.reason;
    case 'ok':
    case 'other':
      return `not ${expected}`;
    default:
      return assertNever(normalised);
  }
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

const WRITE_ATTEMPTS = 3;

/**
 * `ValidationSucceeded` and `Ready` on the EC2NodeClass's status, keeping every other
 * condition (resolution's). The conditions list is replaced whole by a merge patch, so the
 * patch carries the resourceVersion it was computed from: a concurrent write by
 * `reconcileNodeClass` makes it a conflict, and it is computed again from a fresh read
 * instead of overwriting that write.
 */
async function writeNodeClassValidation(guest: KubeClients, target: { name: string; raw: unknown; problem: string | undefined; nowIso: string }): Promise<void> {
  const { name, problem, nowIso } = target;
  let stored: unknown = target.raw;
  for (let attempt = 1; ; attempt++) {
    const { metadata, status } = StoredClassSchema.parse(stored);
    const conditions = nodeClassValidationConditions(status?.conditions ?? [], problem, nowIso);
    if (conditions === undefined) return;
    try {
      await guest.customObjects.patchClusterCustomObjectStatus({ ...ec2NodeClasses, name, body: { metadata: { resourceVersion: metadata.resourceVersion }, status: { conditions } } }, mergePatch);
      return;
    } catch (err) {
      // deleted since it was read: nothing to report on
      if (isNotFound(err)) return;
      if (!isConflict(err) || attempt >= WRITE_ATTEMPTS) throw err;
    }
    try {
      stored = await guest.customObjects.getClusterCustomObject({ ...ec2NodeClasses, name });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
