import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The workflow bundle a deployment ships: built once by `npm run build` (`node
 * dist/workers/bundle.js` after tsc) from the compiled workflows, written beside them in
 * dist/, and loaded by every worker process instead of running webpack at start (which
 * costs each worker ~100 MiB and a few seconds of CPU, docs/capacity.md).
 *
 * Two variants, because the failure converter is part of the workflow code: the plain one,
 * and one with the payload codec's failure converter (workers/codec/failure-converter.ts)
 * for workers that encrypt payloads (AUTONODE_PAYLOAD_KEYS*).
 */
export const BUNDLE_FILES = { plain: 'workflow-bundle.js', encrypted: 'workflow-bundle-encrypted.js' } as const;
export type BundleVariant = keyof typeof BUNDLE_FILES;

/** Where a worker's workflows come from: a bundle file, or the source folder bundled at start. */
export type WorkflowSource = { workflowBundle: { codePath: string } } | { workflowsPath: string };

/**
 * AUTONODE_WORKFLOW_BUNDLE when set; else the shipped bundle of the right variant when this
 * is compiled code (dist/workers/main.js) and the build wrote one; else the workflows
 * folder, bundled by the worker itself (running from source: a checkout's `dist/` may be
 * stale, so it is never looked at from there).
 */
export function workflowSource(o: {
  configured: string | undefined;
  variant: BundleVariant;
  /** the folder of the running workers/ code (its __dirname) */
  workersDir: string;
  compiled: boolean;
  /** the workflows' entry point, bundled at start when there is no bundle */
  workflowsPath: string;
  exists?: (path: string) => boolean;
}): WorkflowSource {
  if (o.configured) return { workflowBundle: { codePath: o.configured } };
  const shipped = join(o.workersDir, '..', BUNDLE_FILES[o.variant]);
  if (o.compiled && (o.exists ?? existsSync)(shipped)) return { workflowBundle: { codePath: shipped } };
  return { workflowsPath: o.workflowsPath };
}

/**
 * Builds both variants from the workflows beside this file (compiled: dist/workflows; from
 * source: workflows/) into `outDir`. Returns the files written.
 */
export async function buildWorkflowBundles(outDir: string, log: (line: string) => void = () => undefined): Promise<Record<BundleVariant, string>> {
  // webpack and its loaders only when building, never in a worker that loads a bundle
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: log, error: log };
  const workflowsPath = require.resolve('../workflows');
  mkdirSync(outDir, { recursive: true });
  const written = {} as Record<BundleVariant, string>;
  for (const variant of ['plain', 'encrypted'] as const) {
    const t0 = Date.now();
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      logger: quiet,
      ...(variant === 'encrypted' ? { failureConverterPath: require.resolve('./codec/failure-converter') } : {}),
    });
    const file = join(outDir, BUNDLE_FILES[variant]);
    writeFileSync(file, code);
    written[variant] = file;
    log(`${file}: ${(code.length / 1024 / 1024).toFixed(1)} MiB in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  }
  return written;
}

// `node dist/workers/bundle.js` (npm run build): the bundles into dist/, beside the compiled workflows
if (require.main === module) {
  buildWorkflowBundles(join(__dirname, '..'), (line) => process.stderr.write(`${line}\n`)).catch((err: unknown) => {
    process.stderr.write(`workflow bundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
