import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { CODES_TABLE, type CodeItem, type Holder, type RecordedAmount } from './codes.ts';
import type { Count } from './counts.ts';
import type { TransactItem } from './transactions.ts';

const SHARDS_TABLE = tableName('codeShards');
const HOLDERS_TABLE = tableName('codeRedemptions');

/**
 * Multi-use codes (PRODUCT.md "Counting"): a code whose generator allows it more than one use at
 * once counts its uses over shards (data/counts.ts), so that a flyer code at a chain's peak is no
 * hot item, and names each transaction holding it in its own item here (`codeRedemptions`),
 * keyed by the code's shard and sorted by redemption time. Its item in `codes` takes no part in
 * its redemptions: only the first one through the counts (`pooled`) marks it, once, with what it
 * held already (a holder from when the code was single-use counts as one use).
 */
export function codeCount(item: Pick<CodeItem, 'code_key' | 'account_id' | 'code_generator_id' | 'code'>): Count {
  return {
    table: SHARDS_TABLE,
    prefix: item.code_key,
    attributes: { account_id: item.account_id, code_generator_id: item.code_generator_id, code: item.code, code_key: item.code_key },
    item: { table: CODES_TABLE, key: { code_key: item.code_key } },
  };
}

/** What a code's own item holds of its count: one use while its holder field names a transaction. */
export const itemUses = (item: { readonly holder?: unknown }) => (item.holder !== undefined ? 1 : 0);

/**
 * The first redemption through a code's counts marks its item `pooled` (its uses counted from
 * now on by the pool, created beside it), provided the item is as read: its holder, if any, is
 * the one the pool counts. Uses a void gave back to the item before are dropped (`left` = 0):
 * the pool does not count them.
 */
export function poolCode(item: CodeItem): TransactItem {
  return {
    Update: {
      TableName: CODES_TABLE,
      Key: { code_key: item.code_key },
      UpdateExpression: 'SET pooled = :true, #left = :zero',
      ConditionExpression: `attribute_exists(code_key) AND attribute_not_exists(pooled) AND ${item.holder === undefined ? 'attribute_not_exists(holder)' : 'holder = :holder'}`,
      ExpressionAttributeNames: { '#left': 'left' },
      ExpressionAttributeValues: { ':true': true, ':zero': 0, ...(item.holder === undefined ? {} : { ':holder': item.holder }) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** One transaction holding a multi-use code, as the redemptions list shows it. */
export interface CodeRedemption {
  holder_shard: string;
  redeemed_order: string;
  account_id: number;
  code: string;
  site_id: string;
  pos_transaction_id: string;
  redeemed_at: string;
  discount_amount?: number;
  currency?: string;
}

export const holderShard = (codeKey: string, shard: number) => `${codeKey}#${shard}`;
const redeemedOrder = (redeemedAt: string, transactionKey: string) => `${redeemedAt}#${transactionKey}`;

export function putCodeRedemption(item: CodeItem, shard: number, holder: Holder, amount: RecordedAmount | undefined): TransactItem {
  const record: CodeRedemption = {
    holder_shard: holderShard(item.code_key, shard),
    redeemed_order: redeemedOrder(holder.redeemedAt, holder.key),
    account_id: item.account_id,
    code: item.code,
    site_id: holder.siteId,
    pos_transaction_id: holder.posTransactionId,
    redeemed_at: holder.redeemedAt,
    ...(amount ?? {}),
  };
  return { Put: { TableName: HOLDERS_TABLE, Item: record } };
}

export function deleteCodeRedemption(codeKey: string, shard: number, redeemedAt: string, transactionKey: string): TransactItem {
  return {
    Delete: {
      TableName: HOLDERS_TABLE,
      Key: { holder_shard: holderShard(codeKey, shard), redeemed_order: redeemedOrder(redeemedAt, transactionKey) },
      ConditionExpression: 'attribute_exists(holder_shard)',
    },
  };
}

/** Where a page of a code's redemptions starts: after this redemption (its time and transaction). */
export type RedemptionsCursor = string;

/**
 * A page of the transactions holding a code, in redemption order (time, then transaction): one
 * Query per shard (each in order, at most `limit` items after the cursor), merged. A code held
 * through few shards costs few: the caller passes the shards its counts show.
 */
export async function listCodeRedemptions(
  codeKey: string,
  shards: readonly number[],
  options: { after?: RedemptionsCursor; limit: number },
): Promise<{ redemptions: CodeRedemption[]; next?: RedemptionsCursor }> {
  const pages = await Promise.all(
    shards.map(async (shard) => {
      const answer = await documents.send(
        new QueryCommand({
          TableName: HOLDERS_TABLE,
          KeyConditionExpression: options.after === undefined ? 'holder_shard = :shard' : 'holder_shard = :shard AND redeemed_order > :after',
          ExpressionAttributeValues: { ':shard': holderShard(codeKey, shard), ...(options.after === undefined ? {} : { ':after': options.after }) },
          ConsistentRead: true,
          Limit: options.limit + 1,
        }),
      );
      return (answer.Items ?? []) as CodeRedemption[];
    }),
  );
  const merged = pages.flat().sort((a, b) => (a.redeemed_order < b.redeemed_order ? -1 : a.redeemed_order > b.redeemed_order ? 1 : 0));
  const page = merged.slice(0, options.limit);
  return merged.length > options.limit ? { redemptions: page, next: page.at(-1)!.redeemed_order } : { redemptions: page };
}
