import { z } from 'zod';

// zod → JSON Schema (z.toJSONSchema) → a *structural* OpenAPI v3 schema the API server
// accepts (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema).
// Field-specific knowledge lives on the zod schemas as `.meta()`; this walker only
// translates generic constructs and refuses anything it cannot make structural, so a
// new union in a schema fails the generator instead of the API server.

export type JsonSchema = { [key: string]: unknown };

export const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON Schema keywords the API server does not accept in CRD schemas. */
const DROPPED = new Set(['$schema', '$id', 'id', 'propertyNames']);

function intOrString(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  if (typeof node['description'] === 'string') out['description'] = node['description'];
  if (node['default'] !== undefined) out['default'] = node['default'];
  out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
  if (typeof node['pattern'] === 'string') out['pattern'] = node['pattern'];
  out['x-kubernetes-int-or-string'] = true;
  return out;
}

function structural(node: JsonSchema, path: string): JsonSchema {
  if (isObject(node['crd'])) return node['crd'];
  if (node['x-kubernetes-int-or-string'] === true) return intOrString(node);
  if ('$ref' in node || 'oneOf' in node || 'anyOf' in node || 'allOf' in node) {
    throw new Error(`${path}: union or reference is not structural; give the zod schema a .meta({ crd }) or int-or-string`);
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    switch (key) {
      case 'const':
        out['enum'] = [value];
        break;
      case 'properties':
        if (isObject(value)) {
          out['properties'] = Object.fromEntries(
            Object.entries(value).map(([name, child]) => [name, structural(isObject(child) ? child : {}, `${path}.${name}`)]),
          );
        }
        break;
      case 'items':
        if (isObject(value)) out['items'] = structural(value, `${path}[]`);
        break;
      case 'additionalProperties':
        // `false` (strict objects) is implied by structural pruning; `{}` (loose objects)
        // becomes preserve-unknown-fields; a schema stays a map's value schema.
        if (isObject(value) && Object.keys(value).length === 0) out['x-kubernetes-preserve-unknown-fields'] = true;
        else if (isObject(value)) out['additionalProperties'] = structural(value, `${path}{}`);
        break;
      case 'minimum':
      case 'maximum':
        // zod bounds integers by Number.MAX_SAFE_INTEGER; the API server's are int64.
        if (typeof value === 'number' && Math.abs(value) >= Number.MAX_SAFE_INTEGER) break;
        out[key] = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (isObject(out['properties']) && Object.keys(out['properties']).length === 0 && out['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out['properties'];
  }
  return out;
}

/** The structural OpenAPI schema of a zod schema, as a CRD version's openAPIV3Schema. */
export function toStructuralSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' });
  return structural(json, '');
}
