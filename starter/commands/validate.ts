import { type Command } from 'commander';
import { formatIssue, formatWarning } from '../../core/api';
import { assertNever } from '../../core/assert';
import { collectFile, describeDocument, readDocuments, readFileOrStdin, type ReadText } from './manifests';

export interface ValidateIo {
  readText: ReadText;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * Checks manifests offline with the same schemas the CRDs are generated from. Errors name
 * the field path, the bad value and the fix. Returns 1 when any document is invalid,
 * unparsable or of a kind this provider does not support; non-Karpenter kinds are skipped.
 */
export function runValidate(files: string[], io: ValidateIo): number {
  let valid = 0;
  let failed = 0;
  let skipped = 0;
  for (const report of readDocuments(files, io.readText)) {
    const where = describeDocument(report);
    const { result } = report;
    switch (result.status) {
      case 'ok':
        valid++;
        for (const warning of result.warnings) io.stderr(`warning: ${where}: ${formatWarning(warning)}\n`);
        break;
      case 'other':
        skipped++;
        break;
      case 'invalid':
        failed++;
        for (const issue of result.issues) io.stderr(`error: ${where}: ${formatIssue(issue)}\n`);
        break;
      case 'unsupported':
        failed++;
        io.stderr(`error: ${where}: ${result.reason}\n`);
        break;
      case 'unparsable':
        failed++;
        io.stderr(`error: ${where}: ${result.error}\n`);
        break;
      default:
        assertNever(result);
    }
  }
  io.stdout(`${valid} valid, ${failed} invalid, ${skipped} skipped (not Karpenter kinds)\n`);
  return failed > 0 ? 1 : 0;
}

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('check Karpenter manifests offline; exits non-zero naming each bad field, its value and the fix')
    .requiredOption('-f, --filename <file>', 'manifest file, "-" for stdin (repeatable)', collectFile, [])
    .action((opts: { filename: string[] }) => {
      process.exitCode = runValidate(opts.filename, {
        readText: readFileOrStdin,
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
      });
    });
}
