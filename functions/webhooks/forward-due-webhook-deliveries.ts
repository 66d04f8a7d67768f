import { logger } from '#runtime/observability';
import { worker } from '#runtime/worker-chain';
import { enqueueDue, enqueueWaiting, type DeliveryMessage } from './delivery-queue.ts';

/** A message due within this much is due: SQS delays in whole seconds. */
const DUE_WITHIN_MS = 1000;

/**
 * The retries queue → the deliveries queue. A message that has come due moves to its origin's
 * FIFO group; one that is not due yet (a wait longer than SQS's 900 s delay) goes back to the
 * retries queue with the rest of its wait. It contacts no receiver, so nothing slows it down. A
 * message that cannot be moved is reported (partial batch response) and SQS hands it over again;
 * a copy moved twice is harmless (the FIFO queue drops a copy within 5 minutes, and the sender's
 * claim makes any later copy send nothing).
 * Not Powertools' batch processor: the unit of work is a send of the batch's due messages (and
 * one of its waiting ones), one SendMessageBatch each, not a record; a failed send fails its
 * messages together.
 */
export const handler = worker('queue', 'forwardDueWebhookDeliveries').handler(async (event) => {
  const now = Date.now();
  const parsed = event.Records.map((record) => ({ id: record.messageId, message: JSON.parse(record.body) as DeliveryMessage }));
  const isDue = (p: Parsed) => p.message.due_at <= now + DUE_WITHIN_MS;
  const failed = await Promise.all([
    move(parsed.filter(isDue), enqueueDue),
    move(
      parsed.filter((p) => !isDue(p)),
      (messages) => enqueueWaiting(messages, now),
    ),
  ]);
  return { batchItemFailures: failed.flat().map((itemIdentifier) => ({ itemIdentifier })) };
});

interface Parsed {
  readonly id: string;
  readonly message: DeliveryMessage;
}

/** Sends the messages on; the ids of those that failed to move. */
async function move(items: readonly Parsed[], send: (messages: DeliveryMessage[]) => Promise<void>): Promise<string[]> {
  if (items.length === 0) return [];
  try {
    await send(items.map((p) => p.message));
    return [];
  } catch (error) {
    logger.error('webhook retry could not be moved; the queue hands it over again', {
      messages: items.length,
      error_name: (error as Error).name,
      error_message: (error as Error).message,
    });
    return items.map((p) => p.id);
  }
}
