import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { sumOfShardUses, writeShardUses, type ShardUses } from './shard-uses.ts';
import { pause, type TransactItem } from './transactions.ts';

const TABLE = tableName('codeGenerators');

/** What a code takes off: amounts in the currency's minor units (ISO 4217). */
export type Discount =
  | { type: 'none' }
  | { type: 'percent'; percent_off: number; max_amount_off?: number; currency?: string }
  | { type: 'amount'; amount_off: number; currency: string };

export interface Money {
  amount: number;
  currency: string;
}

/** The promotion's terms (PRODUCT.md "Promotion terms"): what a code gives, when and where. */
export interface PromotionTerms {
  discount: Discount;
  minimum_basket: Money | null;
  /** UTC with milliseconds, or null: no bound. */
  valid_from: string | null;
  valid_until: string | null;
  site_ids: string[] | null;
}

export const DEFAULT_TERMS: PromotionTerms = { discount: { type: 'none' }, minimum_basket: null, valid_from: null, valid_until: null, site_ids: null };

/** The promotion's limits (PRODUCT.md "Counting"): how many uses one code, the whole promotion and one customer may hold. */
export interface PromotionLimits {
  /** 1 to 1,000,000: how many transactions may hold one code at once (1: single-use). */
  max_redemptions_per_code: number;
  /** The budget across all the promotion's codes, or null: none. */
  max_redemptions: number | null;
  /** The uses one customer may hold across all the promotion's codes, or null: no limit. */
  max_redemptions_per_customer: number | null;
}

const DEFAULT_LIMITS: PromotionLimits = { max_redemptions_per_code: 1, max_redemptions: null, max_redemptions_per_customer: null };

export interface CodeGenerator extends PromotionTerms, PromotionLimits {
  account_id: number;
  id: number;
  generation_type: 'tillgate' | 'numeric';
  buffer_type: 'default';
  code_length: number;
  description: string;
  prefix: string;
  store_id: number;
  status: 'active' | 'inactive';
  created_at: string;
  updated_at: string;
  /**
   * Bumped by every change of status, description, terms or limits; the promotion's shards
   * (promotion-shards.ts) carry it, and a redemption proves it judged by the current one.
   * Absent on a generator never changed: 1.
   */
  terms_version?: number;
  /**
   * The version every shard of the promotion is known to carry (promotion-shards.ts): recorded
   * once a change has reached them all. Below `terms_version` when a PATCH stopped between its
   * write and its shards; the next PATCH of the generator finishes the work. Absent: 1. Never
   * shown to clients.
   */
  shards_version?: number;
  /**
   * The uses held through each of the promotion's shards, as the rollUpPromotionUses worker last
   * copied them from the shards' stream (shard-uses.ts): a few seconds behind at most. Absent
   * until the first use. Never shown as such: `times_redeemed` is its sum.
   */
  shard_uses?: ShardUses;
}

/** What a PATCH may change, in the order the answers show it. */
export type CodeGeneratorChange = Pick<CodeGenerator, 'status' | 'description' | keyof PromotionTerms | keyof PromotionLimits>;
export const CHANGEABLE_FIELDS = [
  'status',
  'description',
  ...(Object.keys(DEFAULT_TERMS) as (keyof PromotionTerms)[]),
  ...(Object.keys(DEFAULT_LIMITS) as (keyof PromotionLimits)[]),
] as const;

/** A stored generator with the defaults of fields added after it was written. */
const withDefaults = (item: Record<string, unknown>): CodeGenerator => ({ ...DEFAULT_TERMS, ...DEFAULT_LIMITS, terms_version: 1, ...item }) as CodeGenerator;

/** Uses held across the generator's codes, as far as its shards' stream has reached it. */
export const timesRedeemed = (generator: Pick<CodeGenerator, 'shard_uses'>): number => sumOfShardUses(generator.shard_uses);

/** The generator's currency: the discount's, else the minimum basket's, else none. */
export function generatorCurrency(terms: PromotionTerms): string | undefined {
  if (terms.discount.type !== 'none' && terms.discount.currency !== undefined) return terms.discount.currency;
  return terms.minimum_basket?.currency;
}

/** The by_store index's partition key: one store of one account. */
const storeKey = (accountId: number, storeId: number) => `${accountId}#${storeId}`;

/** Fails its condition only if the fresh id is taken: the id counter is behind the table. */
export function putCodeGenerator(generator: CodeGenerator): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { ...generator, store_key: storeKey(generator.account_id, generator.store_id) },
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

export async function findCodeGenerator(accountId: number, id: number): Promise<CodeGenerator | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { account_id: accountId, id }, ConsistentRead: true }));
  return Item ? withDefaults(Item) : undefined;
}

/** These generators of the account (at most 100), in one consistent BatchGetItem; a missing one is absent. */
export async function findCodeGenerators(accountId: number, ids: readonly number[]): Promise<CodeGenerator[]> {
  const found: CodeGenerator[] = [];
  let keys: Record<string, unknown>[] = ids.map((id) => ({ account_id: accountId, id }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    if (round > 0) await pause(round - 1);
    const answer = await documents.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }));
    found.push(...(answer.Responses?.[TABLE] ?? []).map(withDefaults));
    keys = (answer.UnprocessedKeys?.[TABLE]?.Keys ?? []) as Record<string, unknown>[];
  }
  return found;
}

/**
 * Changes status, description, terms and limits, and sets `terms_version` (the caller's, one
 * above the version read), provided the generator is still as it was read (its updated_at): a
 * concurrent change makes the condition fail and the caller read again.
 */
export function updateCodeGenerator(current: CodeGenerator, next: CodeGenerator): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: current.account_id, id: current.id },
      UpdateExpression: `SET ${CHANGEABLE_FIELDS.map((key) => `#${key} = :${key}`).join(', ')}, terms_version = :version, updated_at = :updated`,
      ConditionExpression: 'updated_at = :was',
      ExpressionAttributeNames: Object.fromEntries(CHANGEABLE_FIELDS.map((key) => [`#${key}`, key])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(CHANGEABLE_FIELDS.map((key) => [`:${key}`, next[key]])),
        ':version': next.terms_version,
        ':updated': next.updated_at,
        ':was': current.updated_at,
      },
    },
  };
}

/**
 * Records that every shard carries `version`, unless the generator has moved on since (a later
 * change records its own): one UpdateItem, whose condition failing is no fault.
 */
export async function recordShardsVersion(accountId: number, id: number, version: number): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        UpdateExpression: 'SET shards_version = :version',
        ConditionExpression: 'terms_version = :version',
        ExpressionAttributeValues: { ':version': version },
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
}

/**
 * Copies the latest uses of some of the promotion's shards onto the generator (`shard_uses`,
 * shard-uses.ts). False when the generator does not exist.
 */
export async function recordShardUses(accountId: number, id: number, uses: ReadonlyMap<number, number>): Promise<boolean> {
  return (await writeShardUses({ TableName: TABLE, Key: { account_id: accountId, id } }, 'id', uses)) !== undefined;
}

/**
 * Part of the transaction of a redemption that creates a promotion's shard (promotion-shards.ts):
 * the generator's status and terms are still at the version the redemption judged by (a
 * generator never changed carries no version: 1).
 */
export function generatorAt(accountId: number, id: number, version: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: TABLE,
      Key: { account_id: accountId, id },
      ConditionExpression:
        version === 1 ? 'attribute_exists(id) AND (attribute_not_exists(terms_version) OR terms_version = :version)' : 'terms_version = :version',
      ExpressionAttributeValues: { ':version': version },
    },
  };
}

/** Part of the transaction that completes an issuance: the generator exists and is active. */
export function generatorIsActive(accountId: number, id: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: TABLE,
      Key: { account_id: accountId, id },
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * One page of the account's generators (of one store, through the by_store index) in ascending
 * id order after `afterId`: one Query of `limit + 1` items.
 */
export async function listCodeGenerators(accountId: number, options: { storeId?: number; afterId: number; limit: number }) {
  const byStore = options.storeId !== undefined;
  const page = await documents.send(
    new QueryCommand({
      TableName: TABLE,
      ...(byStore
        ? {
            IndexName: 'by_store',
            KeyConditionExpression: 'store_key = :key AND id > :after',
            ExpressionAttributeValues: { ':key': storeKey(accountId, options.storeId!), ':after': options.afterId },
          }
        : {
            KeyConditionExpression: 'account_id = :key AND id > :after',
            ExpressionAttributeValues: { ':key': accountId, ':after': options.afterId },
            ConsistentRead: true,
          }),
      Limit: options.limit + 1,
    }),
  );
  const items = (page.Items ?? []).map(withDefaults);
  return { items: items.slice(0, options.limit), more: items.length > options.limit };
}
