import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { queues } from '#functions/queues';
import { workers, type Worker } from '#functions/workers';
import { logger } from './observability.ts';
import { sendToQueue } from './queue-client.ts';
import { worker } from './worker-chain.ts';

/**
 * A queue worker whose unit of work is one message, a JSON object (the issuance jobs, the
 * exports, the issuance finalisation): `handle` does it and throws when it could not. What comes
 * next is then decided here, the same way for every such worker, and `failed` is told, to log it
 * in the worker's own words (and, for an export, to give up on the last receive). Records are
 * handled one after the other in the worker chain (worker-chain.ts); the failed ones are reported
 * in the partial batch response.
 *
 * A failed message first sends copies of itself, QUICK_RETRY_DELAYS_SECONDS apart. Without them
 * it would wait out its queue's visibility timeout (six times the worker's Lambda timeout: 2 to
 * 30 minutes here), and one throttled chunk stood a whole issuance job still for six minutes. A
 * copy carries `retry` one higher; a message its handler sends on (a record not written yet,
 * looked for again later) keeps its count. After the last copy's failure the message is reported:
 * it comes back after the visibility timeout, and goes to the dead-letter queue after the row's
 * maxReceiveCount receives.
 */
export function messageWorker<M extends object>(
  name: string,
  handle: (message: M & QuickRetry, record: SQSRecord) => Promise<void>,
  failed: (failure: MessageFailure<M>) => Promise<void> | void,
) {
  const chain = worker('queue', name); // fails at load for a name without its queue row
  const nextAttempt = quickRetries(workers.find((row) => row.name === name)!);
  return chain.handler(async (event): Promise<SQSBatchResponse> => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      let message: (M & QuickRetry) | undefined;
      try {
        const parsed: unknown = JSON.parse(record.body);
        // Only an object is a message (and can carry `retry`): anything else is reported as it is.
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('The message body is not a JSON object');
        message = parsed as M & QuickRetry;
        await handle(message, record);
      } catch (error) {
        const next = await nextAttempt(message, record);
        await failed({ message, error: error as Error, retry: message?.retry ?? 0, next });
        if (next.by === 'queue') batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  });
}

/** The count a message carries of the copies sent of it after failures (absent on the original). */
export interface QuickRetry {
  readonly retry?: number;
}

/**
 * What follows a failed message: a copy the worker sent of it, back after `delaySeconds`; or the
 * queue's own redelivery after its visibility timeout, and its dead-letter queue once
 * `receiveCount` reaches the row's maxReceiveCount (`lastReceive`).
 */
type NextAttempt =
  | { readonly by: 'copy'; readonly retry: number; readonly delaySeconds: number }
  | { readonly by: 'queue'; readonly receiveCount: number; readonly lastReceive: boolean };

export interface MessageFailure<M> {
  /** Undefined when the body was not a JSON object. */
  readonly message: (M & QuickRetry) | undefined;
  readonly error: Error;
  /** The failed message's own count (0 for the original). */
  readonly retry: number;
  readonly next: NextAttempt;
}

/** The delays of a failed message's copies: 30 s in all before the queue's redelivery takes over. */
export const QUICK_RETRY_DELAYS_SECONDS: readonly number[] = [2, 4, 8, 16];

function quickRetries(row: Worker) {
  if (row.trigger.kind !== 'queue') throw new Error(`${row.name} is not a queue worker`);
  const { queue, maxReceiveCount } = row.trigger;
  // A FIFO queue takes no per-message delay; the copy goes to the worker's own queue, which its row must grant.
  if (queues[queue].fifo) throw new Error(`${row.name}: a message worker needs a standard queue; ${queue} is FIFO`);
  if (!row.queues?.includes(queue)) throw new Error(`${row.name}: a message worker sends copies to ${queue}, which its row does not name in queues`);
  return async (message: QuickRetry | undefined, record: SQSRecord): Promise<NextAttempt> => {
    const retry = message?.retry ?? 0;
    const delaySeconds = QUICK_RETRY_DELAYS_SECONDS[retry];
    if (message && delaySeconds !== undefined) {
      try {
        await sendToQueue(queue, [{ body: JSON.stringify({ ...message, retry: retry + 1 }), delaySeconds }]);
        return { by: 'copy', retry: retry + 1, delaySeconds };
      } catch (error) {
        logger.warn('copy of a failed message not sent; the queue hands the message over again', {
          error_code: 'queue_copy_not_sent',
          queue,
          message_id: record.messageId,
          error: error as Error,
        });
      }
    }
    const receiveCount = Number(record.attributes.ApproximateReceiveCount);
    return { by: 'queue', receiveCount, lastReceive: receiveCount >= maxReceiveCount };
  };
}
