import { parseAllDocuments } from 'yaml';

// Multi-document YAML → one result per document. A document that fails to parse is
// reported with its position and whatever identity could be read, and never stops the
// documents after it.

/** What can be said about a document even when it is broken. */
export interface DocumentIdentity {
  /** 0-based position in the stream, counting every `---` document. */
  index: number;
  kind?: string;
  name?: string;
  /** 1-based line where the document starts. */
  line?: number;
}

export type ManifestDocument =
  | (DocumentIdentity & { status: 'parsed'; object: unknown })
  | (DocumentIdentity & { status: 'error'; error: string });

const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function parseManifests(text: string): ManifestDocument[] {
  const documents = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true });
  // A stream that is only comments yields an EmptyStream, which is not an array.
  if (!Array.isArray(documents)) return [];
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let line = 0;
    while (line + 1 < lineStarts.length && (lineStarts[line + 1] ?? Infinity) <= offset) line++;
    return line + 1;
  };

  const results: ManifestDocument[] = [];
  documents.forEach((doc, index) => {
    const identity: DocumentIdentity = {
      index,
      kind: asString(doc.get('kind')),
      name: asString(doc.getIn(['metadata', 'name'])),
      line: doc.contents?.range ? lineOf(doc.contents.range[0]) : undefined,
    };
    const [firstError] = doc.errors;
    if (firstError) {
      const offset = firstError.pos[0];
      const line = lineOf(offset);
      const column = offset - (lineStarts[line - 1] ?? 0) + 1;
      results.push({
        ...identity,
        status: 'error',
        error: `${firstError.message.split('\n')[0] ?? firstError.code} at line ${line}, column ${column}`,
      });
      return;
    }
    const object: unknown = doc.toJS();
    if (object === null || object === undefined) return; // empty document between separators
    if (typeof object !== 'object' || Array.isArray(object)) {
      results.push({ ...identity, status: 'error', error: 'a manifest must be a YAML mapping (apiVersion, kind, metadata, spec)' });
      return;
    }
    results.push({ ...identity, status: 'parsed', object });
  });
  return results;
}
