import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { pause } from './transactions.ts';

/**
 * What a counted item (a code generator, a multi-use code) knows of the uses held through its
 * shards (promotion shards, code shards): `shard_uses`, a map from shard number to that shard's
 * `used`, each entry the latest value a stream worker copied from the shard
 * (functions/codes/roll-up-promotion-uses.ts, roll-up-code-uses.ts). Absolute values, never
 * increments: writing one twice, or an older one and then the newer one, leaves what the newest
 * says, so the workers may be run again on any record.
 */
export type ShardUses = Record<string, number>;

/** The uses held across the shards: the sum of the map (none yet: 0). */
export function sumOfShardUses(uses: ShardUses | undefined): number {
  let sum = 0;
  for (const used of Object.values(uses ?? {})) sum += used;
  return sum;
}

const ATTEMPTS = 5;

/**
 * Sets these shards' entries of the item's `shard_uses` (`SET shard_uses.#s0 = :u0, …`): one
 * UpdateItem, returning the item as it is after it (ReturnValues ALL_NEW). DynamoDB refuses to
 * set an entry of a map that does not exist, so the update is conditioned on the map; the first
 * time it fails, an UpdateItem makes it (`if_not_exists`: never replacing the map of a
 * concurrent worker) and the update is tried again. Undefined when the item does not exist
 * (`keyAttribute`, an attribute every such item has, is absent): nothing is created.
 *
 * A write of a transaction in flight on the item (a PATCH of the generator, a redemption's
 * condition check) refuses the update (TransactionConflict): tried again after a pause, a few
 * times, then thrown, and the stream hands the records over again.
 */
export async function writeShardUses(
  target: { readonly TableName: string; readonly Key: Record<string, unknown> },
  keyAttribute: string,
  uses: ReadonlyMap<number, number>,
): Promise<Record<string, any> | undefined> {
  const entries = [...uses];
  const update = {
    ...target,
    UpdateExpression: `SET ${entries.map((_, index) => `shard_uses.#s${index} = :u${index}`).join(', ')}`,
    ConditionExpression: 'attribute_exists(shard_uses)',
    ExpressionAttributeNames: Object.fromEntries(entries.map(([shard], index) => [`#s${index}`, String(shard)])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, used], index) => [`:u${index}`, used])),
    ReturnValues: 'ALL_NEW' as const,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      return (await documents.send(new UpdateCommand(update))).Attributes;
    } catch (error) {
      const name = (error as Error).name;
      if (attempt + 1 >= ATTEMPTS) throw error;
      if (name === 'TransactionConflictException') {
        await pause(attempt);
        continue;
      }
      if (name !== 'ConditionalCheckFailedException') throw error;
    }
    // No map yet, or no item.
    try {
      await documents.send(
        new UpdateCommand({
          ...target,
          UpdateExpression: 'SET shard_uses = if_not_exists(shard_uses, :empty)',
          ConditionExpression: `attribute_exists(${keyAttribute})`,
          ExpressionAttributeValues: { ':empty': {} },
        }),
      );
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  }
}
