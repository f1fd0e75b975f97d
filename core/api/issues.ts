import { type z } from 'zod';

/**
 * One thing wrong with a manifest, precise enough to fix without reading the schema:
 * where (`spec.template.spec.requirements[2].operator`), what was there, what is wrong,
 * and what to write instead.
 */
export interface ValidationIssue {
  path: string;
  /** The offending value as found in the input; undefined when the field is missing. */
  value: unknown;
  message: string;
  fix: string;
}

/** A non-fatal remark about a manifest, e.g. a conversion that changed behaviour. */
export interface ConversionWarning {
  path: string;
  message: string;
}

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, segment);
  }
  return current;
}

function renderValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json.length > 120 ? `${json.slice(0, 117)}...` : json;
}

export function formatIssue(issue: ValidationIssue): string {
  return `${issue.path || '(document)'}: ${issue.message} (got ${renderValue(issue.value)}). Fix: ${issue.fix}`;
}

export function formatWarning(warning: ConversionWarning): string {
  return warning.path ? `${warning.path}: ${warning.message}` : warning.message;
}

/**
 * Adds an issue from a superRefine. `path` is relative to the refined value; the fix
 * travels in `params` so that toValidationIssues can keep it apart from the message.
 */
export function reportIssue(
  ctx: z.RefinementCtx,
  issue: { path?: PathSegment[]; message: string; fix: string },
): void {
  ctx.addIssue({ code: 'custom', path: issue.path ?? [], message: issue.message, params: { fix: issue.fix } });
}

function fixFor(issue: z.core.$ZodIssue, value: unknown): { message: string; fix: string } {
  const field = issue.path.length > 0 ? String(issue.path[issue.path.length - 1]) : 'the document';
  switch (issue.code) {
    case 'custom': {
      const fix: unknown = issue.params?.['fix'];
      return { message: issue.message, fix: typeof fix === 'string' ? fix : 'see the message' };
    }
    case 'invalid_type':
      if (value === undefined) return { message: `${field} is required`, fix: `set ${field} (${issue.expected})` };
      if (issue.expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
        return { message: 'expected string', fix: `quote it: "${String(value)}"` };
      }
      return { message: `expected ${issue.expected}`, fix: `write ${field} as ${issue.expected === 'int' ? 'an integer' : `a ${issue.expected}`}` };
    case 'invalid_value':
      return {
        message: issue.values.length === 1 ? `must be ${renderValue(issue.values[0])}` : `not one of the allowed values`,
        fix: `use one of: ${issue.values.map((v) => String(v)).join(', ')}`,
      };
    case 'unrecognized_keys':
      return {
        message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`,
        fix: 'remove it or correct its spelling (field names are case-sensitive)',
      };
    case 'too_small':
      return {
        message: issue.message,
        fix: `${field} needs at least ${String(issue.minimum)}${issue.origin === 'array' ? ' item(s)' : issue.origin === 'string' ? ' character(s)' : ''}`,
      };
    case 'too_big':
      return {
        message: issue.message,
        fix: `${field} allows at most ${String(issue.maximum)}${issue.origin === 'array' ? ' item(s)' : issue.origin === 'string' ? ' character(s)' : ''}`,
      };
    case 'invalid_format':
      return { message: issue.message, fix: issue.pattern ? `match the pattern ${issue.pattern}` : `use the ${issue.format} format` };
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
    case 'not_multiple_of':
      return { message: issue.message, fix: 'see the message' };
    default: {
      // Codes added by a future zod still produce a readable message.
      const unexpected: { message: string } = issue;
      return { message: unexpected.message, fix: 'see the message' };
    }
  }
}

/** Maps zod's issues onto ValidationIssues, reading the bad values from the input. */
export function toValidationIssues(error: z.ZodError, input: unknown, base: readonly PathSegment[] = []): ValidationIssue[] {
  return error.issues.map((issue) => {
    // An unknown field is reported at its own path, so the path alone points at the typo.
    const unknownKey = issue.code === 'unrecognized_keys' && issue.keys.length === 1 ? issue.keys : [];
    const path = [...base, ...issue.path, ...unknownKey];
    const value = issue.code === 'unrecognized_keys' ? valueAt(input, [...issue.path, ...unknownKey]) : valueAt(input, issue.path);
    const { message, fix } = fixFor(issue, value);
    return { path: formatPath(path), value, message, fix };
  });
}
