import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * - `written`: every item was written.
 * - `condition-failed`: a condition did not hold (e.g. the record already exists); nothing written.
 * - `conflict`: a concurrent transaction touched the same item; nothing written, try again.
 */
export type WriteOutcome = 'written' | 'condition-failed' | 'conflict';

interface CancellationReason {
  Code?: string;
}

/** Writes all items or none: a record and its event never exist one without the other. */
export async function writeTogether(items: TransactItem[]): Promise<WriteOutcome> {
  try {
    await documents.send(new TransactWriteCommand({ TransactItems: items }));
    return 'written';
  } catch (error) {
    if ((error as Error).name !== 'TransactionCanceledException') throw error;
    const codes = ((error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [])
      .map((reason) => reason.Code ?? 'None');
    if (codes.includes('ConditionalCheckFailed')) return 'condition-failed';
    if (codes.includes('TransactionConflict')) return 'conflict';
    // Throttling or capacity inside the transaction: surface as a retryable fault.
    const throttled = codes.some((code) => /Throttl|ProvisionedThroughput|RequestLimit/.test(code));
    throw Object.assign(new Error(`Transaction cancelled: ${codes.join(', ')}`), {
      name: throttled ? 'ThrottlingException' : 'TransactionConflictException',
      cause: error,
    });
  }
}

const MAX_ATTEMPTS = 6;

/**
 * The idiom behind every "first request wins, repeats get the first answer" write: read the
 * record; if it is absent, try to create it with a conditional transaction; if a concurrent
 * request won the race (condition failed) or collided (conflict), read again.
 * Throws a retryable fault when contention outlasts the attempts.
 */
export async function readOrCreate<T>(
  read: () => Promise<T | undefined>,
  create: () => Promise<{ outcome: WriteOutcome; value: T }>,
): Promise<{ value: T; created: boolean }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const existing = await read();
    if (existing !== undefined) return { value: existing, created: false };
    const { outcome, value } = await create();
    if (outcome === 'written') return { value, created: true };
    if (outcome === 'conflict') await pause(attempt);
  }
  throw Object.assign(new Error('Write contention outlasted the retries'), { name: 'TransactionConflictException' });
}

function pause(attempt: number): Promise<void> {
  const ceiling = Math.min(200, 10 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
