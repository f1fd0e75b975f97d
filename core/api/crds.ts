import { type z } from 'zod';
import { stringify } from 'yaml';
import { isObject, toStructuralSchema, type JsonSchema } from './crd-structural';
import { EC2NodeClassV1Beta1WireSchema, EC2NodeClassV1WireSchema } from './ec2nodeclass';
import { AWS_GROUP, KARPENTER_GROUP } from './groups';
import { NodeClaimV1Beta1WireSchema, NodeClaimV1WireSchema } from './nodeclaim';
import { NodePoolV1Beta1WireSchema, NodePoolV1WireSchema } from './nodepool';

// The guest-cluster CRDs, built from the wire schemas. Both served versions of a kind use
// `conversion: None` (docs/adr/0001-crd-versions-and-conversion.md): v1 is stored, and
// each version's schema accepts both shapes so nothing is pruned on the way through.

interface PrinterColumn {
  name: string;
  type: 'string' | 'date' | 'integer';
  jsonPath: string;
  priority?: number;
}

interface CrdSpec {
  group: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  description: string;
  versions: { name: string; schema: z.ZodType }[];
  columns: PrinterColumn[];
}

const READY: PrinterColumn = { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' };
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const SPECS: CrdSpec[] = [
  {
    group: KARPENTER_GROUP,
    kind: 'NodePool',
    plural: 'nodepools',
    description: 'NodePool is the Schema for the NodePools API: which nodes may be launched for pending pods, and how they are disrupted.',
    versions: [
      { name: 'v1', schema: NodePoolV1WireSchema },
      { name: 'v1beta1', schema: NodePoolV1Beta1WireSchema },
    ],
    columns: [
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.template.spec.nodeClassRef.name' },
      { name: 'Nodes', type: 'string', jsonPath: '.status.resources.nodes' },
      READY,
      AGE,
      { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
      { name: 'CPU', type: 'string', jsonPath: '.status.resources.cpu', priority: 1 },
      { name: 'Memory', type: 'string', jsonPath: '.status.resources.memory', priority: 1 },
    ],
  },
  {
    group: KARPENTER_GROUP,
    kind: 'NodeClaim',
    plural: 'nodeclaims',
    description: 'NodeClaim is the Schema for the NodeClaims API: one node that was requested, launched and registered.',
    versions: [
      { name: 'v1', schema: NodeClaimV1WireSchema },
      { name: 'v1beta1', schema: NodeClaimV1Beta1WireSchema },
    ],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.metadata.labels.node\\.kubernetes\\.io/instance-type' },
      { name: 'Capacity', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/capacity-type' },
      { name: 'Zone', type: 'string', jsonPath: '.metadata.labels.topology\\.kubernetes\\.io/zone' },
      { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
      READY,
      AGE,
      { name: 'ID', type: 'string', jsonPath: '.status.providerID', priority: 1 },
      { name: 'NodePool', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/nodepool', priority: 1 },
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.nodeClassRef.name', priority: 1 },
    ],
  },
  {
    group: AWS_GROUP,
    kind: 'EC2NodeClass',
    plural: 'ec2nodeclasses',
    shortNames: ['ec2nc', 'ec2ncs'],
    description: 'EC2NodeClass is the Schema for the EC2NodeClass API: how EC2 instances are launched (AMI, subnets, security groups, disks).',
    versions: [
      { name: 'v1', schema: EC2NodeClassV1WireSchema },
      { name: 'v1beta1', schema: EC2NodeClassV1Beta1WireSchema },
    ],
    columns: [READY, AGE, { name: 'Role', type: 'string', jsonPath: '.spec.role', priority: 1 }],
  },
];

/** The top level is the API server's business: apiVersion/kind/metadata are not constrained. */
function rootSchema(schema: z.ZodType, description: string): JsonSchema {
  const structural = toStructuralSchema(schema);
  const properties = isObject(structural['properties']) ? { ...structural['properties'] } : {};
  properties['apiVersion'] = { type: 'string' };
  properties['kind'] = { type: 'string' };
  properties['metadata'] = { type: 'object' };
  return { ...structural, description, properties, required: ['spec'] };
}

export interface Crd {
  /** File name under k8s/crds/, e.g. karpenter.sh_nodepools.yaml (controller-gen's convention). */
  fileName: string;
  object: JsonSchema;
}

export function buildCrds(): Crd[] {
  return SPECS.map((spec) => ({
    fileName: `${spec.group}_${spec.plural}.yaml`,
    object: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${spec.plural}.${spec.group}` },
      spec: {
        group: spec.group,
        names: {
          kind: spec.kind,
          listKind: `${spec.kind}List`,
          plural: spec.plural,
          singular: spec.kind.toLowerCase(),
          categories: ['karpenter'],
          ...(spec.shortNames ? { shortNames: spec.shortNames } : {}),
        },
        scope: 'Cluster',
        conversion: { strategy: 'None' },
        versions: spec.versions.map((version, index) => ({
          name: version.name,
          served: true,
          storage: index === 0,
          schema: { openAPIV3Schema: rootSchema(version.schema, spec.description) },
          subresources: { status: {} },
          additionalPrinterColumns: spec.columns,
        })),
      },
    },
  }));
}

export const CRD_HEADER = '# Generated by scripts/generate-crds.ts from the zod schemas in core/api. Do not edit:\n# change the schemas and run `npm run generate:crds`.\n';

/** The exact text committed under k8s/crds/; lineWidth 0 keeps CEL rules on one line. */
export function renderCrd(crd: Crd): string {
  return CRD_HEADER + stringify(crd.object, { lineWidth: 0, aliasDuplicateObjects: false });
}
