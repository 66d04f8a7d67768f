import type { SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { workers } from '#functions/workers';
import { logger } from '#runtime/observability';
import { readFailedBatch, type FailedBatchMessage } from '#runtime/stream-batches';
import { worker } from '#runtime/worker-chain';
import { fanOutRecords } from './fan-out-webhook-events.ts';

/**
 * The fan-out's on-failure queue (queues.ts `fanOutFailures`) → the batch read back from the
 * events stream and fanned out again. Lambda's on-failure destination of a stream names the
 * shard and the range of sequence numbers, not the records, so the records are read back from
 * the stream (stream-batches.ts; DynamoDB keeps them 24 h), not from the events table: an event
 * acknowledged (deleted) since is still delivered, as PRODUCT.md says acknowledging does not
 * affect deliveries. Only the records the fan-out's trigger takes (INSERTs) are fanned out.
 * Idempotent, as the fan-out is: a delivery is put only if absent and its message sent either
 * way, and a second copy of a message sends nothing (the sender's claim).
 * A batch that fails again (the cause persists) is reported as a batch item failure: SQS hands
 * it over again after the queue's visibility, up to maxReceiveCount, then its dead-letter queue
 * takes it (alarm); one that can no longer be read back (BatchNotReadableError: older than 24 h)
 * goes the same way.
 */
const fanOutTrigger = workers.find((w) => w.name === 'fanOutWebhookEvents')!.trigger;
const eventNames: readonly string[] = fanOutTrigger.kind === 'stream' ? fanOutTrigger.eventNames : [];

export const handler = worker('queue', 'replayFailedFanOuts').handler((event) =>
  processPartialResponse(event, replayBatch, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false }),
);

async function replayBatch(record: SQSRecord): Promise<void> {
  const message = JSON.parse(record.body) as FailedBatchMessage;
  const batch = message.DDBStreamBatchInfo;
  const where = { shard_id: batch.shardId, start_sequence_number: batch.startSequenceNumber, end_sequence_number: batch.endSequenceNumber };
  try {
    const records = (await readFailedBatch(message)).filter((r) => r.eventName !== undefined && eventNames.includes(r.eventName));
    const { failedAt } = await fanOutRecords(records, 'the failure queue hands the batch over again');
    if (failedAt) throw new Error(`fan-out failed at ${failedAt.dynamodb?.SequenceNumber}`);
    logger.info('webhook fan-out batch replayed', { ...where, records: records.length, condition: message.requestContext?.condition });
  } catch (error) {
    logger.error('webhook fan-out batch not replayed; the failure queue hands it over again', {
      ...where,
      receive_count: Number(record.attributes?.ApproximateReceiveCount ?? 1),
      error_name: (error as Error).name,
      error_message: (error as Error).message,
    });
    throw error;
  }
}
