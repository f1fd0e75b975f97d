import { Command } from 'commander';
import { registerDevCommand } from './commands/dev';
import { registerPlanCommand } from './commands/plan';
import { registerCatalogCommand } from './commands/catalog';
import { registerConvertCommand } from './commands/convert';
import { registerValidateCommand } from './commands/validate';

/** Builds the `autonode` command tree. Each command lives in starter/commands/. */
export function buildCli(): Command {
  const program = new Command('autonode')
    .description('Node autoprovisioning for hosted clusters: Karpenter API, EC2 capacity, Temporal workflows')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  registerDevCommand(program);
  registerPlanCommand(program);
  registerCatalogCommand(program);
  registerConvertCommand(program);
  registerValidateCommand(program);
  return program;
}

export function main(argv: string[]): void {
  buildCli()
    .parseAsync(argv)
    .catch((err: unknown) => {
      process.stderr.write(`autonode: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}
