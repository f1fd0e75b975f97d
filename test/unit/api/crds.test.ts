import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildCrds, renderCrd } from '../../../core/api';

const CRD_DIR = join(__dirname, '..', '..', '..', 'k8s', 'crds');
const crds = buildCrds();

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every schema node with its path, for structural checks. */
function* walk(node: Node, path: string): Generator<[string, Node]> {
  yield [path, node];
  const properties = node['properties'];
  if (isNode(properties)) for (const [k, v] of Object.entries(properties)) if (isNode(v)) yield* walk(v, `${path}.${k}`);
  if (isNode(node['items'])) yield* walk(node['items'], `${path}[]`);
  if (isNode(node['additionalProperties'])) yield* walk(node['additionalProperties'], `${path}{}`);
}

function versionsOf(fileName: string): Node[] {
  const crd: unknown = parse(readFileSync(join(CRD_DIR, fileName), 'utf8'));
  if (!isNode(crd) || !isNode(crd['spec']) || !Array.isArray(crd['spec']['versions'])) throw new Error(`${fileName} is not a CRD`);
  return crd['spec']['versions'].filter(isNode);
}

describe.each(crds.map((crd) => [crd.fileName, crd] as const))('%s', (fileName, crd) => {
  it('is committed exactly as the generator writes it now (run `npm run generate:crds`)', () => {
    expect(readFileSync(join(CRD_DIR, fileName), 'utf8')).toBe(renderCrd(crd));
  });

  it('serves v1 (storage) and v1beta1 with conversion None and a status subresource', () => {
    const versions = versionsOf(fileName);
    expect(versions.map((v) => [v['name'], v['served'], v['storage']])).toEqual([
      ['v1', true, true],
      ['v1beta1', true, false],
    ]);
    expect(crd.object['spec']).toEqual(expect.objectContaining({ conversion: { strategy: 'None' }, scope: 'Cluster' }));
    for (const v of versions) expect(v['subresources']).toEqual({ status: {} });
  });

  it('has a structural schema: typed nodes, no unions except int-or-string, no refs', () => {
    for (const version of versionsOf(fileName)) {
      const schema = isNode(version['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
      if (!isNode(schema)) throw new Error('no schema');
      const problems: string[] = [];
      for (const [path, node] of walk(schema, String(version['name']))) {
        if (node['x-kubernetes-int-or-string'] === true) continue;
        if (typeof node['type'] !== 'string') problems.push(`${path}: no type`);
        for (const key of ['anyOf', 'oneOf', 'allOf', '$ref', 'const', 'nullable']) if (key in node) problems.push(`${path}: ${key}`);
        if (node['additionalProperties'] === false) problems.push(`${path}: additionalProperties false`);
        if ('properties' in node && 'additionalProperties' in node) problems.push(`${path}: properties with additionalProperties`);
      }
      expect(problems).toEqual([]);
    }
  });
});

it.each([
  ['karpenter.sh_nodeclaims.yaml', ['Type', 'Capacity', 'Zone', 'Node', 'Ready', 'Age']],
  ['karpenter.sh_nodepools.yaml', ['NodeClass', 'Nodes', 'Ready', 'Age']],
  ['karpenter.k8s.aws_ec2nodeclasses.yaml', ['Ready', 'Age']],
])('%s shows the default printer columns %j', (fileName, columns) => {
  for (const version of versionsOf(fileName)) {
    const shown = (Array.isArray(version['additionalPrinterColumns']) ? version['additionalPrinterColumns'] : [])
      .filter((c): c is Node => isNode(c) && c['priority'] === undefined)
      .map((c) => c['name']);
    expect(shown).toEqual(columns);
  }
});

it('carries Karpenter defaults and CEL rules into the NodePool v1 schema', () => {
  const text = readFileSync(join(CRD_DIR, 'karpenter.sh_nodepools.yaml'), 'utf8');
  expect(text).toContain('default: 720h');
  expect(text).toContain('default: WhenEmptyOrUnderutilized');
  expect(text).toContain('- nodes: 10%');
  expect(text).toContain("rule: self.all(x, has(x.schedule) == has(x.duration))");
  expect(text).toContain('label "kubernetes.io/hostname" is restricted');
});

it.each(['karpenter.sh_nodepools.yaml', 'karpenter.sh_nodeclaims.yaml'])(
  '%s checks each requirement with Karpenter CEL rules that name the element, not the list',
  (fileName) => {
    for (const version of versionsOf(fileName)) {
      const schema = isNode(version['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
      if (!isNode(schema)) throw new Error('no schema');
      const items = [...walk(schema, '')].find(([path]) => path.endsWith('.requirements[]'))?.[1];
      const rules = Array.isArray(items?.['x-kubernetes-validations']) ? items['x-kubernetes-validations'].filter(isNode) : [];
      expect(rules.map((r) => r['fieldPath'])).toEqual(['.values', '.values', '.values', '.minValues']);
      const integerRule = rules.find((r) => String(r['rule']).includes('matches'));
      expect(String(integerRule?.['rule'])).toBe(
        "!(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) || (has(self.values) && self.values.size() == 1 && self.values[0].matches('^[0-9]+$'))",
      );
    }
  },
);
