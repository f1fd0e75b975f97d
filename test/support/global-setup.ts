import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type LocalStack } from '../../dev/stack/launcher';

export const CONTINUE_AS_NEW_SUGGESTED_AT = 150;

declare global {
  var __autonodeStack: LocalStack | undefined;
}

/**
 * Starts the whole local stack once for the integration run and bundles the workflows
 * once. Tests find both through AUTONODE_STACK_FILE / AUTONODE_WORKFLOW_BUNDLE. A
 * component that cannot be had fails the run here, saying which and why: integration
 * tests never skip.
 */
export default async function globalSetup(): Promise<void> {
  const t0 = Date.now();
  // The pinned AWS SDK warns once per process that *future* releases need Node 22; that is
  // tracked in the notes, and repeating it in every test file only buries real output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const say = (line: string) => process.stderr.write(`[stack] ${line}\n`);
  // A low continue-as-new threshold: long-lived workflows reach it within seconds, so the
  // tests exercise the hand-over between runs that production sees after days.
  const stack = await startStack({ log: say, temporalDynamicConfig: {
    'limit.historyCount.suggestContinueAsNew': CONTINUE_AS_NEW_SUGGESTED_AT,
    // worker-versions.test.ts: a drained build reads DRAINED seconds after its last pinned
    // workflow moved, not minutes (the defaults wait 3 min for visibility, then re-check)
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '5s',
    'matching.wv.VersionDrainageStatusRefreshInterval': '2s',
  } });
  globalThis.__autonodeStack = stack;
  // Ctrl-C during a run: jest may never reach the teardown, so stop here too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stack.stop().finally(() => process.exit(130)));
  }
  process.once('exit', () => stack.killNow());

  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./smoke-workflows'),
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: say, error: say },
  });
  const bundlePath = join(stack.info.dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  process.env.AUTONODE_STACK_FILE = stack.infoFile;
  process.env.AUTONODE_WORKFLOW_BUNDLE = bundlePath;
  say(`stack and workflow bundle ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (${stack.info.dir})`);
}
