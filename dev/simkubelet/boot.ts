/**
 * How a simulated machine boots: from its userData, as a real one does. An RHCOS node reads
 * its Ignition config (core/enablement/ignition.ts): the bootstrap kubeconfig tells its
 * kubelet which API server to trust and join and with which token, the drop-in and the
 * node-sizing file how to configure itself. A userData that is not such a config, or whose
 * kubeconfig does not authenticate, leaves the machine without a node — a wrong userData
 * visibly fails to join.
 *
 * The instance's disk is read from its launch tag (`autonode.io/root-volume-size`): moto
 * does not apply a launch template's block device mappings (every instance gets 8 GiB), so
 * the tag stands in for the volume the template asked for.
 */
import { DescribeInstanceAttributeCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { type KubeConfig } from '@kubernetes/client-node';
import { type CloudInstance } from '../../activities/cloud/domain';
import { bootFromIgnition } from '../../core/enablement/ignition';
import { BootstrapTagKeys } from '../../core/instancetypes';
import { tokenKubeConfig, type ClusterAccess } from './identity';
import { type NodeShape, type NodeShapeOf, type ShapeOfBootstrap } from './resources';

/** The user the bootstrap token authenticates as is the API server's business; this is only the kubeconfig's label. */
const BOOTSTRAP_USER = 'kubelet-bootstrap';

export type BootPlan = { ok: true; shape: NodeShape; guest: ClusterAccess; bootstrap: KubeConfig } | { ok: false; reason: string };

/**
 * For tests that launch without enablement (no userData on their EC2NodeClass): the
 * machine joins with the test's bootstrap identity and the settings in its launch tags.
 * Opt-in per fleet, never a silent default.
 */
export interface WithoutUserData {
  guest: ClusterAccess;
  bootstrap: () => Promise<KubeConfig>;
  shapeOf: NodeShapeOf;
}

/** DescribeInstanceAttribute userData, decoded; undefined when the instance has none. */
export function instanceUserData(ec2: EC2Client): (instanceId: string) => Promise<string | undefined> {
  return async (instanceId) => {
    const out = await ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: instanceId, Attribute: 'userData' }));
    const value = out.UserData?.Value;
    if (!value) return undefined;
    const text = Buffer.from(value, 'base64').toString('utf8');
    return text.length === 0 ? undefined : text;
  };
}

export async function planBoot(
  instance: Pick<CloudInstance, 'instanceId' | 'instanceType' | 'tags'>,
  userData: string | undefined,
  options: { shapes: ShapeOfBootstrap; withoutUserData?: WithoutUserData },
): Promise<BootPlan> {
  if (userData === undefined) {
    const fallback = options.withoutUserData;
    if (!fallback) return { ok: false, reason: `instance ${instance.instanceId} has no userData: nothing tells its kubelet which cluster to join` };
    const shape = fallback.shapeOf(instance);
    if (!shape.ok) return shape;
    return { ok: true, shape: shape.shape, guest: fallback.guest, bootstrap: await fallback.bootstrap() };
  }
  const booted = bootFromIgnition(userData);
  if (!booted.ok) return { ok: false, reason: `instance ${instance.instanceId} cannot boot from its userData: ${booted.reason}` };
  const { credentials, kubelet, kubeletProfile } = booted.node;
  const rootVolumeSize = instance.tags[BootstrapTagKeys.rootVolumeSize];
  // Ignition means an RHCOS machine: OpenShift's kubelet (amiFamily Custom) with the drop-in's settings.
  const shape = options.shapes(instance.instanceType, {
    amiFamily: 'Custom',
    ...(kubeletProfile ? { kubeletProfile } : {}),
    kubelet,
    ...(rootVolumeSize ? { rootVolumeSize } : {}),
  });
  if (!shape.ok) return shape;
  const guest: ClusterAccess = { server: credentials.server, caPem: credentials.caPem };
  return { ok: true, shape: shape.shape, guest, bootstrap: tokenKubeConfig(guest, BOOTSTRAP_USER, credentials.token) };
}
