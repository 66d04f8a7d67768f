import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { logger } from '#runtime/observability';

/**
 * The rollup of a shard table's stream (promotionShards, codeShards) onto the items whose uses
 * the shards hold (a code generator, a multi-use code): what the two workers share
 * (roll-up-promotion-uses.ts, roll-up-code-uses.ts).
 *
 * A batch becomes one write per counted item, carrying the latest `used` of each of its shards
 * in the batch (a batch is in stream order, and DynamoDB streams keep one item's records in the
 * order it changed: a shard's last record in the batch is its newest). The values are absolute
 * (shard-uses.ts), so the rollup is idempotent: Lambda's retries, and the halves a bisected batch
 * is tried in, write values again, never add them again. A half holding an older record of a
 * shard than one written before may set the older value back for a moment; the newer record is
 * after it in the stream, so it is handed over again and written after it.
 *
 * A failed write is reported at the first record, in stream order, of any item whose write
 * failed (reportBatchItemFailures): the stream hands that record and every one after it over
 * again, so each failed item's records come back, and what the others wrote is written again
 * with the same or newer values. Every write of the batch is tried, a failed one or not: an
 * item that keeps failing does not hold back the others' counts.
 */

/** What the rollup reads of a shard's new image: pool items (no `shard_number`) hold no shard's uses. */
export interface ShardImage {
  readonly account_id: number;
  readonly code_generator_id: number;
  readonly shard_number?: number;
  /** Uses held through the shard; absent: 0. */
  readonly used?: number;
}

/** The latest uses of some shards of one counted item, and where its records start in the batch. */
interface RollupWrite<Target> {
  readonly target: Target;
  /** What a log line may say of the item (never a code: a code is worth money). */
  readonly about: { readonly account_id: number; readonly code_generator_id: number };
  /** shard number → its latest `used` in the batch. */
  readonly uses: Map<number, number>;
  /** Index, in the batch, of the item's first record. */
  readonly first: number;
}

/**
 * The writes a batch comes to: for each counted item (`targetOf` names it by a key and gives
 * what the write needs), its shards' latest uses. Only INSERTs and MODIFYs of shard items count
 * (the event source passes only those; a REMOVE, or a pool item, is skipped).
 */
export function rollupWrites<Image extends ShardImage, Target>(
  records: readonly DynamoDBRecord[],
  targetOf: (image: Image) => { readonly key: string; readonly target: Target },
): RollupWrite<Target>[] {
  const writes = new Map<string, RollupWrite<Target>>();
  for (const [index, record] of records.entries()) {
    if ((record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') || !record.dynamodb?.NewImage) continue;
    const image = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as Image;
    if (typeof image.shard_number !== 'number') continue;
    const { key, target } = targetOf(image);
    let write = writes.get(key);
    if (!write) {
      write = { target, about: { account_id: image.account_id, code_generator_id: image.code_generator_id }, uses: new Map(), first: index };
      writes.set(key, write);
    }
    write.uses.set(image.shard_number, image.used ?? 0);
  }
  return [...writes.values()];
}

/**
 * Writes a batch's rollup (each item's write side by side) and answers Lambda: no failure, or the
 * first record of the first item, in stream order, whose write failed.
 */
export async function rollUp<Image extends ShardImage, Target>(
  records: readonly DynamoDBRecord[],
  targetOf: (image: Image) => { readonly key: string; readonly target: Target },
  write: (target: Target, uses: ReadonlyMap<number, number>) => Promise<unknown>,
): Promise<DynamoDBBatchResponse> {
  const writes = rollupWrites(records, targetOf);
  const outcomes = await Promise.allSettled(writes.map(({ target, uses }) => write(target, uses)));
  let failedAt: number | undefined;
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const error = outcome.reason as Error;
    logger.error('shard uses not rolled up; the stream retries from the first record of their item', {
      ...writes[index]!.about,
      sequence_number: records[writes[index]!.first]!.dynamodb?.SequenceNumber,
      error_name: error.name,
      error_message: error.message,
    });
    failedAt = Math.min(failedAt ?? Infinity, writes[index]!.first);
  }
  if (failedAt === undefined) return { batchItemFailures: [] };
  return { batchItemFailures: [{ itemIdentifier: records[failedAt]!.dynamodb?.SequenceNumber ?? '' }] };
}
