import { type Command } from 'commander';
import { stringify } from 'yaml';
import { formatIssue, formatWarning, moveKubeletIntoNodeClasses, toManifest, type KarpenterObject } from '../../core/api';
import { assertNever } from '../../core/assert';
import { collectFile, describeDocument, readDocuments, readFileOrStdin, type ReadText } from './manifests';

export interface ConvertIo {
  readText: ReadText;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * Converts every Karpenter document in `files` to v1 YAML on stdout; other documents
 * pass through unchanged, so a mixed manifest converts as a whole. Warnings and errors go
 * to stderr. Returns the exit code: 1 when any document could not be converted.
 */
export function runConvert(files: string[], io: ConvertIo): number {
  let exitCode = 0;
  const out: unknown[] = [];
  const converted: KarpenterObject[] = [];
  for (const report of readDocuments(files, io.readText)) {
    const where = describeDocument(report);
    const { result } = report;
    switch (result.status) {
      case 'ok':
        for (const warning of result.warnings) io.stderr(`warning: ${where}: ${formatWarning(warning)}\n`);
        converted.push(...result.objects);
        out.push(...result.objects);
        break;
      case 'other':
        out.push(report.object);
        break;
      case 'invalid':
        exitCode = 1;
        for (const issue of result.issues) io.stderr(`error: ${where}: ${formatIssue(issue)}\n`);
        break;
      case 'unsupported':
        exitCode = 1;
        io.stderr(`error: ${where}: ${result.reason}\n`);
        break;
      case 'unparsable':
        exitCode = 1;
        io.stderr(`error: ${where}: ${result.error}\n`);
        break;
      default:
        assertNever(result);
    }
  }
  const moved = moveKubeletIntoNodeClasses(converted);
  for (const warning of moved.warnings) io.stderr(`warning: ${formatWarning(warning)}\n`);
  const replacement = new Map<unknown, KarpenterObject>(converted.map((object, i) => [object, moved.objects[i] ?? object]));
  const documents = out.map((doc) => {
    const karpenter = replacement.get(doc);
    return karpenter ? toManifest(karpenter) : doc;
  });
  io.stdout(documents.map((doc) => stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n'));
  return exitCode;
}

export function registerConvertCommand(program: Command): void {
  program
    .command('convert')
    .description('convert Karpenter manifests (v1alpha5 Provisioner, v1beta1, v1) to v1 YAML; warnings on stderr')
    .requiredOption('-f, --filename <file>', 'manifest file, "-" for stdin (repeatable)', collectFile, [])
    .action((opts: { filename: string[] }) => {
      process.exitCode = runConvert(opts.filename, {
        readText: readFileOrStdin,
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
      });
    });
}
