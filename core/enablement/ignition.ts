/**
 * The node bootstrap payload (userData) of a HyperShift node, and what autonode adds to it.
 *
 * On HyperShift, a NodePool's userData is a small Ignition config (spec 3.x) whose
 * `ignition.config.merge` points at the hosted control plane's ignition server with a
 * bearer token; the server answers with the full machine config, which holds the kubelet's
 * bootstrap kubeconfig (`/etc/kubernetes/kubeconfig`: API server, CA, the node
 * bootstrapper's token) and the kubelet configuration. The local stack has no ignition
 * server, so its userData *inlines* the part of that answer a node needs to join — the
 * bootstrap kubeconfig — as an Ignition file. That inlining is the model; the format
 * (Ignition 3 JSON, `storage.files[].contents.source` as RFC 2397 data URLs) and the paths
 * are OpenShift's.
 *
 * autonode adds, at launch, the EC2NodeClass's kubelet settings as a kubelet drop-in
 * (`/etc/kubernetes/kubelet.conf.d/50-autonode.json`, a KubeletConfiguration) and its
 * OpenShift sizing profile (`/etc/node-sizing-enabled.env`, the MCO's file), so the kubelet
 * boots with exactly the settings the NodeClaim's allocatable was predicted from. Karpenter
 * does the same for its own AMI families (it merges kubelet flags into their userData); for
 * `Custom` it passes userData through, which is how a NodeClaim came to predict 250 pods
 * while its node reported 29. A userData that is not an Ignition config passes through
 * untouched (rejected: wrapping it — a script userData belongs to a machine that does not
 * read Ignition).
 */
import { z } from 'zod';
import { kubeletProfileSchema, kubeletSettingsSchema, type KubeletProfile, type KubeletSettings, type NodeBootstrap } from '../instancetypes';

export const BOOTSTRAP_KUBECONFIG_PATH = '/etc/kubernetes/kubeconfig';
export const KUBELET_DROP_IN_PATH = '/etc/kubernetes/kubelet.conf.d/50-autonode.json';
export const NODE_SIZING_PATH = '/etc/node-sizing-enabled.env';

const FileSchema = z.object({ path: z.string(), contents: z.object({ source: z.string() }).passthrough().optional() }).passthrough();
const IgnitionSchema = z
  .object({
    ignition: z.object({ version: z.string().regex(/^3\.\d+\.\d+/) }).passthrough(),
    storage: z.object({ files: z.array(FileSchema).optional() }).passthrough().optional(),
  })
  .passthrough();
type Ignition = z.infer<typeof IgnitionSchema>;

/** Ignition 3.x JSON, or why not (a script, YAML, another spec version…). */
export function parseIgnition(userData: string): { ok: true; config: Ignition } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(userData);
  } catch {
    return { ok: false, reason: 'userData is not JSON, so not an Ignition config' };
  }
  const parsed = IgnitionSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: `userData is not an Ignition 3.x config: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  return { ok: true, config: parsed.data };
}

/** RFC 2397, percent-encoded (Ignition's own tools write base64 too; both are read). */
export function dataUrl(text: string): string {
  return `data:,${encodeURIComponent(text)}`;
}

export function readDataUrl(source: string): string | undefined {
  const match = /^data:([^,]*),(.*)$/s.exec(source);
  if (!match) return undefined;
  const [, meta = '', payload = ''] = match;
  try {
    if (meta.split(';').includes('base64')) return new TextDecoder().decode(Uint8Array.from(atob(payload), (c) => c.charCodeAt(0)));
    return decodeURIComponent(payload);
  } catch {
    return undefined;
  }
}

function withFiles(config: Ignition, files: { path: string; mode: number; text: string }[]): Ignition {
  const replaced = new Set(files.map((f) => f.path));
  const kept = (config.storage?.files ?? []).filter((f) => !replaced.has(f.path));
  const added = files.map((f) => ({ path: f.path, mode: f.mode, overwrite: true, contents: { source: dataUrl(f.text) } }));
  return { ...config, storage: { ...config.storage, files: [...kept, ...added] } };
}

export interface NodeJoinCredentials {
  server: string;
  caPem: string;
  token: string;
}

/** The bootstrap kubeconfig a kubelet starts with (`--bootstrap-kubeconfig`), as JSON (a kubeconfig may be JSON). */
export function bootstrapKubeconfig(credentials: NodeJoinCredentials): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cluster', cluster: { server: credentials.server, 'certificate-authority-data': btoa(credentials.caPem) } }],
    users: [{ name: 'kubelet', user: { token: credentials.token } }],
    contexts: [{ name: 'kubelet', context: { cluster: 'cluster', user: 'kubelet' } }],
    'current-context': 'kubelet',
  });
}

/** The cluster's node userData on the local stack: what the ignition server would serve a node, inlined (see the file comment). */
export function nodeIgnition(credentials: NodeJoinCredentials): string {
  const config = withFiles({ ignition: { version: '3.4.0' } }, [{ path: BOOTSTRAP_KUBECONFIG_PATH, mode: 0o600, text: bootstrapKubeconfig(credentials) }]);
  return JSON.stringify(config);
}

/** The drop-in: only the settings the class sets (the image's defaults apply to the rest, as on the node). */
export function kubeletDropIn(kubelet: KubeletSettings): string {
  return JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...kubelet });
}

/** MCO's node-sizing file: auto-sizing on for openshift-autosize, off (the static reservation) otherwise. */
export function nodeSizingEnv(profile: KubeletProfile | undefined): string {
  return `NODE_SIZING_ENABLED=${profile === 'openshift-autosize' ? 'true' : 'false'}\n`;
}

/**
 * The userData a launch sends: an Ignition config gets the class's kubelet settings and
 * sizing profile as files (replacing earlier copies of the same paths); anything else is
 * sent as it is. Deterministic (same input, same bytes).
 */
export function withKubeletConfig(userData: string, bootstrap: NodeBootstrap): string {
  const parsed = parseIgnition(userData);
  if (!parsed.ok) return userData;
  return JSON.stringify(
    withFiles(parsed.config, [
      { path: KUBELET_DROP_IN_PATH, mode: 0o644, text: kubeletDropIn(bootstrap.kubelet) },
      ...(bootstrap.amiFamily === 'Custom' ? [{ path: NODE_SIZING_PATH, mode: 0o644, text: nodeSizingEnv(bootstrap.kubeletProfile) }] : []),
    ]),
  );
}

export interface BootedNode {
  credentials: NodeJoinCredentials;
  kubelet: KubeletSettings;
  kubeletProfile?: KubeletProfile;
}

const KubeconfigSchema = z.object({
  clusters: z.array(z.object({ name: z.string(), cluster: z.object({ server: z.string().url(), 'certificate-authority-data': z.string().min(1) }) })).min(1),
  users: z.array(z.object({ name: z.string(), user: z.object({ token: z.string().min(1) }) })).min(1),
});
const DropInSchema = kubeletSettingsSchema.extend({ apiVersion: z.literal('kubelet.config.k8s.io/v1beta1'), kind: z.literal('KubeletConfiguration') });

/**
 * What a machine booting from this userData would do: find its bootstrap kubeconfig, its
 * kubelet drop-in and its sizing profile — or the reason it cannot start a kubelet, naming
 * the file and field at fault.
 */
export function bootFromIgnition(userData: string): { ok: true; node: BootedNode } | { ok: false; reason: string } {
  const parsed = parseIgnition(userData);
  if (!parsed.ok) return parsed;
  const files = new Map((parsed.config.storage?.files ?? []).map((f) => [f.path, f.contents?.source === undefined ? undefined : readDataUrl(f.contents.source)]));
  const kubeconfigText = files.get(BOOTSTRAP_KUBECONFIG_PATH);
  if (kubeconfigText === undefined) return { ok: false, reason: `the Ignition config has no readable ${BOOTSTRAP_KUBECONFIG_PATH} (the kubelet's bootstrap kubeconfig)` };
  let kubeconfigJson: unknown;
  try {
    kubeconfigJson = JSON.parse(kubeconfigText);
  } catch {
    return { ok: false, reason: `${BOOTSTRAP_KUBECONFIG_PATH} is not a JSON kubeconfig` };
  }
  const kubeconfig = KubeconfigSchema.safeParse(kubeconfigJson);
  if (!kubeconfig.success) return { ok: false, reason: `${BOOTSTRAP_KUBECONFIG_PATH}: ${kubeconfig.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
  const cluster = kubeconfig.data.clusters[0];
  const user = kubeconfig.data.users[0];
  if (!cluster || !user) return { ok: false, reason: `${BOOTSTRAP_KUBECONFIG_PATH} names no cluster or user` };
  let caPem: string;
  try {
    caPem = new TextDecoder().decode(Uint8Array.from(atob(cluster.cluster['certificate-authority-data']), (c) => c.charCodeAt(0)));
  } catch {
    return { ok: false, reason: `${BOOTSTRAP_KUBECONFIG_PATH}: certificate-authority-data is not base64` };
  }

  let kubelet: KubeletSettings = {};
  const dropInText = files.get(KUBELET_DROP_IN_PATH);
  if (dropInText !== undefined) {
    let dropInJson: unknown;
    try {
      dropInJson = JSON.parse(dropInText);
    } catch {
      return { ok: false, reason: `${KUBELET_DROP_IN_PATH} is not JSON` };
    }
    const dropIn = DropInSchema.safeParse(dropInJson);
    if (!dropIn.success) return { ok: false, reason: `${KUBELET_DROP_IN_PATH}: ${dropIn.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
    // the settings without apiVersion/kind (zod objects strip unknown keys)
    kubelet = kubeletSettingsSchema.parse(dropIn.data);
  }
  const sizing = files.get(NODE_SIZING_PATH);
  const profile = sizing === undefined ? undefined : /^NODE_SIZING_ENABLED=true$/m.test(sizing) ? 'openshift-autosize' : 'openshift-static';
  return {
    ok: true,
    node: {
      credentials: { server: cluster.cluster.server, caPem, token: user.user.token },
      kubelet,
      ...(profile === undefined ? {} : { kubeletProfile: kubeletProfileSchema.parse(profile) }),
    },
  };
}
