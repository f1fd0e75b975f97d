import { type z } from 'zod';

/**
 * JSON text read as `schema` says, or undefined: absent, not JSON, or not the shape. For
 * values that are optional by nature (an annotation a user or an older version may have
 * written, a cache file): the caller falls back rather than fails.
 */
export function parseJsonWith<S extends z.ZodTypeAny>(schema: S, text: string | undefined): z.output<S> | undefined {
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? (parsed.data as z.output<S>) : undefined;
}
