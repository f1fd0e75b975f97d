/**
 * Resolving selector terms, generic over what they select: terms are ORed, so results are
 * merged by id, and every term that selects nothing (or cannot be used) is named in a
 * problem the node class's condition message carries.
 */
import { describeTerm, isEmptyTerm } from './selectors';

export interface TermOutcome<T> {
  found: T[];
  /** messages about terms that matched nothing or are unusable */
  problems: string[];
  /** set when the terms themselves are invalid, so the condition says so rather than "not found" */
  invalid?: boolean;
}

/** What looking up one term gave: the items, or why it could not be resolved. */
export type TermLookup<T> = T[] | { unresolved: string };

export async function resolveTerms<Term extends object, T extends { id: string }>(
  terms: readonly Term[],
  fieldName: string,
  lookup: (term: Term) => Promise<TermLookup<T>>,
  merge: (existing: T, again: T) => T = (_existing, again) => again,
): Promise<TermOutcome<T>> {
  const byId = new Map<string, T>();
  const problems: string[] = [];
  if (terms.length === 0) problems.push(`${fieldName} is empty`);
  for (const [index, term] of terms.entries()) {
    const label = `${fieldName}[${index}] ${describeTerm(term)}`;
    if (isEmptyTerm(Object.values(term))) {
      problems.push(`${label} is empty`);
      continue;
    }
    const found = await lookup(term);
    if (!Array.isArray(found)) {
      problems.push(`${label} ${found.unresolved}`);
      continue;
    }
    if (found.length === 0) problems.push(`${label} matched nothing`);
    for (const item of found) {
      const existing = byId.get(item.id);
      byId.set(item.id, existing ? merge(existing, item) : item);
    }
  }
  return { found: [...byId.values()].sort((a, b) => a.id.localeCompare(b.id)), problems };
}
