import { createHash } from 'node:crypto';
import { BatchGetCommand, TransactGetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { PROMOTION_SHARDS } from '#functions/tables';
import { pause, writeTogether, type TransactItem } from './transactions.ts';

/**
 * A count with a limit that many tills take from at once, spread so that no item takes part in
 * every redemption (PRODUCT.md "Counting", Peak): a promotion's budget (`max_redemptions`, over
 * its promotion shards) and the uses of a multi-use code (`max_redemptions_per_code`, over the
 * code's shards). It is an escrow:
 *
 * - Each shard counts the uses held through it (`used`) and holds a grant of uses it may still
 *   give without asking anyone (`left`), stamped with the version of the generator's settings it
 *   was granted under (`grant_version`). A redemption goes through the shard its POS transaction
 *   hashes to and, while the grant is current and large enough, writes only that shard:
 *   `used + t`, `left - t`, on the condition `grant_version = v AND left >= t`.
 * - The pool item counts what all shards account for: `taken` = the sum over the shards (and, for
 *   a code, its own item) of `used + left`. A shard whose grant is spent or stale (a PATCH since)
 *   takes a new grant from the pool in the redemption's own transaction: the pool's
 *   `taken + t + grant - returned <= limit` is its condition, so the pool never promises more
 *   than the limit. The grant shrinks with what is left (a 1/256th of it), so near the limit
 *   every redemption asks the pool and none of its uses sit reserved on a quiet shard.
 * - A void gives its uses back to the shard it took them from: `used - n`, `left + n`, which
 *   keeps `taken` true whatever the grant's version. Uses given back under a stale grant return
 *   to the pool when that shard next asks, or when a till finds the pool short.
 * - When the pool is short, a consistent snapshot (one TransactGetItems of the pool and every
 *   shard) tells whether the limit is really reached: the uses held then, plus this request's,
 *   above the limit. If so the code is refused; if not, the reserved grants are taken back to
 *   the pool (one transaction) and the redemption tries again. A refusal is always judged by
 *   such a snapshot or by a failed condition, never by a guess.
 *
 * Why it is exact: a grant stamped `v` exists only once the pool granted it under version `v`
 * (the pool's `version <= v` condition orders versions on it), and every grant under `v` was
 * checked against that version's limit with everything held or reserved counted; uses are taken
 * only from a grant stamped with the version the redemption judged by, and a PATCH changes the
 * version on every shard before it answers 200. So after a lowering, no use is taken until what
 * is held and reserved under older grants has fallen under the new limit (voids and reclaims),
 * and no use is ever taken back.
 */
const SHARDS = PROMOTION_SHARDS;

/** One count: where its shards and pool live, and what a new shard or pool item carries. */
export interface Count {
  readonly table: string;
  /** Shard n is `${prefix}#${n}`, the pool `${prefix}#pool`. */
  readonly prefix: string;
  /** The attributes a new shard or pool item carries besides its counts (the owner's ids). */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A code's count includes its own item (a use its holder field holds, uses a void gave back there). */
  readonly item?: { readonly table: string; readonly key: Readonly<Record<string, unknown>> };
}

/** A shard as a failed condition or a snapshot showed it. */
export interface ShardSeen {
  readonly exists: boolean;
  readonly used: number;
  /** Absent on a shard written before counts existed: no grant. */
  readonly left?: number;
  readonly grantVersion?: number;
  readonly termsVersion?: number;
}

export interface PoolSeen {
  readonly exists: boolean;
  readonly taken: number;
  readonly version: number;
  readonly ready: boolean;
}

/**
 * The shard a POS transaction goes through for one owner (a generator's id, a code's key): a
 * hash of the two, so the tills of a chain spread over the shards, and one transaction's
 * requests, and its void, meet on one.
 */
export function shardFor(transactionKey: string, owner: string): number {
  const digest = createHash('sha256').update(`${owner}\u0000${transactionKey}`).digest();
  return digest.readUInt32BE(0) % SHARDS;
}

/** What this environment last saw of each pool: a refill sizes its grant by it rather than guess. */
const pools = new Map<string, number>();
const MAX_POOLS = 1000;
export const recallPool = (count: Count) => pools.get(count.prefix);
export function rememberPool(count: Count, seen: PoolSeen): void {
  if (!seen.exists) return;
  if (pools.size >= MAX_POOLS) pools.clear();
  pools.set(count.prefix, seen.taken);
}

const shardKey = (count: Count, shard: number) => `${count.prefix}#${shard}`;
export const poolKey = (count: Count) => `${count.prefix}#pool`;

export function shardSeen(item: Record<string, any> | undefined): ShardSeen {
  if (!item) return { exists: false, used: 0 };
  return {
    exists: true,
    used: Number(item.used ?? 0),
    ...(item.left !== undefined ? { left: Number(item.left) } : {}),
    ...(item.grant_version !== undefined ? { grantVersion: Number(item.grant_version) } : {}),
    ...(item.terms_version !== undefined ? { termsVersion: Number(item.terms_version) } : {}),
  };
}

export function poolSeen(item: Record<string, any> | undefined): PoolSeen {
  if (!item) return { exists: false, taken: 0, version: 0, ready: false };
  return { exists: true, taken: Number(item.taken ?? 0), version: Number(item.version ?? 0), ready: item.ready === true };
}

/** The grant a shard takes from the pool when `room` uses are free after this redemption's: a 1/256th, 0 near the limit. */
export const grantFor = (room: number) => Math.max(0, Math.floor(room / (4 * SHARDS)));

/** Whether a shard's grant lets it give `take` uses under version `version` without the pool. */
export const grantCovers = (shard: ShardSeen | undefined, take: number, version: number) =>
  shard === undefined || (shard.exists && shard.grantVersion === version && (shard.left ?? 0) >= take);

/**
 * How a redemption writes a shard: `count` (no limit: only `used`), `fast` (from its current
 * grant), `refill` (a new grant from the pool, in the same transaction: the pool item beside it,
 * see `poolGrants`; the shard's seen `left` goes back to the pool), or `create` (a new shard with
 * a grant; `count` without a limit).
 */
export type ShardWrite =
  | { readonly kind: 'count' }
  | { readonly kind: 'fast' }
  | { readonly kind: 'refill'; readonly seen: ShardSeen; readonly grant: number }
  | { readonly kind: 'create'; readonly grant?: number };

/**
 * The shard's part of a redemption taking `take` uses under version `version`. `terms` adds the
 * promotion shard's proof that the terms judged by are current (`terms_version <= version`,
 * then set): data/promotion-shards.ts. Fails returning the shard as it is.
 */
export function shardTakes(count: Count, shard: number, take: number, version: number, write: ShardWrite, terms: boolean): TransactItem {
  const key = { shard_key: shardKey(count, shard) };
  if (write.kind === 'create') {
    return {
      Put: {
        TableName: count.table,
        Item: {
          ...key,
          ...count.attributes,
          shard_number: shard,
          used: take,
          ...(terms ? { terms_version: version } : {}),
          ...(write.grant !== undefined ? { left: write.grant, grant_version: version } : {}),
        },
        ConditionExpression: 'attribute_not_exists(shard_key)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  const sets = ['used = if_not_exists(used, :zero) + :take'];
  const conditions: string[] = [];
  const values: Record<string, unknown> = { ':zero': 0, ':take': take };
  if (terms) {
    sets.push('terms_version = :version');
    conditions.push('terms_version <= :version');
    values[':version'] = version;
  } else conditions.push('attribute_exists(shard_key)');
  if (write.kind === 'fast') {
    sets.push('#left = #left - :take');
    conditions.push('grant_version = :version AND #left >= :take');
    values[':version'] = version;
  } else if (write.kind === 'refill') {
    sets.push('#left = :grant', 'grant_version = :version');
    values[':grant'] = write.grant;
    values[':version'] = version;
    if (write.seen.left === undefined) conditions.push('attribute_not_exists(#left)');
    else {
      conditions.push('#left = :seen');
      values[':seen'] = write.seen.left;
    }
  }
  const usesLeft = write.kind === 'fast' || write.kind === 'refill';
  return {
    Update: {
      TableName: count.table,
      Key: key,
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ...(usesLeft ? { ExpressionAttributeNames: { '#left': 'left' } } : {}),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The pool's part of a refill or a new shard: `taken + delta` stays within `limit` (delta = the
 * uses taken + the new grant - the uses the shard gives back), under a version no newer than the
 * one judged by. A code's pool is created by the first refill (`create`, with what the code's
 * item already holds); a promotion's exists from the PATCH or create that set its budget, and
 * is `ready` once that PATCH counted what its shards held. Fails returning the pool as it is.
 */
export function poolGrants(count: Count, delta: number, limit: number, version: number, create?: { readonly held: number }): TransactItem {
  const key = { shard_key: poolKey(count) };
  if (create) {
    return {
      Put: {
        TableName: count.table,
        Item: { ...key, ...count.attributes, taken: create.held + delta, version, ready: true },
        ConditionExpression: 'attribute_not_exists(shard_key)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  return {
    Update: {
      TableName: count.table,
      Key: key,
      UpdateExpression: 'SET taken = taken + :delta, version = :version',
      ConditionExpression: 'ready = :true AND version <= :version AND taken <= :most',
      ExpressionAttributeValues: { ':delta': delta, ':version': version, ':true': true, ':most': limit - delta },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** A void's part: the shard gives `uses` back (`used - n`, `left + n`), whatever its grant. */
export function shardGivesBack(count: Count, shard: number, uses: number): TransactItem {
  return {
    Update: {
      TableName: count.table,
      Key: { shard_key: shardKey(count, shard) },
      UpdateExpression: 'SET used = used - :uses, #left = if_not_exists(#left, :zero) + :uses',
      ConditionExpression: 'used >= :uses',
      ExpressionAttributeNames: { '#left': 'left' },
      ExpressionAttributeValues: { ':uses': uses, ':zero': 0 },
    },
  };
}

/** What one consistent snapshot of a count showed. */
export interface Snapshot {
  readonly pool: PoolSeen;
  /** Every existing shard by number, and `item` for a code's own item. */
  readonly shards: ReadonlyMap<number | 'item', ShardSeen>;
  /** Uses held across the count at that moment. */
  readonly used: number;
  /** Uses reserved by grants (current or stale) at that moment. */
  readonly reserved: number;
}

const SNAPSHOT_ATTEMPTS = 10;

/**
 * The whole count at one moment: one TransactGetItems of the pool, every shard and the code's
 * item (at most 66 items), tried again when it meets a transaction in flight. `itemUsed` is what
 * the code's item holds (1 while its holder field names a transaction).
 */
export async function snapshot(count: Count, itemUsed?: (item: Record<string, any>) => number): Promise<Snapshot> {
  const gets = [
    { Get: { TableName: count.table, Key: { shard_key: poolKey(count) } } },
    ...Array.from({ length: SHARDS }, (_, shard) => ({ Get: { TableName: count.table, Key: { shard_key: shardKey(count, shard) } } })),
    ...(count.item ? [{ Get: { TableName: count.item.table, Key: count.item.key } }] : []),
  ];
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await documents.send(new TransactGetCommand({ TransactItems: gets }));
      const responses = answer.Responses ?? [];
      const shards = new Map<number | 'item', ShardSeen>();
      let used = 0;
      let reserved = 0;
      for (let shard = 0; shard < SHARDS; shard++) {
        const item = responses[shard + 1]?.Item;
        if (!item) continue;
        const seen = shardSeen(item);
        shards.set(shard, seen);
        used += seen.used;
        reserved += seen.left ?? 0;
      }
      if (count.item) {
        const item = responses[SHARDS + 1]?.Item;
        if (item) {
          const seen: ShardSeen = { exists: true, used: itemUsed ? itemUsed(item) : 0, ...(item.left !== undefined ? { left: Number(item.left) } : {}) };
          shards.set('item', seen);
          used += seen.used;
          reserved += seen.left ?? 0;
        }
      }
      return { pool: poolSeen(responses[0]?.Item), shards, used, reserved };
    } catch (error) {
      const name = (error as Error).name;
      if ((name !== 'TransactionCanceledException' && name !== 'TransactionConflictException') || attempt + 1 >= SNAPSHOT_ATTEMPTS) {
        throw Object.assign(new Error(`snapshot of ${count.prefix}: ${name}`), { name: 'TransactionConflictException', cause: error });
      }
      await pause(attempt);
    }
  }
}

/**
 * Takes every reserved grant of a count back to its pool, as a snapshot showed them (each shard
 * gives what it still has of it): one transaction. Returns false when a shard spent some of its
 * grant meanwhile (take a new snapshot).
 */
export async function reclaimGrants(count: Count, seen: Snapshot): Promise<boolean> {
  const items: TransactItem[] = [];
  let reclaimed = 0;
  for (const [shard, state] of seen.shards) {
    const left = state.left ?? 0;
    if (left <= 0) continue;
    reclaimed += left;
    items.push({
      Update: {
        TableName: shard === 'item' ? count.item!.table : count.table,
        Key: shard === 'item' ? count.item!.key : { shard_key: shardKey(count, shard) },
        UpdateExpression: 'SET #left = #left - :left',
        ConditionExpression: '#left >= :left',
        ExpressionAttributeNames: { '#left': 'left' },
        ExpressionAttributeValues: { ':left': left },
      },
    });
  }
  if (reclaimed === 0) return true;
  items.push({
    Update: {
      TableName: count.table,
      Key: { shard_key: poolKey(count) },
      UpdateExpression: 'SET taken = taken - :reclaimed',
      ConditionExpression: 'attribute_exists(taken)',
      ExpressionAttributeValues: { ':reclaimed': reclaimed },
    },
  });
  const result = await writeTogether(items);
  return result.outcome === 'written';
}

/** The pools of these counts as they are now (consistent reads, one BatchGetItem per table), by prefix. */
export async function readPools(counts: readonly Count[]): Promise<Map<string, PoolSeen>> {
  const seen = new Map<string, PoolSeen>();
  if (counts.length === 0) return seen;
  const request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> = {};
  for (const count of counts) (request[count.table] ??= { Keys: [], ConsistentRead: true }).Keys.push({ shard_key: poolKey(count) });
  const answer = await documents.send(new BatchGetCommand({ RequestItems: request }));
  if (Object.keys(answer.UnprocessedKeys ?? {}).length > 0)
    throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
  for (const items of Object.values(answer.Responses ?? {})) {
    for (const item of items) seen.set(String(item.shard_key).slice(0, -'#pool'.length), poolSeen(item));
  }
  return seen;
}

/**
 * The uses each existing shard of a count holds now, by shard number: one consistent BatchGetItem
 * of its 64 keys. Each shard is read as it is then, not all at one moment as a snapshot is: a
 * redemption or a void changes one shard of a count, so the sum is every use committed before the
 * read and not given back since, the ones racing it aside. No TransactGetItems: at a flyer code's
 * peak it would be cancelled by the redemptions in flight on its shards, and costs twice as much.
 */
export async function shardUses(count: Count): Promise<Map<number, number>> {
  const uses = new Map<number, number>();
  let keys: Record<string, unknown>[] = Array.from({ length: SHARDS }, (_, shard) => ({ shard_key: shardKey(count, shard) }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    if (round > 0) await pause(round - 1);
    const answer = await documents.send(
      new BatchGetCommand({ RequestItems: { [count.table]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'shard_key, used' } } }),
    );
    for (const item of answer.Responses?.[count.table] ?? []) {
      uses.set(Number(String(item.shard_key).slice(count.prefix.length + 1)), shardSeen(item).used);
    }
    keys = (answer.UnprocessedKeys?.[count.table]?.Keys ?? []) as Record<string, unknown>[];
  }
  return uses;
}
