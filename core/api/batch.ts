import { kubeletSchema } from './kubelet';
import { parseJsonWith } from '../json';
import { type ConversionWarning } from './issues';
import { KUBELET_COMPATIBILITY_ANNOTATION } from './from-wire';
import { type EC2NodeClass } from './ec2nodeclass';
import { type KarpenterObject } from './result';

// Cross-document step of conversion: v1 moved kubelet settings from the NodePool to the
// EC2NodeClass. When both arrive together, the settings move for real; otherwise the
// NodePool keeps upstream's compatibility annotation and a warning says what to do.

function kubeletFromAnnotation(value: string | undefined) {
  return parseJsonWith(kubeletSchema, value);
}

/**
 * Moves each NodePool's v1beta1 kubelet annotation into its EC2NodeClass when that class
 * is among `objects` and has no kubelet settings of its own. Returns new objects; the
 * inputs are not modified. Two pools with different settings for one class keep theirs.
 */
export function moveKubeletIntoNodeClasses(objects: KarpenterObject[]): { objects: KarpenterObject[]; warnings: ConversionWarning[] } {
  const warnings: ConversionWarning[] = [];
  const originals = new Map<string, EC2NodeClass>();
  for (const object of objects) if (object.kind === 'EC2NodeClass' && object.metadata.name) originals.set(object.metadata.name, object);
  const classes = new Map(originals);

  const claimed = new Map<string, string>(); // class name → kubelet JSON moved into it
  const out = objects.map((object): KarpenterObject => {
    if (object.kind !== 'NodePool') return object;
    const annotation = object.metadata.annotations?.[KUBELET_COMPATIBILITY_ANNOTATION];
    const kubelet = kubeletFromAnnotation(annotation);
    const className = object.spec.template.spec.nodeClassRef.name;
    const nodeClass = originals.get(className);
    if (kubelet === undefined || annotation === undefined || nodeClass === undefined) return object;
    const previous = claimed.get(className);
    if (nodeClass.spec.kubelet !== undefined || (previous !== undefined && previous !== annotation)) {
      warnings.push({
        path: `NodePool ${object.metadata.name ?? ''}`,
        message: `kubelet settings differ from those of EC2NodeClass ${className}: kept in annotation ${KUBELET_COMPATIBILITY_ANNOTATION}; give this pool its own EC2NodeClass`,
      });
      return object;
    }
    claimed.set(className, annotation);
    classes.set(className, { ...nodeClass, spec: { ...nodeClass.spec, kubelet } });
    const annotations = Object.fromEntries(
      Object.entries(object.metadata.annotations ?? {}).filter(([key]) => key !== KUBELET_COMPATIBILITY_ANNOTATION),
    );
    return { ...object, metadata: { ...object.metadata, annotations: Object.keys(annotations).length > 0 ? annotations : undefined } };
  });
  return {
    objects: out.map((object) => (object.kind === 'EC2NodeClass' && object.metadata.name ? (classes.get(object.metadata.name) ?? object) : object)),
    warnings,
  };
}

/** A v1 object as a user would apply it: no status, no server-managed metadata. */
export function toManifest(object: KarpenterObject): Record<string, unknown> {
  const { name, generateName, labels, annotations } = object.metadata;
  const metadata = Object.fromEntries(
    Object.entries({ name, generateName, labels, annotations }).filter(([, value]) => value !== undefined),
  );
  return { apiVersion: object.apiVersion, kind: object.kind, metadata, spec: object.spec };
}
