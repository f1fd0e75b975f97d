// Public surface of core/api: schemas (one source of truth for validation, the internal
// model and the CRDs), normalisation of every accepted apiVersion, and manifest parsing.
export { AWS_GROUP, EC2_NODE_CLASS_KIND, KARPENTER_GROUP } from './groups';
export { type ConversionWarning, type ValidationIssue, formatIssue, formatWarning, formatPath } from './issues';
export { type Condition, type ObjectMeta, type Taint, TAINT_EFFECTS } from './primitives';
export { REQUIREMENT_OPERATORS, type Requirement, type RequirementOperator } from './requirements';
export { type Budget, CONSOLIDATION_POLICIES, DISRUPTION_REASONS, type Disruption } from './disruption';
export { type Kubelet } from './kubelet';
export { type NodeClassRef } from './nodeclassref';
export {
  DEFAULT_EXPIRE_AFTER,
  type NodePool,
  NodePoolSchema,
  NodePoolV1Beta1WireSchema,
  NodePoolV1WireSchema,
} from './nodepool';
export { type NodeClaim, NodeClaimSchema, NodeClaimV1Beta1WireSchema, NodeClaimV1WireSchema } from './nodeclaim';
export {
  AMI_FAMILIES,
  type AmiFamily,
  type EC2NodeClass,
  EC2NodeClassSchema,
  EC2NodeClassV1Beta1WireSchema,
  EC2NodeClassV1WireSchema,
} from './ec2nodeclass';
export { type Provisioner, ProvisionerSchema } from './provisioner';
export { KUBELET_COMPATIBILITY_ANNOTATION } from './from-wire';
export { DISCOVERY_PLACEHOLDER, secondsToDuration } from './from-v1alpha5';
export { type KarpenterObject, type NormaliseResult } from './result';
export { normaliseDocument } from './normalise';
export { type DocumentIdentity, type ManifestDocument, parseManifests } from './manifests';
export { moveKubeletIntoNodeClasses, toManifest } from './batch';
export { buildCrds, renderCrd, type Crd } from './crds';
