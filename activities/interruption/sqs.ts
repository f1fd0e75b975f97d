/**
 * The cluster's interruption queue over `@aws-sdk/client-sqs`, as Karpenter's SQS provider
 * uses it (providers/sqs): the queue is named (Karpenter's `--interruption-queue`), its URL
 * looked up once; a receive is a long poll of at most 10 messages, each hidden from other
 * receivers for 20 s; a message is deleted after it was handled. Credentials are the
 * cluster's (its role), never a payload's; tests refuse any endpoint but loopback, as for EC2.
 */
import { DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { type CloudClusterRef } from '../cloud/domain';
import { assertAwsEndpointAllowed, type ClusterCredentialsProvider, type EndpointPolicy } from '../cloud/ec2-client';
import { callAws, type RetryDeps } from '../cloud/retry';

/** Karpenter's ReceiveMessage settings (providers/sqs/sqs.go). */
export const RECEIVE = { maxMessages: 10, visibilityTimeoutSeconds: 20, waitTimeSeconds: 20 } as const;

/** Only `send`: tests pass a real client against moto, or a fake. */
export type SqsApi = Pick<SQSClient, 'send'>;

export interface ReceivedMessage {
  messageId: string;
  /** what DeleteMessage needs; valid for this receive only (not a credential) */
  receipt: string;
  body?: string;
  /** when SQS took the message in (epoch ms) */
  sentAt?: number;
}

export interface InterruptionQueue {
  readonly name: string;
  /** One long poll: up to 10 messages, or none after 20 s. */
  receive(options?: { abortSignal?: AbortSignal }): Promise<ReceivedMessage[]>;
  /** Deletes handled messages; says which could not be (they come back after the visibility timeout). */
  delete(messages: readonly { messageId: string; receipt: string }[]): Promise<{ deleted: string[]; failed: { messageId: string; why: string }[] }>;
}

const QueueUrlSchema = z.object({ QueueUrl: z.string().min(1) });
const ReceiveSchema = z.object({
  Messages: z
    .array(
      z.object({
        MessageId: z.string().min(1),
        ReceiptHandle: z.string().min(1),
        Body: z.string().optional(),
        Attributes: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional(),
});
const DeleteBatchSchema = z.object({
  Successful: z.array(z.object({ Id: z.string() })).optional(),
  Failed: z.array(z.object({ Id: z.string(), Code: z.string().optional(), Message: z.string().optional() })).optional(),
});

/**
 * The queue `name` through `sqs`, every call through the cloud retry layer (throttling and
 * 5xx retried, a missing queue a NotFoundError, a denial an AuthorizationError naming the
 * permission). The URL is looked up on first use and kept.
 */
export function interruptionQueue(sqs: SqsApi, name: string, retry: RetryDeps): InterruptionQueue {
  let url: Promise<string> | undefined;
  const queueUrl = () => {
    url ??= callAws({ service: 'sqs', operation: 'GetQueueUrl' }, () => sqs.send(new GetQueueUrlCommand({ QueueName: name })), retry).then((r) => QueueUrlSchema.parse(r).QueueUrl);
    url.catch(() => (url = undefined));
    return url;
  };
  return {
    name,
    async receive(options = {}) {
      const QueueUrl = await queueUrl();
      const out = await callAws(
        { service: 'sqs', operation: 'ReceiveMessage' },
        () =>
          sqs.send(
            new ReceiveMessageCommand({
              QueueUrl,
              MaxNumberOfMessages: RECEIVE.maxMessages,
              VisibilityTimeout: RECEIVE.visibilityTimeoutSeconds,
              WaitTimeSeconds: RECEIVE.waitTimeSeconds,
              MessageSystemAttributeNames: ['SentTimestamp'],
            }),
            options.abortSignal ? { abortSignal: options.abortSignal } : {},
          ),
        // not retried here: an empty long poll is what the next one is for, and an aborted one
        // (the workflow went away) must end now; errors still leave typed (NotFound, Authorization)
        { ...retry, policy: { ...retry.policy, maxAttempts: 1 } },
      );
      return (ReceiveSchema.parse(out).Messages ?? []).map((m) => {
        const sent = Number(m.Attributes?.SentTimestamp);
        return { messageId: m.MessageId, receipt: m.ReceiptHandle, ...(m.Body !== undefined ? { body: m.Body } : {}), ...(Number.isFinite(sent) && sent > 0 ? { sentAt: sent } : {}) };
      });
    },
    async delete(messages) {
      const deleted: string[] = [];
      const failed: { messageId: string; why: string }[] = [];
      if (messages.length === 0) return { deleted, failed };
      const QueueUrl = await queueUrl();
      // DeleteMessageBatch takes at most 10 entries, and entry ids must be unique within a batch
      for (let i = 0; i < messages.length; i += RECEIVE.maxMessages) {
        const chunk = messages.slice(i, i + RECEIVE.maxMessages);
        const out = DeleteBatchSchema.parse(
          await callAws(
            { service: 'sqs', operation: 'DeleteMessageBatch' },
            () => sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: chunk.map((m, n) => ({ Id: String(n), ReceiptHandle: m.receipt })) })),
            retry,
          ),
        );
        for (const ok of out.Successful ?? []) {
          const m = chunk[Number(ok.Id)];
          if (m) deleted.push(m.messageId);
        }
        for (const bad of out.Failed ?? []) {
          const m = chunk[Number(bad.Id)];
          if (m) failed.push({ messageId: m.messageId, why: `${bad.Code ?? 'Failed'}: ${bad.Message ?? ''}`.trim() });
        }
      }
      return { deleted, failed };
    },
  };
}

export interface SqsClientFactoryOptions {
  /** moto (which serves SQS on its EC2 port); undefined means the real regional endpoint */
  endpoint?: string;
  credentialsFor: ClusterCredentialsProvider;
  endpointPolicy: EndpointPolicy;
}

/** One SQS client per cluster, built like the EC2 ones (cloud/ec2-client.ts). */
export function createSqsClientFactory(options: SqsClientFactoryOptions): (cluster: CloudClusterRef) => SQSClient {
  assertAwsEndpointAllowed('SQS', options.endpoint, options.endpointPolicy);
  return (cluster) =>
    new SQSClient({
      region: cluster.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      credentials: options.credentialsFor(cluster),
      // Retries live in cloud/retry.ts (callAws), observable like EC2's.
      maxAttempts: 1,
      // a receive waits up to 20 s on the server: the request may take that long and more
      requestHandler: { requestTimeout: (RECEIVE.waitTimeSeconds + 10) * 1_000, connectionTimeout: 5_000 },
    });
}
