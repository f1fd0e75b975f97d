import { readFileSync } from 'node:fs';
import { StackInfoSchema, type StackInfo } from '../../dev/stack/types';

/**
 * The running local stack, as the integration global setup wrote it. Integration tests
 * never skip: without a stack this throws and the test fails, saying why.
 */
export function loadStackInfo(): StackInfo {
  const file = process.env.AUTONODE_STACK_FILE;
  if (!file) {
    throw new Error(
      'AUTONODE_STACK_FILE is not set: integration tests run under `npm run test:integration`, whose global setup starts the local stack',
    );
  }
  return StackInfoSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}
