import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { queues } from './queues.ts';

/**
 * The delivery queue: one message per attempt of one delivery, invisible until the attempt is
 * due. SQS delays a message by at most 900 s (DelaySeconds), so a longer wait is a chain of
 * hops: the sender receives a message that is not yet due and sends it again with the rest of
 * the wait (at most 900 s more). No timer lives in any function.
 *
 * In AWS the queue is SQS (WEBHOOK_DELIVERIES_QUEUE_URL). The local stack registers an
 * in-process stand-in with the same semantics the handlers rely on (at least once, delays;
 * local/webhooks.ts) under a global symbol, which bundles share with the sources.
 */
export interface DeliveryMessage {
  readonly account_id: number;
  readonly endpoint_id: number;
  readonly event_id: number;
  /** The delivery's generation when this message was sent (the retry route raises it). */
  readonly generation: number;
  /** Sends before this one. */
  readonly attempts: number;
  /** Epoch milliseconds when the attempt is due. */
  readonly due_at: number;
  /** The endpoint's origin: the local queue limits sends per origin with it. */
  readonly origin: string;
}

/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

export interface QueuedMessage {
  readonly body: string;
  readonly delaySeconds: number;
  readonly origin: string;
}

export interface LocalQueue {
  send(messages: readonly QueuedMessage[]): Promise<void>;
}

export const LOCAL_QUEUES = Symbol.for('tillgate.localQueues');

const queueUrl = process.env[queues.webhookDeliveries.envVar];
const sqs = queueUrl ? new SQSClient({}) : undefined;

export function delaySecondsUntil(dueAt: number, now = Date.now()): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}

export async function enqueueDeliveries(messages: readonly DeliveryMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const queued = messages.map((message) => ({
    body: JSON.stringify(message),
    delaySeconds: delaySecondsUntil(message.due_at),
    origin: message.origin,
  }));
  if (!sqs) {
    const local = (globalThis as { [LOCAL_QUEUES]?: Record<string, LocalQueue> })[LOCAL_QUEUES]?.webhookDeliveries;
    if (!local) throw new Error(`No delivery queue: ${queues.webhookDeliveries.envVar} is not set and no local queue is registered`);
    return local.send(queued);
  }
  for (let start = 0; start < queued.length; start += 10) {
    const batch = queued.slice(start, start + 10);
    const result = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((message, index) => ({ Id: String(index), MessageBody: message.body, DelaySeconds: message.delaySeconds })),
      }),
    );
    if (result.Failed && result.Failed.length > 0) {
      throw new Error(`SQS refused ${result.Failed.length} delivery messages: ${result.Failed.map((f) => f.Code).join(', ')}`);
    }
  }
}
