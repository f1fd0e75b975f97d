/**
 * Capacity and allocatable of a simulated node, as its kubelet would report them: the
 * instance type's hardware from the bundled catalog, and the kubelet configuration the
 * instance was launched with — its AMI family's defaults, the EC2NodeClass kubelet
 * settings and the root volume, which the launch template puts on the instance as tags
 * (core/instancetypes/bootstrap-tags.ts). Computed by the same core function that
 * predicts a NodeClaim's allocatable, so a joined Node agrees with its claim exactly
 * when launch carried the settings the prediction used.
 *
 * An instance launched with an Ignition userData boots from it instead (boot.ts): the
 * kubelet settings are then the drop-in autonode rendered into the userData at launch.
 */
import { type CloudInstance } from '../../activities/cloud/domain';
import { bootstrapFromTags, catalogInstanceTypes, type CatalogResult, type InstanceType, type NodeBootstrap } from '../../core/instancetypes';
import { type NodeResources, type SimulatedInstance } from './node-object';

export type NodeShape = Pick<SimulatedInstance, 'capacity' | 'allocatable' | 'arch'>;

/** A shape, or why the instance's kubelet cannot start (its node never registers, as a misconfigured machine's would not). */
export type NodeShapeResult = { ok: true; shape: NodeShape } | { ok: false; reason: string };

export type NodeShapeOf = (instance: Pick<CloudInstance, 'instanceType' | 'tags'>) => NodeShapeResult;

const DEFAULTS: NodeResources = { cpu: '0', memory: '0', pods: '0', 'ephemeral-storage': '0' };

/** A node's shape from its instance type and the configuration its kubelet booted with. */
export type ShapeOfBootstrap = (instanceType: string, bootstrap: NodeBootstrap) => NodeShapeResult;

/**
 * Instance types not in the catalog cannot be simulated faithfully (moto launches any
 * type name); their kubelet does not start rather than report made-up resources.
 */
export function nodeShapes(region: string, now: () => number = Date.now): ShapeOfBootstrap {
  const catalogs = new Map<string, CatalogResult>();
  const catalogFor = (bootstrap: NodeBootstrap): CatalogResult => {
    const key = JSON.stringify(bootstrap);
    let catalog = catalogs.get(key);
    if (!catalog) {
      catalog = catalogInstanceTypes({ region, now: now(), ...bootstrap });
      catalogs.set(key, catalog);
    }
    return catalog;
  };
  return (instanceType, bootstrap) => {
    const catalog = catalogFor(bootstrap);
    if (!catalog.ok) return { ok: false, reason: catalog.reason };
    const type: InstanceType | undefined = catalog.instanceTypes.find((t) => t.name === instanceType);
    if (!type) return { ok: false, reason: `instance type ${instanceType} is not in the bundled catalog for ${region}` };
    return {
      ok: true,
      shape: {
        capacity: withDefaults(type.capacity),
        allocatable: withDefaults(type.allocatable),
        arch: type.labels['kubernetes.io/arch'] === 'arm64' ? 'arm64' : 'amd64',
      },
    };
  };
}

/** The shape from the settings the launch template put on the instance as tags (instances launched without userData). */
export function launchedNodeShapes(region: string, now: () => number = Date.now): NodeShapeOf {
  const shapes = nodeShapes(region, now);
  return (instance) => {
    const bootstrap = bootstrapFromTags(instance.tags);
    if (!bootstrap.ok) return { ok: false, reason: `no kubelet configuration: ${bootstrap.reason}` };
    return shapes(instance.instanceType, bootstrap.bootstrap);
  };
}

function withDefaults(list: Readonly<Record<string, string>>): NodeResources {
  return { ...list, cpu: list.cpu ?? DEFAULTS.cpu, memory: list.memory ?? DEFAULTS.memory, pods: list.pods ?? DEFAULTS.pods, 'ephemeral-storage': list['ephemeral-storage'] ?? DEFAULTS['ephemeral-storage'] };
}
