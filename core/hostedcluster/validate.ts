/**
 * Whether a HostedCluster asks for AutoNode, and if so whether autonode can serve it as
 * written. Pure: the enablement workflow's first step calls it, and a HostedCluster it
 * rejects gets AutoNodeEnabled=False with the first problem's reason, and nothing else
 * happens.
 *
 * Every problem names the field (a JSON path from the object's root), a reason in
 * Kubernetes condition style (CamelCase) and a message that says what to set.
 * All problems are reported at once, in field order, so one round of edits fixes them.
 */
import { type ConditionUpdate } from '../lifecycle/conditions';
import { type ClusterRef } from '../lifecycle/contract';
import { parseRoleArn, partitionOfRegion, type RoleArn } from './role-arn';
import { AUTONODE_CONDITION_TYPES, HostedClusterSchema, INTERRUPTION_QUEUE_ANNOTATION, type HostedCluster } from './schema';

export const AUTONODE_PROBLEM_REASONS = [
  /** the object is not a HostedCluster autonode can read (no name/namespace, a field of the wrong type) */
  'InvalidHostedCluster',
  'MissingInfraID',
  'InvalidInfraID',
  /** spec.platform.type or the Karpenter platform is not AWS */
  'UnsupportedPlatform',
  'MissingRegion',
  'InvalidRegion',
  'MissingReleaseImage',
  'InvalidReleaseImage',
  /** provisionerConfig.name is not Karpenter */
  'UnsupportedProvisioner',
  'MissingKarpenterConfig',
  'MissingRoleARN',
  'InvalidRoleARN',
  /** the role's partition cannot act in the cluster's region (aws-cn role, us-east-1 cluster) */
  'RoleARNPartitionMismatch',
  /** the interruption-queue annotation is not an SQS queue name */
  'InvalidInterruptionQueue',
] as const;
export type AutoNodeProblemReason = (typeof AUTONODE_PROBLEM_REASONS)[number];

export interface AutoNodeProblem {
  /** JSON path from the object's root, e.g. spec.autoNode.provisionerConfig.karpenter.aws.roleARN */
  field: string;
  reason: AutoNodeProblemReason;
  /** what is wrong and what to set */
  message: string;
}

/** What autonode acts on for one HostedCluster, read and checked. Plain JSON, no secret. */
export interface AutoNodeConfig {
  namespace: string;
  name: string;
  infraID: string;
  region: string;
  roleARN: string;
  role: RoleArn;
  releaseImage: string;
  /** the SQS queue of the cluster's interruption events, when it names one */
  interruptionQueue?: string;
  /** metadata.generation, for conditions' observedGeneration */
  generation?: number;
}

export type AutoNodeValidation =
  | { status: 'ok'; config: AutoNodeConfig }
  /** spec.autoNode is absent: the cluster does not ask for AutoNode (not an error) */
  | { status: 'notConfigured'; namespace: string; name: string }
  | { status: 'invalid'; problems: AutoNodeProblem[] };

const FIELD = {
  infraID: 'spec.infraID',
  platformType: 'spec.platform.type',
  region: 'spec.platform.aws.region',
  releaseImage: 'spec.release.image',
  provisionerName: 'spec.autoNode.provisionerConfig.name',
  karpenter: 'spec.autoNode.provisionerConfig.karpenter',
  karpenterPlatform: 'spec.autoNode.provisionerConfig.karpenter.platform',
  roleARN: 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN',
  interruptionQueue: `metadata.annotations["${INTERRUPTION_QUEUE_ANNOTATION}"]`,
} as const;

/** A field that fails to parse (wrong type) is reported with that field's own reason. */
const REASON_FOR_MALFORMED: Record<string, AutoNodeProblemReason> = {
  [FIELD.infraID]: 'InvalidInfraID',
  [FIELD.platformType]: 'UnsupportedPlatform',
  [FIELD.region]: 'InvalidRegion',
  [FIELD.releaseImage]: 'InvalidReleaseImage',
  [FIELD.provisionerName]: 'UnsupportedProvisioner',
  [FIELD.karpenterPlatform]: 'UnsupportedPlatform',
  [FIELD.roleARN]: 'InvalidRoleARN',
};

// HyperShift's own rules for these fields (its CRD's CEL), repeated so that an object from
// elsewhere (or an older CRD) is held to them too.
const INFRA_ID = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const RELEASE_IMAGE = /^\w+\S+$/;
/** us-east-1, us-gov-west-1, cn-north-1, ap-southeast-2 ... */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const AWS = 'AWS';
const KARPENTER = 'Karpenter';
/** SQS's queue names: 1-80 letters, digits, '-' and '_'; a FIFO queue's ends in `.fifo` */
const SQS_QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$|^[A-Za-z0-9_-]{1,75}\.fifo$/;

export function validateAutoNode(input: unknown): AutoNodeValidation {
  const parsed = HostedClusterSchema.safeParse(input);
  if (!parsed.success) {
    return {
      status: 'invalid',
      problems: parsed.error.issues.map((issue) => {
        const field = issue.path.map(String).join('.') || '(object)';
        return { field, reason: REASON_FOR_MALFORMED[field] ?? 'InvalidHostedCluster', message: `${issue.message}; a HostedCluster needs it as hypershift.openshift.io/v1beta1 defines it` };
      }),
    };
  }
  const hc = parsed.data;
  const autoNode = hc.spec?.autoNode;
  if (autoNode === undefined) return { status: 'notConfigured', namespace: hc.metadata.namespace, name: hc.metadata.name };
  const problems = checkFields(hc);
  if (problems.length > 0) return { status: 'invalid', problems };
  // checkFields found nothing missing or malformed, so these are present and well formed;
  // read them again rather than assert, so the types follow from the checks.
  const infraID = hc.spec?.infraID ?? '';
  const region = hc.spec?.platform?.aws?.region ?? '';
  const roleARN = autoNode.provisionerConfig?.karpenter?.aws?.roleARN ?? '';
  const releaseImage = hc.spec?.release?.image ?? '';
  const interruptionQueue = hc.metadata.annotations?.[INTERRUPTION_QUEUE_ANNOTATION];
  const role = parseRoleArn(roleARN);
  if (!role.ok) return { status: 'invalid', problems: [{ field: FIELD.roleARN, reason: 'InvalidRoleARN', message: role.problem }] };
  return {
    status: 'ok',
    config: {
      namespace: hc.metadata.namespace,
      name: hc.metadata.name,
      infraID,
      region,
      roleARN,
      role: role.arn,
      releaseImage,
      ...(interruptionQueue === undefined ? {} : { interruptionQueue }),
      ...(hc.metadata.generation === undefined ? {} : { generation: hc.metadata.generation }),
    },
  };
}

function checkFields(hc: HostedCluster): AutoNodeProblem[] {
  const problems: AutoNodeProblem[] = [];
  const add = (field: string, reason: AutoNodeProblemReason, message: string) => problems.push({ field, reason, message });
  const spec = hc.spec;

  const infraID = spec?.infraID ?? '';
  if (infraID === '') add(FIELD.infraID, 'MissingInfraID', 'set spec.infraID: autonode tags every instance it launches with kubernetes.io/cluster/<infraID> (HyperShift sets it when it creates the cluster)');
  else if (infraID.length > 253 || !INFRA_ID.test(infraID)) add(FIELD.infraID, 'InvalidInfraID', `"${infraID}" is not 1-253 lowercase letters, digits or '-', starting and ending with a letter or digit`);

  const platformType = spec?.platform?.type;
  if (platformType !== AWS) add(FIELD.platformType, 'UnsupportedPlatform', `AutoNode runs on AWS only; this cluster's platform is ${platformType === undefined ? 'not set' : `"${platformType}"`}. Remove spec.autoNode, or use an AWS HostedCluster`);

  // A cluster on another platform has no AWS region to check: UnsupportedPlatform says it all.
  const region = spec?.platform?.aws?.region ?? '';
  if (platformType === AWS) {
    if (region === '') add(FIELD.region, 'MissingRegion', 'set spec.platform.aws.region to the AWS region the cluster runs in (e.g. us-east-1): autonode launches its nodes there');
    else if (!REGION.test(region)) add(FIELD.region, 'InvalidRegion', `"${region}" is not an AWS region name such as us-east-1 or us-gov-west-1`);
  }

  const image = spec?.release?.image ?? '';
  if (image === '') add(FIELD.releaseImage, 'MissingReleaseImage', 'set spec.release.image to the OCP release payload: its node image is the AMI autonode launches');
  else if (image.length > 253 || !RELEASE_IMAGE.test(image)) add(FIELD.releaseImage, 'InvalidReleaseImage', `"${image}" is not an image pull spec (it must start with a letter, digit or '_', contain no white space, and be at most 253 characters)`);

  const provisioner = spec?.autoNode?.provisionerConfig;
  if (provisioner?.name !== KARPENTER) {
    add(FIELD.provisionerName, 'UnsupportedProvisioner', `set spec.autoNode.provisionerConfig.name to Karpenter (the only provisioner); it is ${provisioner?.name === undefined ? 'not set' : `"${provisioner.name}"`}`);
  }
  const karpenter = provisioner?.karpenter;
  if (karpenter === undefined) {
    add(FIELD.karpenter, 'MissingKarpenterConfig', 'set spec.autoNode.provisionerConfig.karpenter: {platform: AWS, aws: {roleARN: arn:aws:iam::<account>:role/<name>}}');
    return problems;
  }
  if (karpenter.platform !== AWS) {
    add(FIELD.karpenterPlatform, 'UnsupportedPlatform', `set spec.autoNode.provisionerConfig.karpenter.platform to AWS (the only platform autonode serves); it is ${karpenter.platform === undefined ? 'not set' : `"${karpenter.platform}"`}`);
  }
  const roleARN = karpenter.aws?.roleARN ?? '';
  if (roleARN === '') {
    add(FIELD.roleARN, 'MissingRoleARN', 'set spec.autoNode.provisionerConfig.karpenter.aws.roleARN to the IAM role autonode assumes to manage the cluster\'s instances (arn:aws:iam::<account>:role/<name>)');
    return problems;
  }
  const role = parseRoleArn(roleARN);
  if (!role.ok) {
    add(FIELD.roleARN, 'InvalidRoleARN', `"${roleARN}" is not an IAM role ARN: ${role.problem}. Set it to the role's ARN as IAM shows it, e.g. arn:aws:iam::123456789012:role/autonode`);
  } else if (platformType === AWS && REGION.test(region) && partitionOfRegion(region) !== role.arn.partition) {
    add(FIELD.roleARN, 'RoleARNPartitionMismatch', `the role is in partition ${role.arn.partition} but region ${region} is in ${partitionOfRegion(region)}: use a role of the cluster's partition (arn:${partitionOfRegion(region)}:iam::...)`);
  }
  const queue = hc.metadata.annotations?.[INTERRUPTION_QUEUE_ANNOTATION];
  if (queue !== undefined && !SQS_QUEUE_NAME.test(queue)) {
    add(FIELD.interruptionQueue, 'InvalidInterruptionQueue', `"${queue}" is not an SQS queue name (1-80 letters, digits, '-' or '_', a FIFO queue's ending in .fifo): name the queue EventBridge sends the cluster's interruption events to, or remove the annotation`);
  }
  return problems;
}

/**
 * The AutoNodeEnabled condition for a HostedCluster autonode will not serve: False, with
 * the first problem's reason and every problem in the message.
 */
export function invalidAutoNodeCondition(problems: readonly AutoNodeProblem[]): ConditionUpdate {
  return {
    type: AUTONODE_CONDITION_TYPES.enabled,
    status: 'False',
    reason: problems[0]?.reason ?? 'InvalidHostedCluster',
    message: problems.map((p) => `${p.field}: ${p.message}`).join('; '),
  };
}

/**
 * The ClusterRef a workflow carries for this cluster: names, never credentials. The role
 * ARN is a reference the credentials provider resolves (activities/cloud/sts.ts).
 */
export function clusterRefOf(config: AutoNodeConfig, kubeconfigSecret?: ClusterRef['kubeconfigSecret']): ClusterRef {
  return {
    name: config.infraID,
    region: config.region,
    credentialsRef: config.roleARN,
    ...(kubeconfigSecret === undefined ? {} : { kubeconfigSecret }),
  };
}
