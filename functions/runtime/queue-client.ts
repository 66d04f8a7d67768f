import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { queues, type QueueId } from '#functions/queues';

/**
 * Sending to the SQS queues of functions/queues.ts, at the URLs in the environment variables it
 * names. The local stack runs an SQS endpoint of its own on 127.0.0.1 (local/sqs-endpoint.ts)
 * and names it in SQS_ENDPOINT, as DYNAMODB_ENDPOINT names DynamoDB Local: nothing here knows
 * which it talks to.
 */
export interface QueuedMessage {
  readonly body: string;
  /** Standard queue only. */
  readonly delaySeconds?: number;
  /** FIFO queue only. */
  readonly groupId?: string;
  /** FIFO queue only: SQS drops a second message with this id sent within 5 minutes. */
  readonly deduplicationId?: string;
}

let sqs: { readonly endpoint: string | undefined; readonly client: SQSClient } | undefined;

/** One client per execution environment; SQS_ENDPOINT (the local stack's) points it elsewhere than AWS. */
function sqsClient(): SQSClient {
  const endpoint = process.env.SQS_ENDPOINT || undefined;
  if (!sqs || sqs.endpoint !== endpoint) {
    const local = endpoint
      ? {
          endpoint,
          region: process.env.AWS_REGION ?? 'local',
          // The local endpoint takes any credentials; real AWS never takes this branch.
          ...(process.env.AWS_ACCESS_KEY_ID ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        }
      : {};
    sqs = { endpoint, client: new SQSClient(local) };
  }
  return sqs.client;
}

/** Whether this function was given the queue's URL (the CDK stack gives it to those that name the queue). */
export const queueConfigured = (queueId: QueueId): boolean => Boolean(process.env[queues[queueId].envVar]);

/** Sends the messages, ten to a SendMessageBatch; throws when SQS refuses any of them. */
export async function sendToQueue(queueId: QueueId, queued: readonly QueuedMessage[]): Promise<void> {
  if (queued.length === 0) return;
  const { envVar } = queues[queueId];
  const url = process.env[envVar];
  if (!url) throw new Error(`No queue ${queueId}: ${envVar} is not set`);
  const client = sqsClient();
  for (let start = 0; start < queued.length; start += 10) {
    const batch = queued.slice(start, start + 10);
    const entries: SendMessageBatchRequestEntry[] = batch.map((message, index) => ({
      Id: String(index),
      MessageBody: message.body,
      DelaySeconds: message.delaySeconds,
      MessageGroupId: message.groupId,
      MessageDeduplicationId: message.deduplicationId,
    }));
    const result = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    if (result.Failed && result.Failed.length > 0) {
      throw new Error(`SQS refused ${result.Failed.length} messages on ${queueId}: ${result.Failed.map((f) => f.Code).join(', ')}`);
    }
  }
}
