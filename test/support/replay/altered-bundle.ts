import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/** One deliberate change to today's workflow code: `from` replaced by `to` in `file` (relative to the repository). */
export interface SourceEdit {
  file: string;
  from: string;
  to: string;
}

/**
 * The workflow bundle a worker would run after `edits` (and `interceptorModules`), built the
 * way test/unit/replay.test.ts builds today's: what CI would replay the committed histories
 * against had the change been committed.
 */
export async function alteredWorkflowBundle(options: { edits?: readonly SourceEdit[]; interceptorModules?: readonly string[] }): Promise<{ code: string }> {
  const byFile = new Map<string, { from: string; to: string }[]>();
  for (const e of options.edits ?? []) byFile.set(join(root, e.file), [...(byFile.get(join(root, e.file)) ?? []), { from: e.from, to: e.to }]);
  return bundleWorkflowCode({
    workflowsPath: join(root, 'workflows'),
    logger: new DefaultLogger('WARN'),
    ...(options.interceptorModules ? { workflowInterceptorModules: [...options.interceptorModules] } : {}),
    webpackConfigHook: (config) => ({
      ...config,
      module: {
        ...config.module,
        rules: [
          ...(config.module?.rules ?? []),
          // 'pre': the edit applies to the TypeScript source, before the SDK's own loader compiles it
          ...[...byFile].map(([file, edits]) => ({ test: (path: string) => path === file, enforce: 'pre' as const, use: [{ loader: require.resolve('./replace-source-loader.js'), options: { edits } }] })),
        ],
      },
    }),
  });
}
