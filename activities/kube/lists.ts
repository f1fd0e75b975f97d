import { z } from 'zod';

// A Kubernetes list as the API server sends it (`{ items: [...] }`), read from the untyped
// clients (custom objects, KubeClients.getJson). One place for the shape: each reader
// parses its items with the schema it needs.

const ListSchema = z.object({ items: z.array(z.unknown()) });

/** The items of a list response; throws when the body is not a list. */
export function listItems(list: unknown): unknown[] {
  return ListSchema.parse(list).items;
}

/**
 * A list's items, each parsed with `item`, and the raw items (a caller may read more of
 * them). An item that does not parse fails the whole list, named by `what` and index:
 * a reader that dropped it would act on a cluster without it (a node whose pods were
 * dropped looks empty).
 */
export function parseListItems<S extends z.ZodTypeAny>(item: S, list: unknown, what: string): { items: z.output<S>[]; raw: unknown[] } {
  const raw = listItems(list);
  const items = raw.map((value, index) => {
    const parsed = item.safeParse(value);
    if (!parsed.success) throw new Error(`${what} list: item ${index} does not parse: ${parsed.error.message}`);
    return parsed.data as z.output<S>;
  });
  return { items, raw };
}
