import { readFileSync } from 'node:fs';
import { normaliseDocument, parseManifests, type DocumentIdentity, type NormaliseResult } from '../../core/api';

// Shared by `autonode convert` and `autonode validate`: files → documents → results.
// File reading happens here, at the edge; core/api only sees text and objects.

export interface DocumentReport {
  file: string;
  identity: DocumentIdentity;
  /** The parsed object, for passing non-Karpenter documents through unchanged. */
  object?: unknown;
  result: NormaliseResult | { status: 'unparsable'; error: string };
}

export type ReadText = (file: string) => string;

export const readFileOrStdin: ReadText = (file) => readFileSync(file === '-' ? 0 : file, 'utf8');

export function readDocuments(files: string[], readText: ReadText): DocumentReport[] {
  return files.flatMap((file): DocumentReport[] => {
    let text: string;
    try {
      text = readText(file);
    } catch (err) {
      // An unreadable file is one more failed input, reported like a broken document.
      const error = err instanceof Error ? err.message : String(err);
      return [{ file, identity: { index: 0 }, result: { status: 'unparsable', error: `cannot read file: ${error}` } }];
    }
    return parseManifests(text).map((doc): DocumentReport => {
      const { status: _status, ...rest } = doc;
      const identity: DocumentIdentity = { index: rest.index, kind: rest.kind, name: rest.name, line: rest.line };
      return doc.status === 'error'
        ? { file, identity, result: { status: 'unparsable', error: doc.error } }
        : { file, identity, object: doc.object, result: normaliseDocument(doc.object) };
    });
  });
}

/** "manifests.yaml, document 2 (NodePool default, line 14)". */
export function describeDocument(report: DocumentReport): string {
  const { index, kind, name, line } = report.identity;
  const what = [kind, name].filter((part) => part !== undefined).join(' ');
  const details = [what, line !== undefined ? `line ${line}` : undefined].filter((part) => part !== undefined && part !== '');
  return `${report.file}, document ${index + 1}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
}

export function collectFile(value: string, previous: string[]): string[] {
  return [...previous, value];
}
