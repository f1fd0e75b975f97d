/**
 * Launches the instance of one NodeClaim with CreateFleet `type: instant`, capacity 1.
 * The claim's instance types may span architectures: every image gets its own launch
 * template and LaunchTemplateConfig, and every override names the image of its type's
 * architecture, so whichever option EC2 picks boots an image built for it (karpenter.md
 * §2.4: several templates when AMIs differ by architecture).
 * Idempotent by the NodeClaim: a retried launch (lost response, worker crash, activity
 * retry) finds the instance by its `karpenter.sh/nodeclaim` tag before creating, and
 * CreateFleet carries a client token derived from the NodeClaim UID and the request.
 * The two cover each other: the tag lookup works where the token is not honoured (moto,
 * or after EC2's idempotency window); the token works where a just-created instance's
 * tags are not yet visible to DescribeInstances (EC2 is eventually consistent).
 */
import { createHash } from 'node:crypto';
import { CreateFleetCommand, _InstanceType, type CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { type CapacityType, type CloudInstance, type ImagesByArchitecture, TagKeys, isRestrictedTagKey } from './domain';
import { CreateFleetOutputSchema, type CreateFleetOutput } from './ec2-schemas';
import {
  type ExhaustedOffering,
  AuthorizationError,
  InsufficientCapacityError,
  InvalidRequestError,
  TransientCloudError,
  isInvalidRequestError,
  isNotFoundError,
} from './errors';
import { classifyAwsError, isRetryableClass, missingPermissions } from './classify';
import { backoffDelayMs, toCloudError } from './retry';
import { overridesByImage, planFleet, type FleetOverride, type InstanceTypeOption, type SubnetChoice } from './overrides';
import { exhaustedBesidesLaunched, launchedInstanceIds, summarizeFleetErrors } from './fleet-response';
import { ensureLaunchTemplate, forgetLaunchTemplates, canonicalJson, type LaunchTemplateContent, type LaunchTemplateRef, type MetadataOptions } from './launch-template';
import {
  effectiveBlockDeviceMappings,
  ephemeralVolumeSize,
  type AmiFamily,
  type BlockDeviceMapping,
  type KubeletProfile,
  type KubeletSettings,
} from '../../core/instancetypes';
import { findByNodeClaim, getInstanceById } from './instances';
import { type Ec2Context } from './context';
import { assertNever } from '../../core/assert';

export interface LaunchRequest {
  nodeClaim: { name: string; uid: string };
  nodePool: string;
  nodeClass: {
    name: string;
    tags: Record<string, string>;
    securityGroupIds: string[];
    subnets: SubnetChoice[];
    /** rendered userData (amiFamily Custom: the node class's userData verbatim) */
    userData: string;
    instanceProfile?: string;
    /** the family whose defaults apply (root volume, kubelet) */
    amiFamily: AmiFamily;
    /** spec.blockDeviceMappings; the family's default mappings when absent or empty */
    blockDeviceMappings?: BlockDeviceMapping[];
    /** spec.metadataOptions with defaults applied; Karpenter's v1 defaults when absent */
    metadataOptions?: MetadataOptions;
    detailedMonitoring?: boolean;
    associatePublicIPAddress?: boolean;
    /** spec.kubelet (the fields that change allocatable): what the node's kubelet boots with */
    kubelet?: KubeletSettings;
    kubeletProfile?: KubeletProfile;
  };
  /**
   * the AMI per architecture, chosen from the resolved node class; instance types of an
   * architecture without one are not launched
   */
  images: ImagesByArchitecture;
  /** the claim's compatible instance types with their architecture and offerings, from the plan */
  instanceTypes: InstanceTypeOption[];
  capacityTypes: CapacityType[];
  /** the claim's zone requirement; undefined means any zone with a subnet */
  zones?: string[];
  /**
   * Aborted when this launch is no longer wanted (its activity attempt timed out and another
   * may be running, or the worker is shutting down): no CreateFleet is sent after it.
   */
  signal?: AbortSignal;
}

export interface LaunchResult {
  instance: CloudInstance;
  /** true when the instance already existed (a retried launch) */
  reused: boolean;
  /**
   * pools EC2 reported exhausted (capacity and quota codes only) even though another pool
   * delivered, never the launched offering itself: remember them too. Empty for a reused
   * instance (the first call's errors are not known again).
   */
  exhaustedOfferings: ExhaustedOffering[];
}

const SPOT_STRATEGY = 'price-capacity-optimized';
const ON_DEMAND_STRATEGY = 'lowest-price';

/** Karpenter's v1 EC2NodeClass default: IMDSv2 only, one hop. */
export const DEFAULT_METADATA_OPTIONS: MetadataOptions = { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' };

/** The launch template for one image of a request's node class: every field it honours, the family defaults filled in. */
export function launchTemplateContent(nodeClass: LaunchRequest['nodeClass'], imageId: string): LaunchTemplateContent {
  const blockDeviceMappings = effectiveBlockDeviceMappings(nodeClass.blockDeviceMappings, nodeClass.amiFamily);
  // From the class's own mappings, as the prediction reads them (catalogQueryFor): absent,
  // the family's default size applies on both sides (Bottlerocket's is its data volume).
  const rootVolumeSize = ephemeralVolumeSize(nodeClass.blockDeviceMappings);
  return {
    nodeClassName: nodeClass.name,
    imageId,
    userData: nodeClass.userData,
    securityGroupIds: nodeClass.securityGroupIds,
    tags: Object.fromEntries(Object.entries(nodeClass.tags).filter(([key]) => !isRestrictedTagKey(key))),
    ...(nodeClass.instanceProfile ? { instanceProfile: nodeClass.instanceProfile } : {}),
    blockDeviceMappings,
    metadataOptions: nodeClass.metadataOptions ?? DEFAULT_METADATA_OPTIONS,
    detailedMonitoring: nodeClass.detailedMonitoring ?? false,
    ...(nodeClass.associatePublicIPAddress !== undefined ? { associatePublicIPAddress: nodeClass.associatePublicIPAddress } : {}),
    bootstrap: {
      amiFamily: nodeClass.amiFamily,
      ...(nodeClass.kubeletProfile !== undefined ? { kubeletProfile: nodeClass.kubeletProfile } : {}),
      kubelet: nodeClass.kubelet ?? {},
      ...(rootVolumeSize !== undefined ? { rootVolumeSize } : {}),
    },
  };
}

export function instanceTags(request: Pick<LaunchRequest, 'nodeClaim' | 'nodePool' | 'nodeClass'>, clusterName: string): Record<string, string> {
  const own = Object.fromEntries(Object.entries(request.nodeClass.tags).filter(([key]) => !isRestrictedTagKey(key)));
  return {
    ...own,
    [TagKeys.cluster(clusterName)]: 'owned',
    [TagKeys.nodePool]: request.nodePool,
    [TagKeys.nodeClaim]: request.nodeClaim.name,
    [TagKeys.nodeClass]: request.nodeClass.name,
    [TagKeys.name]: request.nodeClaim.name,
  };
}

/**
 * 64 characters at most (EC2's limit). The request hash makes a re-planned launch (other
 * overrides after an ICE) a new request rather than an IdempotentParameterMismatch.
 */
export function fleetClientToken(nodeClaimUid: string, input: Omit<CreateFleetCommandInput, 'ClientToken'>): string {
  const digest = createHash('sha256').update(canonicalJson(input)).digest('hex').slice(0, 16);
  return `an-${nodeClaimUid}-${digest}`.slice(0, 64);
}

const KNOWN_INSTANCE_TYPES: ReadonlySet<string> = new Set(Object.values(_InstanceType));

/** The SDK types InstanceType as its closed list; a type it does not know cannot be sent. */
export function isKnownInstanceType(name: string): name is _InstanceType {
  return KNOWN_INSTANCE_TYPES.has(name);
}

/** One LaunchTemplateConfig: a launch template (one image) and the overrides that boot it. */
export interface FleetLaunchConfig {
  launchTemplate: LaunchTemplateRef;
  overrides: FleetOverride[];
}

export function buildCreateFleetInput(options: {
  /** in the order EC2 should see them (overridesByImage: cheapest first) */
  configs: FleetLaunchConfig[];
  capacityType: CapacityType;
  tags: Record<string, string>;
  nodeClaimUid: string;
}): CreateFleetCommandInput {
  const tagList = Object.entries(options.tags)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([Key, Value]) => ({ Key, Value }));
  const input: Omit<CreateFleetCommandInput, 'ClientToken'> = {
    Type: 'instant',
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: options.capacityType },
    // moto raises KeyError on SpotOptions without AllocationStrategy; EC2 defaults differ — always explicit.
    ...(options.capacityType === 'spot'
      ? { SpotOptions: { AllocationStrategy: SPOT_STRATEGY } }
      : { OnDemandOptions: { AllocationStrategy: ON_DEMAND_STRATEGY } }),
    // ImageId on each override as well as in its template, as Karpenter does: an override's
    // ImageId wins over its template's, and EC2 echoes overrides in its errors.
    LaunchTemplateConfigs: options.configs.flatMap((config) => {
      const overrides = config.overrides.flatMap((o) => (isKnownInstanceType(o.instanceType) ? [{
        InstanceType: o.instanceType,
        SubnetId: o.subnetId,
        AvailabilityZone: o.zone,
        ImageId: o.imageId,
        Priority: o.priority,
      }] : []));
      // A config without overrides would launch the template's bare defaults.
      return overrides.length > 0
        ? [{ LaunchTemplateSpecification: { LaunchTemplateId: config.launchTemplate.id, Version: '$Default' }, Overrides: overrides }]
        : [];
    }),
    TagSpecifications: [
      { ResourceType: 'instance', Tags: tagList },
      { ResourceType: 'volume', Tags: tagList },
      { ResourceType: 'fleet', Tags: tagList },
    ],
  };
  return { ...input, ClientToken: fleetClientToken(options.nodeClaimUid, input) };
}

type FleetCallOutcome = { kind: 'created'; output: CreateFleetOutput } | { kind: 'found'; instance: CloudInstance };

/**
 * Sends CreateFleet with our own retry loop: between attempts it looks the NodeClaim up
 * again, because an attempt whose response was lost may well have launched the instance.
 */
async function createFleetIdempotently(ctx: Ec2Context, nodeClaimName: string, input: CreateFleetCommandInput): Promise<FleetCallOutcome> {
  const random = ctx.retry.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return { kind: 'created', output: CreateFleetOutputSchema.parse(await ctx.ec2.send(new CreateFleetCommand(input))) };
    } catch (error) {
      const cls = classifyAwsError(error);
      if (cls.kind === 'idempotency-mismatch') {
        // Same token, other parameters: an earlier request of this claim won. Its instance is the answer.
        const instance = await findByNodeClaim(ctx, nodeClaimName);
        if (instance) return { kind: 'found', instance };
        throw new InvalidRequestError('CreateFleet', cls.code, `CreateFleet for NodeClaim ${nodeClaimName}: ${cls.message}; no instance carries its tag`);
      }
      if (!isRetryableClass(cls) || attempt >= ctx.retry.policy.maxAttempts) throw toCloudError('CreateFleet', cls, attempt);
      const delayMs = backoffDelayMs(ctx.retry.policy, attempt, random);
      const event = { operation: 'CreateFleet', attempt, delayMs, errorKind: cls.kind, code: cls.code };
      ctx.logger.warn({ ...event, nodeClaim: nodeClaimName }, `EC2 CreateFleet failed (${cls.code}); checking for the instance, then retrying`);
      ctx.retry.onRetry?.(event);
      await ctx.clock.sleep(delayMs);
      const instance = await findByNodeClaim(ctx, nodeClaimName);
      if (instance) return { kind: 'found', instance };
    }
  }
}

const AUTH_CODES = new Set(['UnauthorizedOperation', 'AuthFailure', 'AccessDenied', 'Blocked', 'OptInRequired']);

function launchFailure(nodeClaimName: string, output: CreateFleetOutput, summary: ReturnType<typeof summarizeFleetErrors>): Error {
  const auth = summary.other.find((e) => AUTH_CODES.has(e.code));
  if (auth) {
    const missing = missingPermissions('CreateFleet', auth.message);
    return new AuthorizationError('CreateFleet', missing, auth.code, `launching NodeClaim ${nodeClaimName} denied (${auth.code}): the cluster's credentials need ${missing.join(', ')}. AWS said: ${auth.message}`);
  }
  if (summary.exhausted.length > 0) return new InsufficientCapacityError(summary.exhausted);
  if (summary.other.length > 0) {
    const codes = summary.other.map((e) => `${e.code}: ${e.message}`).join('; ');
    return new InvalidRequestError('CreateFleet', summary.other[0]?.code ?? 'Unknown', `launching NodeClaim ${nodeClaimName} failed: ${codes}`);
  }
  return new TransientCloudError('CreateFleet', 'NoInstances', 1, `CreateFleet ${output.FleetId ?? ''} for NodeClaim ${nodeClaimName} returned neither instances nor errors`);
}

/** EC2's codes for a launch template it cannot use (InvalidLaunchTemplateId.NotFound, InvalidLaunchTemplateName.NotFoundException, …). */
const isTemplateError = (code: string): boolean => code.startsWith('InvalidLaunchTemplate');

/** DescribeInstances is eventually consistent right after a launch: NotFound there means "not yet". */
async function describeLaunched(ctx: Ec2Context, instanceId: string): Promise<CloudInstance> {
  const attempts = ctx.retry.policy.maxAttempts;
  for (let attempt = 1; ; attempt++) {
    try {
      return await getInstanceById(ctx, instanceId);
    } catch (error) {
      if (!isNotFoundError(error) || error.reason !== 'absent' || attempt >= attempts) throw error;
      await ctx.clock.sleep(backoffDelayMs(ctx.retry.policy, attempt, ctx.retry.random ?? Math.random));
    }
  }
}

/** How old the first look-up for the claim's instance may be when CreateFleet is sent; older, it is made again. */
export const FRESH_LOOKUP_MS = 5_000;

export async function launchNodeClaim(ctx: Ec2Context, request: LaunchRequest): Promise<LaunchResult> {
  const lookedUp = ctx.clock.now().getTime();
  const existing = await findByNodeClaim(ctx, request.nodeClaim.name);
  if (existing) return { instance: existing, reused: true, exhaustedOfferings: [] };

  const unknownTypes = request.instanceTypes.filter((it) => !isKnownInstanceType(it.instanceType)).map((it) => it.instanceType);
  if (unknownTypes.length > 0) {
    ctx.logger.warn({ nodeClaim: request.nodeClaim.name, unknownTypes }, 'dropping instance types this EC2 SDK cannot name');
  }
  const plan = planFleet({
    instanceTypes: request.instanceTypes.filter((it) => isKnownInstanceType(it.instanceType)),
    subnets: request.nodeClass.subnets,
    capacityTypes: request.capacityTypes,
    images: request.images,
    ...(request.zones ? { zones: request.zones } : {}),
  });
  switch (plan.kind) {
    case 'launch':
      break;
    case 'nothing-available':
      throw new InsufficientCapacityError([], `cannot launch NodeClaim ${request.nodeClaim.name}: ${plan.reason}`);
    case 'no-image':
      // The caller checks for an image first (a node-class problem, retried); reaching here is a bad request.
      throw new InvalidRequestError('CreateFleet', 'NoImageForArchitecture', `cannot launch NodeClaim ${request.nodeClaim.name}: ${plan.reason}`);
    default:
      return assertNever(plan);
  }
  if (plan.withoutImage.length > 0) {
    ctx.logger.warn({ nodeClaim: request.nodeClaim.name, withoutImage: plan.withoutImage }, 'dropping instance types whose architecture has no AMI');
  }
  const configs: FleetLaunchConfig[] = [];
  // One template per image, sequentially: each is create-if-absent by its content hash.
  for (const group of overridesByImage(plan.overrides)) {
    const launchTemplate = await ensureLaunchTemplate(ctx, launchTemplateContent(request.nodeClass, group.imageId));
    configs.push({ launchTemplate, overrides: group.overrides });
  }
  const input = buildCreateFleetInput({
    configs,
    capacityType: plan.capacityType,
    tags: instanceTags(request, ctx.cluster.name),
    nodeClaimUid: request.nodeClaim.uid,
  });
  const started = ctx.clock.now().getTime();
  // The look-up above may be long past (node class, templates and throttled retries in
  // between): a superseded attempt of this claim may have launched since. Look again, and
  // send nothing once this attempt has been given up.
  request.signal?.throwIfAborted();
  if (started - lookedUp > FRESH_LOOKUP_MS) {
    const launchedMeanwhile = await findByNodeClaim(ctx, request.nodeClaim.name);
    if (launchedMeanwhile) return { instance: launchedMeanwhile, reused: true, exhaustedOfferings: [] };
    request.signal?.throwIfAborted();
  }
  // A template refused by EC2 was deleted behind this process's back: the next launch looks it up again.
  const templateNames = configs.map((c) => c.launchTemplate.name);
  const outcome = await createFleetIdempotently(ctx, request.nodeClaim.name, input).catch((error: unknown) => {
    // EC2 (and moto) answer InvalidLaunchTemplateId.NotFound, which reads as NotFound
    const code = isInvalidRequestError(error) || isNotFoundError(error) ? error.awsCode : undefined;
    if (code !== undefined && isTemplateError(code)) forgetLaunchTemplates(ctx, templateNames);
    throw error;
  });
  if (outcome.kind === 'found') return { instance: outcome.instance, reused: true, exhaustedOfferings: [] };

  const zoneOfSubnet = new Map(request.nodeClass.subnets.map((s) => [s.id, s.zone]));
  const summary = summarizeFleetErrors(outcome.output, { requestedCapacityType: plan.capacityType, zoneOfSubnet });
  if (summary.other.some((e) => isTemplateError(e.code))) forgetLaunchTemplates(ctx, templateNames);
  const launched = launchedInstanceIds(outcome.output, plan.capacityType)[0];
  if (launched === undefined) throw launchFailure(request.nodeClaim.name, outcome.output, summary);

  const described = await describeLaunched(ctx, launched.instanceId);
  const instance: CloudInstance = { ...described, capacityType: launched.capacityType };
  const exhausted = exhaustedBesidesLaunched(summary.exhausted, instance);
  ctx.logger.info(
    {
      nodeClaim: request.nodeClaim.name,
      providerId: instance.providerId,
      instanceType: instance.instanceType,
      capacityType: instance.capacityType,
      imageId: instance.imageId,
      overrides: plan.overrides.length,
      launchTemplates: configs.length,
      exhausted: exhausted.length,
      ms: ctx.clock.now().getTime() - started,
    },
    'launched instance',
  );
  return { instance, reused: false, exhaustedOfferings: exhausted };
}
