import { Command } from 'commander';
import { registerPlanCommand } from './commands/plan';
import { registerCatalogCommand } from './commands/catalog';
import { registerConvertCommand } from './commands/convert';
import { registerValidateCommand } from './commands/validate';
import { registerClusterCommands } from './commands/cluster';
import { registerCodecServerCommand } from './commands/codec-server';

/**
 * Builds the shipped `autonode` command tree. Each command lives in starter/commands/;
 * `dev` (the local stack) is not shipped: dev/cli.ts adds it in a checkout.
 */
export function buildCli(): Command {
  const program = new Command('autonode')
    .description('Node autoprovisioning for hosted clusters: Karpenter API, EC2 capacity, Temporal workflows')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  registerPlanCommand(program);
  registerCatalogCommand(program);
  registerConvertCommand(program);
  registerValidateCommand(program);
  registerClusterCommands(program);
  registerCodecServerCommand(program);
  return program;
}

/** Runs `program` on `argv`; a failure prints one line on stderr and sets the exit code. */
export function runCli(program: Command, argv: string[]): void {
  program
    .parseAsync(argv)
    .catch((err: unknown) => {
      process.stderr.write(`autonode: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}

export function main(argv: string[]): void {
  runCli(buildCli(), argv);
}
