// Writes k8s/crds/*.yaml from the zod schemas in core/api (the only source of truth).
// Run: `npm run generate:crds` (node -r tsx/cjs scripts/generate-crds.ts).
// test/unit/api/crds.test.ts fails when the committed files differ from this output.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCrds, renderCrd } from '../core/api/crds';

const dir = join(__dirname, '..', 'k8s', 'crds');
mkdirSync(dir, { recursive: true });
for (const crd of buildCrds()) {
  writeFileSync(join(dir, crd.fileName), renderCrd(crd));
  process.stdout.write(`wrote k8s/crds/${crd.fileName}\n`);
}
