// API groups and kinds. Each kind has three schemas (see
// docs/adr/0001-crd-versions-and-conversion.md):
// - the canonical schema: the internal model — v1 fields only, v1 defaults applied;
// - a v1 and a v1beta1 *wire* schema: what the API server serves and what users may write
//   under that apiVersion. Both accept the union of v1 and v1beta1 fields (the CRDs use
//   `conversion: None`, so either shape can be stored and read back through either
//   version); they differ in defaults and required fields.

export const KARPENTER_GROUP = 'karpenter.sh';
export const AWS_GROUP = 'karpenter.k8s.aws';
export const EC2_NODE_CLASS_KIND = 'EC2NodeClass';
