import { tableName } from '../config.ts';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('voidedTransactions');

export interface VoidedTransaction {
  /** JSON of [account_id, site_id, pos_transaction_id]: unambiguous whatever the ids contain. */
  void_key: string;
  account_id: number;
  site_id: string;
  pos_transaction_id: string;
  event_id: number;
  voided_at: string;
  /** The transaction fields as the first request sent them. */
  transaction: Record<string, string>;
  /** The body of the first response as a JSON string (DynamoDB maps do not keep key order). */
  response: string;
}

export const voidKey = (accountId: number, siteId: string, posTransactionId: string) =>
  JSON.stringify([accountId, siteId, posTransactionId]);

/** Fails its condition when the void exists, and then returns it: a repeat costs no read. */
export function putVoidedTransaction(record: VoidedTransaction): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: record,
      ConditionExpression: 'attribute_not_exists(void_key)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
