import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rollUp, rollupWrites } from '../../../functions/codes/shard-rollup.ts';
import { sumOfShardUses } from '../../../functions/data/shard-uses.ts';
import { timesRedeemed } from '../../../functions/data/codes.ts';

/**
 * The rollup of a shard table's stream onto the items it counts (functions/codes/shard-rollup.ts),
 * without a database: which writes a batch comes to, what it answers Lambda when some fail, and,
 * through a model of Lambda's stream event source (retries from the reported record, bisection,
 * a batch handed over again), that what the items end up holding is each shard's newest `used`.
 */
interface Shard {
  readonly generator: number;
  readonly shard: number;
  readonly used?: number;
}

const ACCOUNT = 7;

/** A promotionShards stream record of a shard (or, with `shard` undefined, of the generator's pool item). */
function record(sequence: number, { generator, shard, used }: Shard, eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'MODIFY'): DynamoDBRecord {
  const image = {
    shard_key: `${ACCOUNT}#${generator}#${shard ?? 'pool'}`,
    account_id: ACCOUNT,
    code_generator_id: generator,
    ...(shard !== undefined ? { shard_number: shard } : {}),
    terms_version: 1,
    ...(used !== undefined ? { used } : {}),
  };
  return {
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      SequenceNumber: String(sequence).padStart(21, '0'),
      Keys: marshall({ shard_key: image.shard_key }) as Record<string, any>,
      ...(eventName === 'REMOVE' ? {} : { NewImage: marshall(image) as Record<string, AttributeValue> as Record<string, any> }),
    },
  };
}

const byGenerator = (image: { account_id: number; code_generator_id: number }) => ({
  key: `${image.account_id}#${image.code_generator_id}`,
  target: image.code_generator_id,
});

describe('the writes a batch comes to', () => {
  it("one per generator, with each shard's last used in the batch; absent used is 0; pool items and REMOVEs count for nothing", () => {
    const records = [
      record(1, { generator: 1, shard: 3, used: 5 }, 'INSERT'),
      record(2, { generator: 2, shard: 0, used: 1 }),
      record(3, { generator: 1, shard: 3, used: 6 }),
      record(4, { generator: 1, shard: undefined as never, used: 900 }),
      record(5, { generator: 1, shard: 9 }),
      record(6, { generator: 2, shard: 0, used: 0 }, 'REMOVE'),
      record(7, { generator: 1, shard: 3, used: 4 }),
    ];
    const writes = rollupWrites(records, byGenerator);
    expect(writes.map(({ target, uses, first }) => ({ target, uses: Object.fromEntries(uses), first }))).toEqual([
      { target: 1, uses: { 3: 4, 9: 0 }, first: 0 },
      { target: 2, uses: { 0: 1 }, first: 1 },
    ]);
  });

  it('answers no failure when every write succeeded', async () => {
    const written: number[] = [];
    const answer = await rollUp([record(1, { generator: 1, shard: 0, used: 1 }), record(2, { generator: 2, shard: 0, used: 1 })], byGenerator, async (target) =>
      written.push(target),
    );
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(written.sort()).toEqual([1, 2]);
  });

  it('tries every write, and reports the first record, in stream order, of any generator whose write failed', async () => {
    const records = [
      record(1, { generator: 1, shard: 0, used: 1 }),
      record(2, { generator: 2, shard: 0, used: 1 }),
      record(3, { generator: 3, shard: 0, used: 1 }),
      record(4, { generator: 2, shard: 1, used: 1 }),
    ];
    const tried: number[] = [];
    const answer = await rollUp(records, byGenerator, async (target) => {
      tried.push(target);
      if (target !== 1) throw Object.assign(new Error('injected'), { name: 'ProvisionedThroughputExceededException' });
    });
    expect(tried.sort()).toEqual([1, 2, 3]);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb!.SequenceNumber }] });
  });
});

/**
 * Lambda's DynamoDB event source as configured (functions/workers.ts, infra/constructs/workers.ts):
 * batches of up to `batchSize` records from the checkpoint; a reported failure moves the
 * checkpoint to the reported record, and the rest is tried again, bisected (halved) when
 * `bisect` says so, up to `retryAttempts` times before it goes to the failure destination; and
 * now and then a batch that succeeded is handed over again (a retry after a time-out that hid the
 * success).
 */
async function eventSource(
  records: DynamoDBRecord[],
  handler: (batch: DynamoDBRecord[]) => Promise<DynamoDBBatchResponse>,
  options: { batchSize: number; retryAttempts: number; bisect: (attempt: number) => boolean; replay: (start: number) => boolean },
): Promise<{ givenUp: number }> {
  let checkpoint = 0;
  let givenUp = 0;
  while (checkpoint < records.length) {
    let end = Math.min(records.length, checkpoint + options.batchSize);
    for (let attempt = 0; ; attempt++) {
      const batch = records.slice(checkpoint, end);
      const { batchItemFailures } = await handler(batch);
      if (batchItemFailures.length === 0) {
        if (options.replay(checkpoint)) await handler(batch);
        checkpoint = end;
        break;
      }
      checkpoint += batch.findIndex((r) => r.dynamodb?.SequenceNumber === batchItemFailures[0]!.itemIdentifier);
      if (attempt >= options.retryAttempts) {
        givenUp += end - checkpoint;
        checkpoint = end;
        break;
      }
      if (options.bisect(attempt) && end - checkpoint > 1) end = checkpoint + Math.ceil((end - checkpoint) / 2);
    }
  }
  return { givenUp };
}

describe('through retries, bisection and batches handed over again', () => {
  const shards = fc.record({
    generator: fc.integer({ min: 1, max: 3 }),
    shard: fc.integer({ min: 0, max: 4 }),
    used: fc.option(fc.nat(20), { nil: undefined }),
  });

  it("every generator ends with each shard's newest used, and times_redeemed their sum", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(shards, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 16 }),
        fc.infiniteStream(fc.boolean()),
        fc.infiniteStream(fc.integer({ min: 0, max: 9 })),
        async (changes, batchSize, coins, dice) => {
          const records = changes.map((change, index) => record(index + 1, change));
          const store = new Map<number, Record<string, number>>();
          const faults = dice[Symbol.iterator]();
          const flips = coins[Symbol.iterator]();
          const write = async (generator: number, uses: ReadonlyMap<number, number>) => {
            // A write fails three times in ten, before or after it reached the table.
            const roll = faults.next().value as number;
            if (roll === 0) throw Object.assign(new Error('before'), { name: 'ThrottlingException' });
            const map = store.get(generator) ?? {};
            for (const [shard, used] of uses) map[shard] = used;
            store.set(generator, map);
            if (roll <= 2) throw Object.assign(new Error('after'), { name: 'TimeoutError' });
          };
          const { givenUp } = await eventSource(records, (batch) => rollUp(batch, byGenerator, write), {
            batchSize,
            retryAttempts: 1000,
            bisect: () => flips.next().value as boolean,
            replay: () => flips.next().value as boolean,
          });
          expect(givenUp).toBe(0);

          const newest = new Map<number, Record<string, number>>();
          for (const { generator, shard, used } of changes) newest.set(generator, { ...newest.get(generator), [shard]: used ?? 0 });
          expect(Object.fromEntries(store)).toEqual(Object.fromEntries(newest));
          for (const [generator, uses] of newest) {
            expect(sumOfShardUses(store.get(generator))).toBe(Object.values(uses).reduce((a, b) => a + b, 0));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a batch handed over whole again after newer records were written does not leave the older values', async () => {
    const older = [record(1, { generator: 1, shard: 0, used: 1 }), record(2, { generator: 1, shard: 1, used: 1 })];
    const newer = [record(3, { generator: 1, shard: 0, used: 2 })];
    const store: Record<string, number> = {};
    const write = async (_: number, uses: ReadonlyMap<number, number>) => {
      for (const [shard, used] of uses) store[shard] = used;
    };
    await rollUp([...older, ...newer], byGenerator, write);
    // A bisected retry hands the first half over again: shard 0 is back at 1 for a moment…
    await rollUp(older, byGenerator, write);
    expect(store).toEqual({ 0: 1, 1: 1 });
    // …and the second half, after it, sets it to its newest again.
    await rollUp(newer, byGenerator, write);
    expect(store).toEqual({ 0: 2, 1: 1 });
  });
});

describe("a code's times_redeemed", () => {
  it('is its holder (a single-use redemption) plus the uses of its shards', () => {
    expect(timesRedeemed({})).toBe(0);
    expect(timesRedeemed({ pos_transaction_id: 'T-1' })).toBe(1);
    expect(timesRedeemed({ shard_uses: { 0: 2, 17: 3 } })).toBe(5);
    expect(timesRedeemed({ pos_transaction_id: 'T-1', shard_uses: { 4: 0 } })).toBe(1);
  });
});
