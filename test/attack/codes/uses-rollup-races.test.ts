import { randomInt } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordShardUses } from '../../../functions/data/code-generators.ts';
import { codeKey, newCodeItem, putCode, recordCodeShardUses } from '../../../functions/data/codes.ts';
import { writeTogether } from '../../../functions/data/transactions.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';

/**
 * The rollup's writes (functions/data/shard-uses.ts, code-generators.ts, codes.ts) against
 * DynamoDB Local, raced as the stream's shards race in AWS: one promotion's or one code's shards
 * sit on different stream shards, read by invocations side by side. Whatever the interleaving,
 * the item ends with each shard's last value, and a code's redeemed state (by_redeemed) agrees
 * with its uses. Items of a random account, written straight into the tables.
 */
const accountId = randomInt(1_000_000, 2 ** 47);
const GENERATOR = 1;

const generatorItem = (id: number) => ({
  account_id: accountId,
  id,
  generation_type: 'tillgate',
  buffer_type: 'default',
  code_length: 8,
  description: '',
  prefix: 'R-',
  store_id: 1,
  status: 'active',
  created_at: '2026-11-26T00:00:00.000Z',
  updated_at: '2026-11-26T00:00:00.000Z',
});
const readGenerator = async (id: number) =>
  (await documents.send(new GetCommand({ TableName: tableName('codeGenerators'), Key: { account_id: accountId, id }, ConsistentRead: true }))).Item;
const readCode = async (code: string) =>
  (await documents.send(new GetCommand({ TableName: tableName('codes'), Key: { code_key: codeKey(accountId, code) }, ConsistentRead: true }))).Item;

async function issuedCode(): Promise<string> {
  const code = `R-${randomInt(10 ** 9, 10 ** 10)}`;
  const result = await writeTogether([putCode(newCodeItem(accountId, GENERATOR, code, '2026-11-26T00:00:00.000Z', 1, false))]);
  expect(result.outcome).toBe('written');
  return code;
}

/** Each worker owns one shard and writes its values in order, all workers at once. */
async function race(write: (shard: number, used: number) => Promise<unknown>, walks: number[][]) {
  await Promise.all(
    walks.map(async (walk, shard) => {
      for (const used of walk) await write(shard, used);
    }),
  );
}

/** A walk of a shard's `used` through 0 and back, ending at `last`. */
const walk = (last: number) => [...Array.from({ length: 4 }, () => randomInt(0, 3)), last];

describe("a generator's shard uses", () => {
  it('are written by workers racing on a generator without a map yet, every shard kept', async () => {
    const id = randomInt(1, 2 ** 40);
    await documents.send(new PutCommand({ TableName: tableName('codeGenerators'), Item: generatorItem(id) }));
    const walks = Array.from({ length: 8 }, (_, shard) => walk(shard));

    await race((shard, used) => recordShardUses(accountId, id, new Map([[shard, used]])), walks);

    expect((await readGenerator(id))?.shard_uses).toEqual(Object.fromEntries(walks.map((w, shard) => [shard, w.at(-1)])));
  });

  it('of a generator that does not exist are skipped, and create no item', async () => {
    const id = randomInt(1, 2 ** 40);
    expect(await recordShardUses(accountId, id, new Map([[0, 1]]))).toBe(false);
    expect(await readGenerator(id)).toBeUndefined();
  });
});

/**
 * Widens the race: each setting of a code's redeemed state waits a moment before it is sent, as a
 * slow network or a paused invocation would make it, so that other workers' uses land between the
 * read it was judged from and its write.
 */
function delayRedeemedStateWrites(): void {
  const send = documents.send.bind(documents);
  vi.spyOn(documents, 'send').mockImplementation((async (command: unknown, options?: unknown) => {
    if (command instanceof UpdateCommand && command.input.UpdateExpression?.startsWith('SET redeemed_key')) {
      await new Promise((resolve) => setTimeout(resolve, randomInt(0, 40)));
    }
    return send(command as never, options as never);
  }) as never);
}
afterEach(() => vi.restoreAllMocks());

describe("a multi-use code's redeemed state", () => {
  it('agrees with its uses after workers race on its shards, whichever way the last writes went', async () => {
    delayRedeemedStateWrites();
    for (let round = 0; round < 8; round++) {
      const code = await issuedCode();
      // Half the rounds end at no use at all, after walks through some.
      const lasts = Array.from({ length: 6 }, () => (round % 2 === 0 ? 0 : randomInt(0, 2)));
      const walks = lasts.map(walk);

      await race((shard, used) => recordCodeShardUses(codeKey(accountId, code), new Map([[shard, used]])), walks);

      const item = await readCode(code);
      const uses = lasts.reduce((a, b) => a + b, 0);
      expect(item?.shard_uses, `round ${round}`).toEqual(Object.fromEntries(lasts.map((last, shard) => [shard, last])));
      expect(item?.redeemed_key, `round ${round}: ${uses} uses`).toBe(`${accountId}#${GENERATOR}#${uses >= 1}`);
    }
  });

  it('is not set from uses that changed before the setting landed: a worker judging from an older read loses', async () => {
    const code = await issuedCode();
    const key = codeKey(accountId, code);
    // The first setting of the state is held back until the test lets it go.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const send = documents.send.bind(documents);
    vi.spyOn(documents, 'send').mockImplementation((async (command: unknown, options?: unknown) => {
      if (!holding && command instanceof UpdateCommand && command.input.UpdateExpression?.startsWith('SET redeemed_key')) {
        holding = true;
        await held;
      }
      return send(command as never, options as never);
    }) as never);

    // Worker A: shard 0 takes a use, and A sets out to list the code as redeemed…
    const a = recordCodeShardUses(key, new Map([[0, 1]]));
    while (!holding) await new Promise((resolve) => setTimeout(resolve, 5));
    // …while worker B writes the use's void: no use left, the code still unredeemed.
    await recordCodeShardUses(key, new Map([[0, 0]]));
    release();
    await a;

    expect(await readCode(code)).toMatchObject({ shard_uses: { 0: 0 }, redeemed_key: `${accountId}#${GENERATOR}#false` });
  });

  it('stays redeemed while a single-use holder holds the code, its shards at 0', async () => {
    const code = await issuedCode();
    await documents.send(
      new UpdateCommand({
        TableName: tableName('codes'),
        Key: { code_key: codeKey(accountId, code) },
        UpdateExpression: 'SET holder = :holder, pos_transaction_id = :pos, redeemed_key = :redeemed',
        ExpressionAttributeValues: { ':holder': `${accountId}#S-1#T-1`, ':pos': 'T-1', ':redeemed': `${accountId}#${GENERATOR}#true` },
      }),
    );
    await recordCodeShardUses(codeKey(accountId, code), new Map([[0, 0]]));
    expect(await readCode(code)).toMatchObject({ shard_uses: { 0: 0 }, redeemed_key: `${accountId}#${GENERATOR}#true` });
  });

  it('is left alone for a code not listed yet (pending, no generator_key), and a code that does not exist is skipped', async () => {
    const pending = `R-${randomInt(10 ** 9, 10 ** 10)}`;
    await writeTogether([putCode(newCodeItem(accountId, GENERATOR, pending, '2026-11-26T00:00:00.000Z', 1, true))]);
    expect(await recordCodeShardUses(codeKey(accountId, pending), new Map([[0, 3]]))).toBe(true);
    const item = await readCode(pending);
    expect(item?.shard_uses).toEqual({ 0: 3 });
    expect(item?.redeemed_key).toBeUndefined();

    const missing = `R-${randomInt(10 ** 9, 10 ** 10)}`;
    expect(await recordCodeShardUses(codeKey(accountId, missing), new Map([[0, 1]]))).toBe(false);
    expect(await readCode(missing)).toBeUndefined();
  });
});
