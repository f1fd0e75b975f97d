import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let root: string | undefined;

/**
 * The project's root (where package.json, k8s/ and scripts/ are), found by walking up from
 * this file. dev/ runs from source only (it is not in the `dist/` build).
 */
export function projectRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'k8s'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`cannot find the autonode project root above ${__dirname}`);
  }
}
