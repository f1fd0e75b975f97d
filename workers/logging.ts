import { type Logger as TemporalLogger, type LogLevel, type LogMetadata } from '@temporalio/common';
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { assertNever } from '../core/assert';
import { workflowIdentity } from '../core/lifecycle';

export type WorkerLogLevel = Exclude<LevelWithSilent, 'fatal' | 'silent'>;

/**
 * Keys whose values are secrets wherever they appear (top level or one object down): a
 * credential passed to a log line by mistake leaves as "[redacted]". Workflow payloads carry
 * references, never credentials (ARCHITECTURE.md); this is the second line.
 */
const SECRET_KEYS = ['secretAccessKey', 'sessionToken', 'token', 'password', 'authorization', 'kubeconfig', 'userData'];

/**
 * The worker's JSON logger: one object per line on stdout (or `destination`), ISO time,
 * the level as a word, secrets redacted.
 */
export function createWorkerLogger(options: { level: WorkerLogLevel; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'autonode-worker' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`]), censor: '[redacted]' },
    },
    options.destination,
  );
}

/**
 * The fields of a Temporal log line, normalised: the run id under one name (`runId`; the
 * SDK says `workflowRunId` for activities), `cluster`, `nodeclaim` and `hostedCluster` read
 * from autonode's workflow ids unless the line names them itself, the error under pino's
 * `err`. The activity's task token is dropped: it lets whoever holds it complete the
 * activity.
 */
export function logFields(meta: LogMetadata | undefined): Record<string, unknown> {
  const { taskToken: _taskToken, workflowRunId, error, ...rest } = meta ?? {};
  const fields: Record<string, unknown> = { ...rest };
  if (workflowRunId !== undefined && fields.runId === undefined) fields.runId = workflowRunId;
  if (error !== undefined) fields.err = error;
  if (typeof fields.workflowId === 'string') {
    const id = workflowIdentity(fields.workflowId);
    const derived: Record<string, unknown> = {};
    switch (id.kind) {
      case 'nodeclaim':
        derived.cluster = id.cluster;
        derived.nodeclaim = id.nodeClaim;
        break;
      case 'provisioner':
      case 'watch':
      case 'disruption':
      case 'interruption':
        derived.cluster = id.cluster;
        break;
      case 'enablement':
        derived.hostedCluster = `${id.hostedCluster.namespace}/${id.hostedCluster.name}`;
        break;
      case 'management-watch':
      case 'other':
        break;
      default:
        assertNever(id);
    }
    for (const [key, value] of Object.entries(derived)) if (fields[key] === undefined) fields[key] = value;
  }
  return fields;
}

/**
 * Temporal's Logger over pino, for `Runtime.install({ logger })`: workflow logs (through the
 * SDK's logger sink), activity `Context.log`, the worker's own lines and, when forwarded,
 * Core's, all as JSON with `logFields`.
 */
export function temporalLogger(logger: Logger): TemporalLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields = logFields(meta);
    switch (level) {
      case 'TRACE':
        return logger.trace(fields, message);
      case 'DEBUG':
        return logger.debug(fields, message);
      case 'INFO':
        return logger.info(fields, message);
      case 'WARN':
        return logger.warn(fields, message);
      case 'ERROR':
        return logger.error(fields, message);
      default:
        return assertNever(level);
    }
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}
