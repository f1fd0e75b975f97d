/**
 * Launch templates are content-addressed: the name carries a hash of everything that goes
 * into the template, so "ensure" is create-if-absent (AlreadyExists is success), a changed
 * AMI, userData or any EC2NodeClass field the template carries (volumes, metadata options,
 * tags, monitoring, kubelet settings) yields a new template, and the old one becomes
 * stale and is deleted. What goes into the template: launch-template-data.ts.
 * Rejected: versioning one template per node class — a launch in flight could pick up a
 * version meant for another AMI, and the content would not be visible in the name.
 */
import { createHash } from 'node:crypto';
import {
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  type Filter,
} from '@aws-sdk/client-ec2';
import { type EC2NodeClass } from '../../core/api';
import { type BlockDeviceMapping, type NodeBootstrap } from '../../core/instancetypes';
import { TagKeys } from './domain';
import { createLaunchTemplateInput } from './launch-template-data';

export { LAUNCH_TEMPLATE_TAG } from './launch-template-data';
import { CreateLaunchTemplateOutputSchema, DescribeLaunchTemplatesOutputSchema } from './ec2-schemas';
import { isInvalidRequestError, isNotFoundError } from './errors';
import { call, type Ec2Context } from './context';

export type MetadataOptions = EC2NodeClass['spec']['metadataOptions'];

export interface LaunchTemplateContent {
  nodeClassName: string;
  imageId: string;
  /** rendered userData, plain text; base64-encoded on the way to EC2 */
  userData: string;
  securityGroupIds: string[];
  instanceProfile?: string;
  /**
   * the node class's tags, restricted keys removed: on the template, and through its tag
   * specifications on the instances, volumes and network interfaces it launches
   */
  tags: Record<string, string>;
  /** spec.blockDeviceMappings in the node class's terms, the family default already applied (effectiveBlockDeviceMappings) */
  blockDeviceMappings: BlockDeviceMapping[];
  /** spec.metadataOptions with its defaults applied */
  metadataOptions: MetadataOptions;
  detailedMonitoring: boolean;
  /** undefined: the subnet decides (EC2's default) */
  associatePublicIPAddress?: boolean;
  /** what the node's kubelet boots with, carried as instance tags (core/instancetypes/bootstrap-tags.ts) */
  bootstrap: NodeBootstrap;
}

export interface LaunchTemplateRef {
  id: string;
  name: string;
}

/** Key-sorted JSON, so the hash does not depend on property order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Everything that goes into the template, so any change (AMI, userData, volumes, metadata
 * options, tags, monitoring, kubelet settings, …) is a new template. Version 2 added the
 * EC2NodeClass fields after userData; version 3 merges the kubelet settings into an
 * Ignition userData (same content, other UserData bytes). Older templates are left stale.
 */
export function launchTemplateHash(clusterName: string, content: LaunchTemplateContent): string {
  const material = canonicalJson({
    version: 3,
    cluster: clusterName,
    ...content,
    securityGroupIds: [...content.securityGroupIds].sort(),
  });
  return createHash('sha256').update(material).digest('hex');
}

const MAX_NAME_LENGTH = 128;

/** `autonode/<cluster>/<nodeclass>/<hash16>`, or `autonode/<hash32>` when that is too long. */
export function launchTemplateName(clusterName: string, content: LaunchTemplateContent): string {
  const hash = launchTemplateHash(clusterName, content);
  const readable = `autonode/${clusterName}/${content.nodeClassName}/${hash.slice(0, 16)}`;
  return readable.length <= MAX_NAME_LENGTH && /^[a-zA-Z0-9().\-/_]+$/.test(readable) ? readable : `autonode/${hash.slice(0, 32)}`;
}

function ownershipTags(ctx: Ec2Context, nodeClassName: string): Record<string, string> {
  return { [TagKeys.cluster(ctx.cluster.name)]: 'owned', [TagKeys.nodeClass]: nodeClassName };
}

async function describeTemplates(ctx: Ec2Context, filters: Filter[]): Promise<LaunchTemplateRef[]> {
  const found: LaunchTemplateRef[] = [];
  let nextToken: string | undefined;
  do {
    const token = nextToken;
    const page = DescribeLaunchTemplatesOutputSchema.parse(
      await call(ctx, 'DescribeLaunchTemplates', () =>
        ctx.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: filters, ...(token ? { NextToken: token } : {}) })),
      ),
    );
    found.push(...(page.LaunchTemplates ?? []).map((t) => ({ id: t.LaunchTemplateId, name: t.LaunchTemplateName })));
    nextToken = page.NextToken;
  } while (nextToken);
  return found;
}

/**
 * How long a template this process ensured is used without asking EC2 again. Templates are
 * content-addressed and only this cluster's node-class reconcile deletes them (stale ones),
 * so a kept name goes wrong only when someone deletes the template by hand; a launch that
 * EC2 refuses for its template forgets it (`forgetLaunchTemplates`). Karpenter keeps its
 * ensured templates in memory the same way.
 */
export const LAUNCH_TEMPLATE_KEEP_MS = 5 * 60_000;

/**
 * The template for `content`, created if absent. Every launch of a burst needs the same one:
 * concurrent calls share one look-up, and a found template is kept for
 * `LAUNCH_TEMPLATE_KEEP_MS`, so a burst describes it once instead of once per claim.
 */
export function ensureLaunchTemplate(ctx: Ec2Context, content: LaunchTemplateContent): Promise<LaunchTemplateRef> {
  const name = launchTemplateName(ctx.cluster.name, content);
  const at = ctx.clock.now().getTime();
  const kept = ctx.templates.get(name);
  if (kept && at - kept.at < LAUNCH_TEMPLATE_KEEP_MS) return kept.ref;
  const ref = ensureNamed(ctx, name, content);
  ctx.templates.set(name, { at, ref });
  ref.catch(() => {
    if (ctx.templates.get(name)?.ref === ref) ctx.templates.delete(name);
  });
  return ref;
}

/** Launches refused for these templates (deleted behind this process's back): look them up again next time. */
export function forgetLaunchTemplates(ctx: Ec2Context, names: readonly string[]): void {
  for (const name of names) ctx.templates.delete(name);
}

async function ensureNamed(ctx: Ec2Context, name: string, content: LaunchTemplateContent): Promise<LaunchTemplateRef> {
  const byName: Filter[] = [{ Name: 'launch-template-name', Values: [name] }];
  const existing = (await describeTemplates(ctx, byName))[0];
  if (existing) return existing;
  const input = createLaunchTemplateInput({ name, content, ownership: ownershipTags(ctx, content.nodeClassName) });
  try {
    const created = CreateLaunchTemplateOutputSchema.parse(
      await call(ctx, 'CreateLaunchTemplate', () => ctx.ec2.send(new CreateLaunchTemplateCommand(input))),
    );
    ctx.logger.info({ launchTemplate: name }, 'created launch template');
    return { id: created.LaunchTemplate.LaunchTemplateId, name };
  } catch (error) {
    // Another worker (or a retry whose response was lost) created it: same content, same name.
    if (isInvalidRequestError(error) && error.awsCode === 'InvalidLaunchTemplateName.AlreadyExistsException') {
      const raced = (await describeTemplates(ctx, byName))[0];
      if (raced) return raced;
    }
    throw error;
  }
}

/** Deletes this cluster's templates for a node class that are not in `keep`; returns their names. */
export async function deleteStaleLaunchTemplates(
  ctx: Ec2Context,
  options: { nodeClassName: string; keep: readonly string[] },
): Promise<string[]> {
  const owned = await describeTemplates(
    ctx,
    Object.entries(ownershipTags(ctx, options.nodeClassName)).map(([k, v]) => ({ Name: `tag:${k}`, Values: [v] })),
  );
  const stale = owned.filter((t) => !options.keep.includes(t.name)).sort((a, b) => a.name.localeCompare(b.name));
  const deleted: string[] = [];
  for (const template of stale) {
    try {
      await call(ctx, 'DeleteLaunchTemplate', () => ctx.ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateId: template.id })));
    } catch (error) {
      if (!isNotFoundError(error)) throw error;
    }
    deleted.push(template.name);
  }
  forgetLaunchTemplates(ctx, deleted);
  if (deleted.length > 0) ctx.logger.info({ deleted }, 'deleted stale launch templates');
  return deleted;
}
