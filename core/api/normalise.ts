import { z } from 'zod';
import { EC2NodeClassV1Beta1WireSchema, EC2NodeClassV1WireSchema } from './ec2nodeclass';
import { provisionerToV1 } from './from-v1alpha5';
import { ec2NodeClassFromWire, nodeClaimFromWire, nodePoolFromWire } from './from-wire';
import { AWS_GROUP, KARPENTER_GROUP } from './groups';
import { toValidationIssues } from './issues';
import { NodeClaimV1Beta1WireSchema, NodeClaimV1WireSchema } from './nodeclaim';
import { NodePoolV1Beta1WireSchema, NodePoolV1WireSchema } from './nodepool';
import { ProvisionerSchema } from './provisioner';
import { type Converted, type KarpenterObject, type NormaliseResult } from './result';

// One document in, the internal model out: every accepted apiVersion/kind pair is listed
// here, and nothing else is guessed at.

const headerSchema = z.object({ apiVersion: z.string().min(1), kind: z.string().min(1) });

/** The API group used by Azure's provider (seed 002): its kinds are well-formed, just not ours. */
const AZURE_GROUP = 'karpenter.azure.com';

const SERVED: Record<string, string> = {
  NodePool: `${KARPENTER_GROUP}/v1 or ${KARPENTER_GROUP}/v1beta1`,
  NodeClaim: `${KARPENTER_GROUP}/v1 or ${KARPENTER_GROUP}/v1beta1`,
  Provisioner: `${KARPENTER_GROUP}/v1alpha5`,
  EC2NodeClass: `${AWS_GROUP}/v1 or ${AWS_GROUP}/v1beta1`,
};

const managedFieldsSchema = z.object({
  metadata: z.object({
    managedFields: z.array(z.object({
      apiVersion: z.string().optional(),
      subresource: z.string().optional(),
      fieldsV1: z.unknown().optional(),
    })).optional(),
  }),
});

const ownsRequirements = (fields: unknown): boolean =>
  z.object({ 'f:spec': z.object({ 'f:template': z.object({ 'f:spec': z.object({ 'f:requirements': z.unknown() }) }) }) }).safeParse(fields).success;

/**
 * The version a stored NodePool's requirements were written in, whichever version reads
 * it: with `conversion: None` (ADR 0001) the API server rewrites only apiVersion, but
 * server-side field management records the version each writer used. When every writer of
 * spec.template.spec.requirements wrote v1beta1, they mean what v1beta1 meant (its
 * defaulting applies); once anyone wrote them as v1, v1's. Undefined for a manifest
 * (no managedFields): its own apiVersion decides.
 */
export function requirementsWrittenAs(doc: unknown): 'v1' | 'v1beta1' | undefined {
  const parsed = managedFieldsSchema.safeParse(doc);
  if (!parsed.success) return undefined;
  const writers = (parsed.data.metadata.managedFields ?? []).filter((entry) => entry.subresource === undefined && ownsRequirements(entry.fieldsV1));
  if (writers.length === 0) return undefined;
  return writers.every((entry) => entry.apiVersion === `${KARPENTER_GROUP}/v1beta1`) ? 'v1beta1' : 'v1';
}

function parseWith<S extends z.ZodType, T>(schema: S, doc: unknown, convert: (wire: z.output<S>) => Converted<T>): Converted<T> {
  const parsed = schema.safeParse(doc);
  if (!parsed.success) return { status: 'invalid', issues: toValidationIssues(parsed.error, doc) };
  return convert(parsed.data);
}

function toResult<T>(converted: Converted<T>, objects: (value: T) => KarpenterObject[]): NormaliseResult {
  switch (converted.status) {
    case 'ok':
      return { status: 'ok', objects: objects(converted.value), warnings: converted.warnings };
    case 'invalid':
    case 'unsupported':
      return converted;
  }
}

const one = (value: KarpenterObject): KarpenterObject[] => [value];

/**
 * Validates one parsed manifest and converts it to the internal model: karpenter.sh/v1
 * NodePool/NodeClaim or karpenter.k8s.aws/v1 EC2NodeClass, with v1 defaults applied.
 * Accepts v1, v1beta1 and the v1alpha5 Provisioner. Pure; never throws on bad input.
 */
export function normaliseDocument(doc: unknown): NormaliseResult {
  const header = headerSchema.safeParse(doc);
  if (!header.success) return { status: 'invalid', issues: toValidationIssues(header.error, doc) };
  const { apiVersion, kind } = header.data;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

  switch (`${kind} ${apiVersion}`) {
    case 'NodePool karpenter.sh/v1':
      return toResult(parseWith(NodePoolV1WireSchema, doc, (w) => nodePoolFromWire(w, 'v1', { defaultsOf: requirementsWrittenAs(doc) ?? 'v1' })), one);
    case 'NodePool karpenter.sh/v1beta1':
      return toResult(parseWith(NodePoolV1Beta1WireSchema, doc, (w) => nodePoolFromWire(w, 'v1beta1', { defaultsOf: requirementsWrittenAs(doc) ?? 'v1beta1' })), one);
    case 'NodeClaim karpenter.sh/v1':
      return toResult(parseWith(NodeClaimV1WireSchema, doc, (w) => nodeClaimFromWire(w, 'v1')), one);
    case 'NodeClaim karpenter.sh/v1beta1':
      return toResult(parseWith(NodeClaimV1Beta1WireSchema, doc, (w) => nodeClaimFromWire(w, 'v1beta1')), one);
    case 'EC2NodeClass karpenter.k8s.aws/v1':
      return toResult(parseWith(EC2NodeClassV1WireSchema, doc, ec2NodeClassFromWire), one);
    case 'EC2NodeClass karpenter.k8s.aws/v1beta1':
      return toResult(parseWith(EC2NodeClassV1Beta1WireSchema, doc, ec2NodeClassFromWire), one);
    case 'Provisioner karpenter.sh/v1alpha5':
      return toResult(parseWith(ProvisionerSchema, doc, provisionerToV1), (v) => (v.nodeClass ? [v.nodePool, v.nodeClass] : [v.nodePool]));
    case 'Machine karpenter.sh/v1alpha5':
      return { status: 'unsupported', reason: 'Machine (karpenter.sh/v1alpha5) was replaced by NodeClaim, which autonode creates itself: delete the Machine' };
    case 'AWSNodeTemplate karpenter.k8s.aws/v1alpha1':
      return {
        status: 'unsupported',
        reason: 'AWSNodeTemplate (karpenter.k8s.aws/v1alpha1) is not converted: write an EC2NodeClass (karpenter.k8s.aws/v1) of the same name',
      };
    default:
      break;
  }
  if (group === AZURE_GROUP) {
    return {
      status: 'unsupported',
      reason: `${kind} (${apiVersion}) is unsupported by this provider (AWS): describe nodes with an EC2NodeClass (${AWS_GROUP}/v1)`,
    };
  }
  if (group === KARPENTER_GROUP || group === AWS_GROUP) {
    const served = SERVED[kind];
    return {
      status: 'invalid',
      issues: [
        served
          ? { path: 'apiVersion', value: apiVersion, message: `${kind} is not served as ${apiVersion}`, fix: `use apiVersion ${served}` }
          : { path: 'kind', value: kind, message: `${apiVersion} has no kind ${kind}`, fix: `use one of ${Object.keys(SERVED).join(', ')}` },
      ],
    };
  }
  return { status: 'other', apiVersion, kind };
}
