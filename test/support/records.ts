import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { scanAll } from '../../local/dynamodb.ts';
import { documents } from '../../functions/runtime/clients.ts';
import { tableName } from '../../functions/runtime/config.ts';
import type { EventRecord } from '../../functions/data/events.ts';
import type { CodeGenerator } from '../../functions/data/code-generators.ts';
import type { PosTransaction } from '../../functions/data/pos-transactions.ts';
import type { PromotionShard } from '../../functions/data/promotion-shards.ts';

/** What the tables hold for one account, read straight from DynamoDB to check what was written. */
async function byAccount<T>(table: 'events' | 'codeGenerators', accountId: number): Promise<T[]> {
  const { Items } = await documents.send(
    new QueryCommand({
      TableName: tableName(table),
      KeyConditionExpression: 'account_id = :a',
      ExpressionAttributeValues: { ':a': accountId },
    }),
  );
  return (Items ?? []) as T[];
}

export const eventsOf = (accountId: number) => byAccount<EventRecord>('events', accountId);
export const codeGeneratorsOf = (accountId: number) => byAccount<CodeGenerator>('codeGenerators', accountId);

/** The account's voided transactions (a Scan). */
export async function voidsOf(accountId: number): Promise<Required<PosTransaction>[]> {
  const items = await scanAll(documents, {
    TableName: tableName('posTransactions'),
    FilterExpression: 'account_id = :a AND attribute_exists(voided_at)',
    ExpressionAttributeValues: { ':a': accountId },
  });
  return items as Required<PosTransaction>[];
}

/** The account's POS transactions, voided or holding codes (a Scan). */
export async function posTransactionsOf(accountId: number): Promise<PosTransaction[]> {
  return (await scanAll(documents, {
    TableName: tableName('posTransactions'),
    FilterExpression: 'account_id = :a',
    ExpressionAttributeValues: { ':a': accountId },
  })) as PosTransaction[];
}

/**
 * Every item of the account in the codes table: issued codes, pending codes of unfinished
 * issuances and issuance records alike, to check that a call wrote nothing. A Scan: the table
 * is keyed by code; use it sparingly.
 */
export async function codeItemsOf(accountId: number): Promise<Record<string, any>[]> {
  return scanAll(documents, {
    TableName: tableName('codes'),
    FilterExpression: 'account_id = :a',
    ExpressionAttributeValues: { ':a': accountId },
  });
}

/** The shard items of one code generator (a Scan: the table is keyed by shard), in shard order. */
export async function promotionShardsOf(accountId: number, generatorId: number): Promise<PromotionShard[]> {
  const items = await scanAll(documents, {
    TableName: tableName('promotionShards'),
    FilterExpression: 'account_id = :a AND code_generator_id = :g AND attribute_exists(shard_number)',
    ExpressionAttributeValues: { ':a': accountId, ':g': generatorId },
  });
  return (items as PromotionShard[]).sort((a, b) => a.shard_number - b.shard_number);
}

type CountTable = 'promotionShards' | 'codeShards' | 'customerUses' | 'codeRedemptions';

/**
 * The account's count items (PRODUCT.md "Counting"), Scans: the shards and pools of its
 * promotions' budgets and of its multi-use codes, its customers' counts, and the records naming
 * the transactions that hold its multi-use codes.
 */
export async function countItemsOf(accountId: number): Promise<Record<CountTable, Record<string, any>[]>> {
  const scan = (table: CountTable) =>
    scanAll(documents, { TableName: tableName(table), FilterExpression: 'account_id = :a', ExpressionAttributeValues: { ':a': accountId } });
  const [promotionShards, codeShards, customerUses, codeRedemptions] = await Promise.all([
    scan('promotionShards'),
    scan('codeShards'),
    scan('customerUses'),
    scan('codeRedemptions'),
  ]);
  return { promotionShards, codeShards, customerUses, codeRedemptions };
}
