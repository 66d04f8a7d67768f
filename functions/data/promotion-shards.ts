import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { PROMOTION_SHARDS } from '#functions/tables';
import { pause, type TransactItem } from './transactions.ts';
import { poolKey, readPools, shardFor, snapshot, type Count } from './counts.ts';

const TABLE = tableName('promotionShards');

/**
 * A promotion's shards: up to SHARD_COUNT small items per code generator, each carrying the
 * version of the generator's status and terms (`terms_version`). A redemption judges its codes by
 * the terms of one version and, inside its own TransactWriteItems, writes one shard (chosen by
 * its POS transaction) on the condition that the shard is at most at that version. A change of
 * the generator (PATCH) bumps the version on the generator and then on every shard that exists
 * before it answers 200: a redemption that commits after that 200 and judged by older terms fails
 * its condition, learns the new version from the failure and is judged again.
 *
 * A shard is created by the first redemption through it, in a transaction that also
 * condition-checks the generator's own version (the only time a redemption touches the generator,
 * at most SHARD_COUNT times in a promotion's life): a shard created after a PATCH read the
 * existing ones can only be created at the new version. So a PATCH writes only the shards that
 * exist: a quiet promotion has a few, one at its peak all of them.
 *
 * No item of a promotion takes part in every one of its redemptions: they spread over its
 * shards, as DynamoDB's transaction conflicts require for a promotion at a chain's peak
 * (docs/redemption.md, "One promotion at a chain's peak").
 */
export const SHARD_COUNT = PROMOTION_SHARDS;

export interface PromotionShard {
  shard_key: string;
  account_id: number;
  code_generator_id: number;
  shard_number: number;
  terms_version: number;
  /** Uses held through this shard (absent: 0); its stream copies it onto the generator (roll-up-promotion-uses.ts). */
  used?: number;
}

const shardKey = (accountId: number, generatorId: number, shard: number) => `${accountId}#${generatorId}#${shard}`;

/**
 * The shard a POS transaction's redemptions of a generator go through: a hash of the two, so the
 * tills of a chain spread over the shards, and one transaction's requests meet on one.
 */
export function shardOf(transactionKey: string, generatorId: number): number {
  return shardFor(transactionKey, String(generatorId));
}

/**
 * Part of a redemption's transaction: the shard exists and is at most at the version the
 * redemption judged by, and then carries it. Fails, returning the shard (nothing when it does not
 * exist yet), when a change of the generator reached it after the terms were read.
 */
export function judgedAt(accountId: number, generatorId: number, shard: number, version: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { shard_key: shardKey(accountId, generatorId, shard) },
      UpdateExpression: 'SET terms_version = :version',
      ConditionExpression: 'terms_version <= :version',
      ExpressionAttributeValues: { ':version': version },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The first redemption through a shard creates it at the version it judged by; beside it in the
 * transaction, a ConditionCheck that the generator is at that version (codeGenerators'
 * `generatorAt`). Fails when another redemption created it first.
 */
export function createdAt(accountId: number, generatorId: number, shard: number, version: number): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: {
        shard_key: shardKey(accountId, generatorId, shard),
        account_id: accountId,
        code_generator_id: generatorId,
        shard_number: shard,
        terms_version: version,
      },
      ConditionExpression: 'attribute_not_exists(shard_key)',
    },
  };
}

/** Parallel writes while a change reaches the shards: enough to be quick, few enough to stay polite. */
const PARALLEL = 16;
const ATTEMPTS = 8;

/**
 * Brings every existing shard of a generator to `version` (those at it or beyond are left as they
 * are): one consistent BatchGetItem of the shards' keys, then one UpdateItem per shard found, each
 * retried on its own when it meets a redemption's transaction. A single transaction over all
 * shards would have to find every one of them free at once, which a promotion at its peak never
 * offers. Call it after the generator carries `version`: a shard created later is created at it.
 * Throws when a shard could not be reached; the change is then not confirmed, and repeating it
 * (the PATCH, with the same body) finishes it.
 */
export async function bringShardsTo(accountId: number, generatorId: number, version: number): Promise<void> {
  const shards = await existingShards(accountId, generatorId);
  const worker = async () => {
    for (let shard = shards.shift(); shard !== undefined; shard = shards.shift()) await bringShardTo(accountId, generatorId, shard, version);
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/** The shards of a generator that exist, by number: one consistent BatchGetItem of their keys. */
async function existingShards(accountId: number, generatorId: number): Promise<number[]> {
  const found: number[] = [];
  let keys: Record<string, unknown>[] = Array.from({ length: SHARD_COUNT }, (_, shard) => ({ shard_key: shardKey(accountId, generatorId, shard) }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    if (round > 0) await pause(round - 1);
    const answer = await documents.send(
      new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'shard_number' } } }),
    );
    for (const item of (answer.Responses?.[TABLE] ?? []) as Pick<PromotionShard, 'shard_number'>[]) found.push(item.shard_number);
    keys = (answer.UnprocessedKeys?.[TABLE]?.Keys ?? []) as Record<string, unknown>[];
  }
  return found;
}

async function bringShardTo(accountId: number, generatorId: number, shard: number, version: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await documents.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { shard_key: shardKey(accountId, generatorId, shard) },
          UpdateExpression: 'SET terms_version = :version',
          ConditionExpression: 'terms_version < :version',
          ExpressionAttributeValues: { ':version': version },
        }),
      );
      return;
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'ConditionalCheckFailedException') return; // at this version or beyond already
      if (name !== 'TransactionConflictException' || attempt + 1 >= ATTEMPTS) throw error;
      await pause(attempt);
    }
  }
}

/** A promotion's budget (`max_redemptions`) as a count over its shards (data/counts.ts): the pool is `${account}#${generator}#pool`. */
export function promotionCount(accountId: number, generatorId: number): Count {
  return { table: TABLE, prefix: `${accountId}#${generatorId}`, attributes: { account_id: accountId, code_generator_id: generatorId } };
}

/**
 * The budget's pool, written with the change that sets a budget where there was none (a create
 * with `max_redemptions`, or a PATCH from null): a new generator's is ready at once (nothing is
 * held), a PATCH's only once `countBudget` has counted what the shards hold. Until then no shard
 * takes a grant under the new version: its redemptions wait (and retry).
 */
export function openBudget(accountId: number, generatorId: number, version: number, ready: boolean): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { shard_key: poolKey(promotionCount(accountId, generatorId)), account_id: accountId, code_generator_id: generatorId, taken: 0, version, ready },
    },
  };
}

/**
 * Makes a budget set by a PATCH ready: once every shard carries the PATCH's version (bringShardsTo),
 * no redemption under an older version can commit on them, and none under the new one takes uses
 * before the pool is ready; a void keeps `used + left` of its shard. So the shards' sum is what the
 * promotion holds and reserves, and the pool starts from it. Does nothing if the pool is ready
 * already or a newer change came (a PATCH that changes nothing finishes one that stopped here).
 */
export async function countBudget(accountId: number, generatorId: number, version: number): Promise<void> {
  const count = promotionCount(accountId, generatorId);
  const pool = (await readPools([count])).get(count.prefix);
  if (!pool || pool.ready || pool.version !== version) return; // counted already, or a newer change owns it
  const seen = await snapshot(count);
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { shard_key: poolKey(count) },
        UpdateExpression: 'SET taken = :taken, ready = :true',
        ConditionExpression: 'version = :version AND ready = :false',
        ExpressionAttributeValues: { ':taken': seen.used + seen.reserved, ':true': true, ':false': false, ':version': version },
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
}
