import { type Command } from 'commander';
import { startStack, type LocalStack } from '../stack/launcher';

/**
 * `autonode dev`: the whole local stack on 127.0.0.1 (what `npm start` runs). Prints where
 * everything is, runs until Ctrl-C, then stops exactly what it started.
 */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run the local stack (etcd, management + guest kube-apiservers, controller-manager, scheduler, kwok, moto, Temporal) until Ctrl-C')
    .option('--dir <dir>', 'directory for certificates, kubeconfigs and logs (default: a new temp dir)')
    .option('--exit-after-start', 'stop again as soon as everything is up (a smoke check)')
    .action(async (opts: { dir?: string; exitAfterStart?: boolean }) => {
      const t0 = Date.now();
      const say = (line: string) => process.stdout.write(`[autonode dev] ${line}\n`);
      say('starting the local stack…');
      const stack = await startStack({ dir: opts.dir, log: say });
      const stopOnce = stopOnSignals(stack, say);
      const { info } = stack;
      say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      process.stdout.write(
        [
          '',
          `  Temporal        ${info.temporal.address} (namespace ${info.temporal.namespace})`,
          `  Temporal UI     ${info.temporal.uiUrl ?? '(external server)'}`,
          `  guest cluster   KUBECONFIG=${info.guest.kubeconfigPath}`,
          `  management      KUBECONFIG=${info.management.kubeconfigPath}`,
          `  EC2 (moto)      AWS_ENDPOINT_URL_EC2=${info.ec2.endpoint} AWS_REGION=${info.ec2.region}`,
          `  logs            ${info.dir}/logs`,
          `  stack file      ${stack.infoFile}`,
          '',
          '  Ctrl-C stops everything.',
          '',
        ].join('\n'),
      );
      if (opts.exitAfterStart) await stopOnce();
    });
}

/** Stops the stack on SIGINT/SIGTERM, and kills what is left if the process exits anyway. */
export function stopOnSignals(stack: LocalStack, say: (line: string) => void): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      say('stopping…');
      await stack.stop();
      say('stopped');
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stop().then(() => process.exit(130));
    });
  }
  process.once('exit', () => stack.killNow());
  return stop;
}
