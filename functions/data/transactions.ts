import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documents } from '#runtime/clients';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * The outcome of an all-or-nothing write:
 * - `written`: every item was written.
 * - `condition-failed`: nothing was written; `failed` lists the items whose condition did not
 *   hold, each with the item as it is (asked for with ReturnValuesOnConditionCheckFailure), so
 *   the caller can tell "this record already exists" from "a fresh id collided" without a read.
 */
export type WriteResult =
  | { readonly outcome: 'written' }
  | { readonly outcome: 'condition-failed'; readonly failed: ReadonlyMap<number, Record<string, any> | undefined> };

interface CancellationReason {
  Code?: string;
  Item?: Record<string, any>;
}

const CONFLICT_ATTEMPTS = 6;

/**
 * Writes all items or none. A transaction that collided with a concurrent one on the same item
 * (TransactionConflict) is tried again after a jittered pause, up to `conflictAttempts` times;
 * throttling inside a transaction is surfaced as a retryable fault (503).
 */
export async function writeTogether(items: TransactItem[], options: { conflictAttempts?: number } = {}): Promise<WriteResult> {
  const attempts = options.conflictAttempts ?? CONFLICT_ATTEMPTS;
  for (let attempt = 0; ; attempt++) {
    try {
      await documents.send(new TransactWriteCommand({ TransactItems: items }));
      return { outcome: 'written' };
    } catch (error) {
      if ((error as Error).name !== 'TransactionCanceledException') throw error;
      const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
      const failed = new Map<number, Record<string, any> | undefined>();
      reasons.forEach((reason, index) => {
        if (reason.Code === 'ConditionalCheckFailed') failed.set(index, reason.Item && unmarshallItem(reason.Item));
      });
      if (failed.size > 0) return { outcome: 'condition-failed', failed };
      const codes = reasons.map((reason) => reason.Code ?? 'None');
      const throttled = codes.some((code) => /Throttl|ProvisionedThroughput|RequestLimit/.test(code));
      if (!throttled && codes.includes('TransactionConflict') && attempt + 1 < attempts) {
        await pause(attempt);
        continue;
      }
      throw Object.assign(new Error(`Transaction cancelled: ${codes.join(', ')}`), {
        name: throttled ? 'ThrottlingException' : 'TransactionConflictException',
        cause: error,
      });
    }
  }
}

/** Cancellation reasons carry their items in DynamoDB's typed form even through the document client. */
const unmarshallItem = (item: Record<string, any>) => unmarshall(item as Record<string, AttributeValue>);

export function pause(attempt: number): Promise<void> {
  const ceiling = Math.min(200, 10 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
