import { createHash } from 'node:crypto';
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

const holderShard = (codeKey: string, shard: number) => `${codeKey}#${shard}`;
/**
 * A record's sort key: its time, then a digest of its transaction (a transaction key of long,
 * escaped ids would pass DynamoDB's 1,024 bytes for a sort key; the record carries the ids).
 */
const redeemedOrder = (redeemedAt: string, transactionKey: string) => `${redeemedAt}#${createHash('sha256').update(transactionKey).digest('base64url')}`;

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

/** DynamoDB's order of string sort keys (their UTF-8 bytes), which is not JavaScript's (UTF-16 code units) beyond U+FFFF. */
const sortKeyOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The holder a code's own item names (its redemption from when it was single-use, or now if it
 * is), as a record of the redemptions list: in the same order as the others (its time, then its
 * transaction), so that it takes its place among them.
 */
function itemRedemption(item: CodeItem): CodeRedemption | undefined {
  if (item.holder === undefined || item.redeemed_at === undefined || item.site_id === undefined || item.pos_transaction_id === undefined) return undefined;
  return {
    // In no shard: the code's own item.
    holder_shard: item.code_key,
    redeemed_order: redeemedOrder(item.redeemed_at, item.holder),
    account_id: item.account_id,
    code: item.code,
    site_id: item.site_id,
    pos_transaction_id: item.pos_transaction_id,
    redeemed_at: item.redeemed_at,
    ...(item.discount_amount !== undefined && item.currency !== undefined ? { discount_amount: item.discount_amount, currency: item.currency } : {}),
  };
}

/**
 * A page of the transactions holding a code, in redemption order (time, then transaction), after
 * the record whose `redeemed_order` is `after`: one Query per shard (each in order, at most
 * `limit + 1` records after the cursor), merged with the holder its item names. A code held
 * through few shards costs few: the caller passes the shards that hold uses (none for a code that
 * is not pooled: its item's holder is its only one).
 */
export async function listCodeRedemptions(
  item: CodeItem,
  shards: readonly number[],
  options: { after?: string; limit: number },
): Promise<{ items: CodeRedemption[]; more: boolean }> {
  const pages = await Promise.all(
    shards.map(async (shard) => {
      const answer = await documents.send(
        new QueryCommand({
          TableName: HOLDERS_TABLE,
          KeyConditionExpression: options.after === undefined ? 'holder_shard = :shard' : 'holder_shard = :shard AND redeemed_order > :after',
          ExpressionAttributeValues: { ':shard': holderShard(item.code_key, shard), ...(options.after === undefined ? {} : { ':after': options.after }) },
          ConsistentRead: true,
          Limit: options.limit + 1,
        }),
      );
      return (answer.Items ?? []) as CodeRedemption[];
    }),
  );
  const own = itemRedemption(item);
  const later = own !== undefined && (options.after === undefined || sortKeyOrder(own.redeemed_order, options.after) > 0) ? [own] : [];
  const merged = [...pages.flat(), ...later].sort((a, b) => sortKeyOrder(a.redeemed_order, b.redeemed_order));
  return { items: merged.slice(0, options.limit), more: merged.length > options.limit };
}
