import { DefaultFailureConverter } from '@temporalio/common';

/**
 * With payload encryption on, failure messages and stack traces (which name NodeClaims,
 * instances, Kubernetes objects) move into the failure's encoded attributes, a payload the
 * codec encrypts; the history shows "Encoded failure", and the UI decodes it through the
 * codec server. Loaded by path (DataConverter.failureConverterPath): by the workers' main
 * thread for activity failures, and bundled into the workflow code for workflow failures.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
