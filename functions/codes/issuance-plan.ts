/** DynamoDB's limit of items in one TransactWriteItems. */
const TRANSACTION_ITEMS = 100;

/**
 * How an issuance of `count` codes splits into transactions. The last transaction completes the
 * issuance: its codes with the generator's status check, the event, the account's code quota,
 * the stored response (with an Idempotency-Key) and, when codes came before it, the issuance record. When the codes do not fit
 * there, the others are written pending first in equal batches of at most TRANSACTION_ITEMS, and
 * finalised afterwards (the same batches, as updates): the last transaction takes nearly as many
 * codes as it holds (the fewer pending codes, the fewer to finalise), and the pending batches are
 * all of one size (a call's requests then have one shape each, whatever order they reach
 * DynamoDB in).
 */
export interface IssuancePlan {
  /** Pending batches written before the last transaction (0: one transaction does it all). */
  readonly batches: number;
  /** Codes in each pending batch. */
  readonly batchSize: number;
  /** Codes in the last transaction. */
  readonly lastSize: number;
}

export function issuancePlan(count: number, withIdempotencyKey: boolean): IssuancePlan {
  // The generator's status check, the event, the account's code quota (data/code-quota.ts), the stored response.
  const finalOverhead = 3 + (withIdempotencyKey ? 1 : 0);
  if (count <= TRANSACTION_ITEMS - finalOverhead) return { batches: 0, batchSize: 0, lastSize: count };
  // With pending batches the last transaction also holds the issuance record.
  const rest = count - (TRANSACTION_ITEMS - finalOverhead - 1);
  const batches = Math.ceil(rest / TRANSACTION_ITEMS);
  const batchSize = Math.ceil(rest / batches);
  return { batches, batchSize, lastSize: count - batches * batchSize };
}
