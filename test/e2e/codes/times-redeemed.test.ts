import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send, type CoreQuery } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';

/**
 * The generator's read-only `times_redeemed` and a multi-use code's redeemed state, kept by the
 * stream workers rollUpPromotionUses and rollUpCodeUses (functions/codes/) from the shards'
 * `used`, on the local stack's stream reader: the shards are written straight into DynamoDB Local
 * here (what a redemption or a void does to them is redemption's), and the answers are polled for
 * until they show it. And the ETag that keeps the two apart: a conditional GET sees the count
 * move, a PATCH's If-Match does not.
 */
const ctx = useLocalApi();
let workers: LocalWebhooks;
beforeAll(async () => {
  workers = await startTestWebhooks();
});
afterAll(() => workers?.close());

const GENERATOR_ETAG = /^W\/"([0-9a-f]{32})\.(0|[1-9][0-9]*)"$/;
/** How long the rollup may take here: the stream reader polls every 50 ms. */
const ROLLUP_MS = 10_000;

const create = async () => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(response.status, response.text).toBe(201);
  return response;
};
const get = (id: number, headers: { 'If-None-Match'?: string } = {}) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}', { params: { path: { id }, header: headers } }));
const list = (query: CoreQuery<'listCodeGenerators'> = {}) => send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen', { params: { query } }));
const patch = (id: number, description: string, headers: { 'If-Match'?: string } = {}) =>
  send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id }, header: headers }, body: { code_generator: { description } } }),
  );
const listCodes = (id: number, redeemed: boolean) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes', { params: { path: { id }, query: { redeemed } } }));

/** What a redemption leaves on a promotion shard: its `used` (the other fields as the shard has them). */
const putPromotionShard = (generatorId: number, shard: number | 'pool', used: number) =>
  documents.send(
    new PutCommand({
      TableName: tableName('promotionShards'),
      Item: {
        shard_key: `${ctx.account.accountId}#${generatorId}#${shard}`,
        account_id: ctx.account.accountId,
        code_generator_id: generatorId,
        ...(shard === 'pool' ? {} : { shard_number: shard, terms_version: 1 }),
        used,
      },
    }),
  );
const putCodeShard = (generatorId: number, code: string, shard: number, used: number) =>
  documents.send(
    new PutCommand({
      TableName: tableName('codeShards'),
      Item: {
        shard_key: `${ctx.account.accountId}#${code}#${shard}`,
        code_key: `${ctx.account.accountId}#${code}`,
        account_id: ctx.account.accountId,
        code_generator_id: generatorId,
        code,
        shard_number: shard,
        used,
      },
    }),
  );

/** Polls `read` until `done` holds of what it read (at most ROLLUP_MS), and returns that. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + ROLLUP_MS;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a code generator's times_redeemed", () => {
  it("is 0 in the create answer, then the sum of its shards' uses on GET within seconds of their change (the pool item aside)", async () => {
    const created = await create();
    expect(created.json.code_generator.times_redeemed).toBe(0);
    expect(created.headers.get('etag')).toMatch(GENERATOR_ETAG);
    expect(created.headers.get('etag')!.endsWith('.0"')).toBe(true);
    const { id } = created.json.code_generator;

    await Promise.all([putPromotionShard(id, 3, 2), putPromotionShard(id, 40, 5), putPromotionShard(id, 'pool', 900)]);
    const after = await eventually(
      () => get(id),
      (response) => response.json.code_generator.times_redeemed === 7,
    );
    expect(after.status).toBe(200);
    expect(after.json.code_generator).toEqual({ ...created.json.code_generator, times_redeemed: 7 });

    // A void gives a use back: the shard's `used` goes down, and so does the sum.
    await documents.send(
      new UpdateCommand({
        TableName: tableName('promotionShards'),
        Key: { shard_key: `${ctx.account.accountId}#${id}#3` },
        UpdateExpression: 'SET used = :used',
        ExpressionAttributeValues: { ':used': 1 },
      }),
    );
    expect(
      (
        await eventually(
          () => get(id),
          (response) => response.json.code_generator.times_redeemed === 6,
        )
      ).json.code_generator.times_redeemed,
    ).toBe(6);
    const { Item } = await documents.send(new GetCommand({ TableName: tableName('codeGenerators'), Key: { account_id: ctx.account.accountId, id } }));
    expect(Item?.shard_uses).toEqual({ 3: 1, 40: 5 });
  });

  it('shows in the list, and in the list of one store (its index projects the uses)', async () => {
    const { id } = (await create()).json.code_generator;
    await putPromotionShard(id, 0, 4);
    await eventually(
      () => get(id),
      (response) => response.json.code_generator.times_redeemed === 4,
    );
    const all = await list();
    expect(all.json.code_generators.map((g: { id: number; times_redeemed: number }) => [g.id, g.times_redeemed])).toEqual([[id, 4]]);
    const ofStore = await eventually(
      () => list({ store_id: winterPromotion.store_id }),
      (response) => response.json.code_generators[0]?.times_redeemed === 4,
    );
    expect(ofStore.json.code_generators.map((g: { id: number; times_redeemed: number }) => [g.id, g.times_redeemed])).toEqual([[id, 4]]);
  });
});

describe('the ETag of a code generator', () => {
  it('changes with times_redeemed, so a conditional GET after a redemption answers 200, not 304', async () => {
    const { id } = (await create()).json.code_generator;
    const before = await get(id);
    const etag = before.headers.get('etag')!;
    expect((await get(id, { 'If-None-Match': etag })).status).toBe(304);

    await putPromotionShard(id, 9, 1);
    await eventually(
      () => get(id),
      (response) => response.json.code_generator.times_redeemed === 1,
    );
    const after = await get(id, { 'If-None-Match': etag });
    expect(after.status).toBe(200);
    expect(after.json.code_generator.times_redeemed).toBe(1);
    const [, hashBefore] = GENERATOR_ETAG.exec(etag)!;
    const [, hashAfter, count] = GENERATOR_ETAG.exec(after.headers.get('etag')!)!;
    // The same fields a PATCH sets, one use more.
    expect([hashAfter, count]).toEqual([hashBefore, '1']);
    expect((await get(id, { 'If-None-Match': after.headers.get('etag')! })).status).toBe(304);
  });

  it('lets a PATCH whose If-Match was read before times_redeemed moved through, and answers 412 once a field a PATCH sets has changed', async () => {
    const { id } = (await create()).json.code_generator;
    const etag = (await get(id)).headers.get('etag')!;
    await putPromotionShard(id, 12, 3);
    await eventually(
      () => get(id),
      (response) => response.json.code_generator.times_redeemed === 3,
    );

    const changed = await patch(id, 'Busy promotion', { 'If-Match': etag });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.code_generator).toMatchObject({ description: 'Busy promotion', times_redeemed: 3 });
    // The answer's tag is the one a GET now gives, and a client may send it back.
    expect(changed.headers.get('etag')).toBe((await get(id)).headers.get('etag'));

    const stale = await patch(id, 'Stale', { 'If-Match': etag });
    expect(stale.status).toBe(412);
    expect(stale.json).toEqual({ errors: [{ message: 'If-Match does not match the current ETag of this code generator' }] });
    expect((await patch(id, 'Fresh', { 'If-Match': changed.headers.get('etag')! })).status).toBe(200);
  });
});

describe("a multi-use code's uses", () => {
  it('reach the code item, and its redeemed state follows them: listed as redeemed from 1 use, as unredeemed again at 0', async () => {
    const { id } = (await create()).json.code_generator;
    const issued = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count: 2 } }),
    );
    expect(issued.status, issued.text).toBe(201);
    const [code, other] = issued.json.codes as [string, string];
    const codesOf = async (redeemed: boolean) => ((await listCodes(id, redeemed)).json.codes as { code: string }[]).map((c) => c.code);

    await Promise.all([putCodeShard(id, code, 0, 1), putCodeShard(id, code, 5, 2)]);
    expect(
      await eventually(
        () => codesOf(true),
        (codes) => codes.length === 1,
      ),
    ).toEqual([code]);
    expect(
      await eventually(
        () => codesOf(false),
        (codes) => codes.length === 1,
      ),
    ).toEqual([other]);
    const item = await documents.send(new GetCommand({ TableName: tableName('codes'), Key: { code_key: `${ctx.account.accountId}#${code}` } }));
    expect(item.Item).toMatchObject({ shard_uses: { 0: 1, 5: 2 }, redeemed_key: `${ctx.account.accountId}#${id}#true` });

    await Promise.all([putCodeShard(id, code, 0, 0), putCodeShard(id, code, 5, 0)]);
    expect(
      await eventually(
        () => codesOf(true),
        (codes) => codes.length === 0,
      ),
    ).toEqual([]);
    expect(
      (
        await eventually(
          () => codesOf(false),
          (codes) => codes.length === 2,
        )
      ).sort(),
    ).toEqual([code, other].sort());
  });
});
