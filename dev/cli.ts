// The `autonode` CLI of a checkout: the shipped commands (starter/cli.ts) plus `dev`, the
// local stack with autonode and simulated kubelets, and `interrupt`, EventBridge's part on
// it. dev/ is never compiled into dist/ (tsconfig.build.json includes only the shipped
// folders, and lint keeps them from importing dev/), so bin/autonode.js runs this file
// from source through tsx.
import { buildCli, runCli } from '../starter/cli';
import { registerDevCommand } from './command';
import { registerInterruptCommand } from './interrupt-command';

export function main(argv: string[]): void {
  const program = buildCli();
  registerDevCommand(program);
  registerInterruptCommand(program);
  runCli(program, argv);
}
