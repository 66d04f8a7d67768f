import { createHash } from 'node:crypto';
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { PROMOTION_SHARDS } from '#functions/tables';
import { pause, type TransactItem } from './transactions.ts';

const TABLE = tableName('promotionShards');

/**
 * A promotion's shards: SHARD_COUNT small items per code generator, each carrying the version
 * of the generator's status and terms (`terms_version`). A redemption judges its codes by the
 * terms of one version and, inside its own TransactWriteItems, writes one shard (chosen by its
 * POS transaction) on the condition that the shard is at most at that version. A change of the
 * generator (PATCH) bumps the version on the generator and then on every shard before it
 * answers 200: a redemption that commits after that 200 and judged by older terms fails its
 * condition, learns the new version from the failure and is judged again.
 *
 * So no item of a promotion takes part in every one of its redemptions: they spread over its
 * shards, as DynamoDB's transaction conflicts require for a promotion at a chain's peak
 * (docs/redemption.md, "One promotion at a chain's peak"). A generator never changed has no
 * shard items: a missing shard is at version 0, and the first redemption through it creates it.
 */
export const SHARD_COUNT = PROMOTION_SHARDS;

export interface PromotionShard {
  shard_key: string;
  account_id: number;
  code_generator_id: number;
  shard_number: number;
  terms_version: number;
}

const shardKey = (accountId: number, generatorId: number, shard: number) => `${accountId}#${generatorId}#${shard}`;

/**
 * The shard a POS transaction's redemptions of a generator go through: a hash of the two, so the
 * tills of a chain spread over the shards, and one transaction's requests meet on one.
 */
export function shardOf(transactionKey: string, generatorId: number): number {
  const digest = createHash('sha256').update(`${generatorId}\u0000${transactionKey}`).digest();
  return digest.readUInt32BE(0) % SHARD_COUNT;
}

/**
 * Part of a redemption's transaction: the shard is at most at the version the redemption judged
 * by (a missing shard is at 0), and then carries it. Fails, returning the shard, when a change
 * of the generator reached it after the terms were read.
 */
export function judgedAt(accountId: number, generatorId: number, shard: number, version: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { shard_key: shardKey(accountId, generatorId, shard) },
      UpdateExpression: 'SET account_id = :account, code_generator_id = :generator, shard_number = :shard, terms_version = :version',
      ConditionExpression: 'attribute_not_exists(terms_version) OR terms_version <= :version',
      ExpressionAttributeValues: { ':account': accountId, ':generator': generatorId, ':shard': shard, ':version': version },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Parallel writes while a change reaches the shards: enough to be quick, few enough to stay polite. */
const PARALLEL = 16;
const ATTEMPTS = 8;

/**
 * Brings every shard of a generator to `version` (those at it or beyond are left as they are).
 * One UpdateItem per shard, each retried on its own when it meets a redemption's transaction:
 * a single transaction over all shards would have to find every one of them free at once,
 * which a promotion at its peak never offers. Throws when a shard could not be reached; the
 * change is then not confirmed, and repeating it (the PATCH, with the same body) finishes it.
 */
export async function bringShardsTo(accountId: number, generatorId: number, version: number): Promise<void> {
  const shards = Array.from({ length: SHARD_COUNT }, (_, shard) => shard);
  const worker = async () => {
    for (let shard = shards.shift(); shard !== undefined; shard = shards.shift()) await bringShardTo(accountId, generatorId, shard, version);
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

async function bringShardTo(accountId: number, generatorId: number, shard: number, version: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await documents.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { shard_key: shardKey(accountId, generatorId, shard) },
          UpdateExpression: 'SET account_id = :account, code_generator_id = :generator, shard_number = :shard, terms_version = :version',
          ConditionExpression: 'attribute_not_exists(terms_version) OR terms_version < :version',
          ExpressionAttributeValues: { ':account': accountId, ':generator': generatorId, ':shard': shard, ':version': version },
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

/**
 * The versions of one shard per generator (the shard this transaction goes through), in one
 * consistent BatchGetItem: what a check compares its cached terms with. A missing shard is at 0.
 */
export async function shardVersions(accountId: number, transactionKey: string, generatorIds: readonly number[]): Promise<Map<number, number>> {
  const versions = new Map(generatorIds.map((id) => [id, 0]));
  if (generatorIds.length === 0) return versions;
  let keys: Record<string, unknown>[] = generatorIds.map((id) => ({ shard_key: shardKey(accountId, id, shardOf(transactionKey, id)) }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    if (round > 0) await pause(round - 1);
    const answer = await documents.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }));
    for (const item of (answer.Responses?.[TABLE] ?? []) as PromotionShard[]) versions.set(item.code_generator_id, item.terms_version);
    keys = (answer.UnprocessedKeys?.[TABLE]?.Keys ?? []) as Record<string, unknown>[];
  }
  return versions;
}
