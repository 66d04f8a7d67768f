import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';
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

export async function findVoidedTransaction(key: string): Promise<VoidedTransaction | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { void_key: key }, ConsistentRead: true }));
  return Item as VoidedTransaction | undefined;
}

export function putVoidedTransaction(record: VoidedTransaction): TransactItem {
  return { Put: { TableName: TABLE, Item: record, ConditionExpression: 'attribute_not_exists(void_key)' } };
}
