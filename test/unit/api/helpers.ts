import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normaliseDocument, parseManifests, type KarpenterObject, type NormaliseResult } from '../../../core/api';

export const SEEDS = join(__dirname, '..', '..', 'fixtures', 'seeds');

export function seedDocuments(file: string): unknown[] {
  return parseManifests(readFileSync(join(SEEDS, file), 'utf8')).map((doc) => {
    if (doc.status !== 'parsed') throw new Error(`${file}: document ${doc.index} does not parse: ${doc.error}`);
    return doc.object;
  });
}

/** The objects of an `ok` result; fails at the caller with the issues otherwise. */
export function expectOk(result: NormaliseResult): { objects: KarpenterObject[]; warnings: string[] } {
  if (result.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result, null, 2)}`);
  return { objects: result.objects, warnings: result.warnings.map((w) => `${w.path}: ${w.message}`) };
}

export function normaliseOne(doc: unknown): KarpenterObject {
  const { objects } = expectOk(normaliseDocument(doc));
  if (objects.length !== 1 || objects[0] === undefined) throw new Error(`expected one object, got ${objects.length}`);
  return objects[0];
}
