// What a node's kubelet boots with, as EC2 tags: the AMI family (whose kubelet defaults
// apply), the kubelet settings of its EC2NodeClass and the root volume its ephemeral
// storage lives on. Launch puts these on the launch template's instance tags, so an
// instance carries the settings autonode predicted its allocatable from; the local
// stack's simulated kubelet reads them back and reports the allocatable the same core
// function computes.
//
// Why tags and not userData: amiFamily Custom passes userData through verbatim (Karpenter
// does the same), and a HyperShift node's kubelet config comes from ignition, which the
// enablement workflow (issue 13) will render into userData. Until then the tags are the
// channel; they are part of the launch template, so changing a setting makes a new one.
//
// Values use the kubelet's own flag syntax (--max-pods=110,
// --system-reserved=cpu=500m,memory=1Gi, --eviction-hard=memory.available<100Mi), one
// tag per setting, so each value stays far below EC2's 256-character limit.
import { z } from 'zod';
import { amiFamilySchema, kubeletProfileSchema, kubeletSettingsSchema, type AmiFamily, type KubeletProfile, type KubeletSettings } from './kubelet';

export interface NodeBootstrap {
  readonly amiFamily: AmiFamily;
  /** only for amiFamily Custom; the default profile when absent */
  readonly kubeletProfile?: KubeletProfile | undefined;
  readonly kubelet: KubeletSettings;
  /** the volume the kubelet's ephemeral storage is on, e.g. "120Gi"; the family default when absent */
  readonly rootVolumeSize?: string | undefined;
}

const PREFIX = 'autonode.io/';

export const BootstrapTagKeys = {
  amiFamily: `${PREFIX}ami-family`,
  kubeletProfile: `${PREFIX}kubelet-profile`,
  rootVolumeSize: `${PREFIX}root-volume-size`,
  maxPods: `${PREFIX}kubelet-max-pods`,
  podsPerCore: `${PREFIX}kubelet-pods-per-core`,
  systemReserved: `${PREFIX}kubelet-system-reserved`,
  kubeReserved: `${PREFIX}kubelet-kube-reserved`,
  evictionHard: `${PREFIX}kubelet-eviction-hard`,
  evictionSoft: `${PREFIX}kubelet-eviction-soft`,
} as const;

const sortedEntries = (map: Readonly<Record<string, string>>) => Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** `cpu=500m,memory=1Gi` (--system-reserved) or `memory.available<100Mi` (--eviction-hard). */
function formatMap(map: Readonly<Record<string, string>> | undefined, separator: '=' | '<'): string | undefined {
  if (map === undefined || Object.keys(map).length === 0) return undefined;
  return sortedEntries(map).map(([k, v]) => `${k}${separator}${v}`).join(',');
}

function parseMap(text: string, separator: '=' | '<', key: string): Record<string, string> | string {
  const map: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf(separator);
    if (at <= 0 || at === pair.length - 1) return `tag ${key}: "${pair}" is not name${separator}value`;
    map[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return map;
}

/** The tags for a bootstrap; settings that are not set get no tag. Deterministic. */
export function bootstrapTags(bootstrap: NodeBootstrap): Record<string, string> {
  const { kubelet } = bootstrap;
  const entries: [string, string | undefined][] = [
    [BootstrapTagKeys.amiFamily, bootstrap.amiFamily],
    [BootstrapTagKeys.kubeletProfile, bootstrap.kubeletProfile],
    [BootstrapTagKeys.rootVolumeSize, bootstrap.rootVolumeSize],
    [BootstrapTagKeys.maxPods, kubelet.maxPods?.toString()],
    [BootstrapTagKeys.podsPerCore, kubelet.podsPerCore?.toString()],
    [BootstrapTagKeys.systemReserved, formatMap(kubelet.systemReserved, '=')],
    [BootstrapTagKeys.kubeReserved, formatMap(kubelet.kubeReserved, '=')],
    [BootstrapTagKeys.evictionHard, formatMap(kubelet.evictionHard, '<')],
    [BootstrapTagKeys.evictionSoft, formatMap(kubelet.evictionSoft, '<')],
  ];
  return Object.fromEntries(entries.filter((e): e is [string, string] => e[1] !== undefined));
}

export type BootstrapFromTagsResult =
  | { readonly ok: true; readonly bootstrap: NodeBootstrap }
  | { readonly ok: false; readonly reason: string };

const countSchema = z.string().regex(/^(0|[1-9][0-9]*)$/).transform(Number);

/** Reads what bootstrapTags wrote; an instance without the AMI-family tag was not launched by autonode. */
export function bootstrapFromTags(tags: Readonly<Record<string, string>>): BootstrapFromTagsResult {
  const family = amiFamilySchema.safeParse(tags[BootstrapTagKeys.amiFamily]);
  if (!family.success) return { ok: false, reason: `tag ${BootstrapTagKeys.amiFamily} is ${JSON.stringify(tags[BootstrapTagKeys.amiFamily])}, not one of ${amiFamilySchema.options.join(', ')}` };
  const profileText = tags[BootstrapTagKeys.kubeletProfile];
  const profile = profileText === undefined ? undefined : kubeletProfileSchema.safeParse(profileText);
  if (profile && !profile.success) return { ok: false, reason: `tag ${BootstrapTagKeys.kubeletProfile}: unknown profile ${JSON.stringify(profileText)}` };

  const kubelet: Record<string, unknown> = {};
  for (const [field, key] of [['maxPods', BootstrapTagKeys.maxPods], ['podsPerCore', BootstrapTagKeys.podsPerCore]] as const) {
    const text = tags[key];
    if (text === undefined) continue;
    const count = countSchema.safeParse(text);
    if (!count.success) return { ok: false, reason: `tag ${key}: "${text}" is not a whole number` };
    kubelet[field] = count.data;
  }
  const maps = [
    ['systemReserved', BootstrapTagKeys.systemReserved, '='],
    ['kubeReserved', BootstrapTagKeys.kubeReserved, '='],
    ['evictionHard', BootstrapTagKeys.evictionHard, '<'],
    ['evictionSoft', BootstrapTagKeys.evictionSoft, '<'],
  ] as const;
  for (const [field, key, separator] of maps) {
    const text = tags[key];
    if (text === undefined) continue;
    const map = parseMap(text, separator, key);
    if (typeof map === 'string') return { ok: false, reason: map };
    kubelet[field] = map;
  }
  const rootVolumeSize = tags[BootstrapTagKeys.rootVolumeSize];
  return {
    ok: true,
    bootstrap: {
      amiFamily: family.data,
      ...(profile?.success ? { kubeletProfile: profile.data } : {}),
      // built from validated pieces; parsed again so the type needs no cast
      kubelet: kubeletSettingsSchema.parse(kubelet),
      ...(rootVolumeSize !== undefined ? { rootVolumeSize } : {}),
    },
  };
}
