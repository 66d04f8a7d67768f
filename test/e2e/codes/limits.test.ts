import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { generatorSettings, settingsOf } from '../../../functions/codes/generator-settings.ts';
import { generatorAt } from '../../../functions/data/code-generators.ts';
import { createdAt, judgedAt } from '../../../functions/data/promotion-shards.ts';
import { writeTogether } from '../../../functions/data/transactions.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { DEFAULT_LIMITS, GENERATOR_FIELDS, winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { generatorRoutes, type GeneratorChange, type GeneratorFields } from '../../support/generator-routes.ts';
import { codeGeneratorsOf, codeItemsOf, eventsOf, posTransactionsOf, promotionShardsOf } from '../../support/records.ts';

/**
 * A code generator's limits (PRODUCT.md "Counting"): max_redemptions_per_code,
 * max_redemptions and max_redemptions_per_customer, on create, PATCH, GET and the lists, with
 * their defaults for a generator written before them; a change of a limit versioned and brought
 * to the promotion's shards as a change of terms is. And the till's transaction.customer_id,
 * which is validated without ever being shown. Every answer is checked against the OpenAPI
 * documents by the client helpers.
 */
const ctx = useLocalApi();

type Fields = GeneratorFields;
type Change = GeneratorChange;

const PER_CODE_RANGE = 'must be between 1 and 1000000';
const BUDGET_RANGE = 'must be between 1 and 100000000';
const BUDGET_FORM = 'must be null or an integer from 1 to 100000000';
const PER_CUSTOMER_RANGE = 'must be between 1 and 1000';
const PER_CUSTOMER_FORM = 'must be null or an integer from 1 to 1000';

const { create, created, createRaw, patch, patchRaw, get, list, stored, eventTypes, snapshot } = generatorRoutes(ctx);

/** A generator as one written before the limits existed: its item without them. */
async function withoutLimits(id: number) {
  await documents.send(
    new UpdateCommand({
      TableName: tableName('codeGenerators'),
      Key: { account_id: ctx.account.accountId, id },
      UpdateExpression: 'REMOVE max_redemptions_per_code, max_redemptions, max_redemptions_per_customer',
    }),
  );
  expect(await stored(id)).not.toHaveProperty('max_redemptions_per_code');
}

describe('POST /v1.0/codegen with limits', () => {
  it('answers the default limits after the terms (single-use codes, no budget, no limit per customer), and stores them', async () => {
    const response = await create();

    expect(response.status, response.text).toBe(201);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toMatchObject({ ...winterPromotion, ...DEFAULT_LIMITS });
    // Stored explicitly, so that a reader of the table (the till's) needs no defaults.
    expect(await stored(body.id)).toMatchObject(DEFAULT_LIMITS);
    expect((await get(body.id)).json).toEqual({ code_generator: body });
  });

  it.each<[string, Partial<Fields>]>([
    ['a code for many, at its largest', { max_redemptions_per_code: 1_000_000 }],
    ['a code for two', { max_redemptions_per_code: 2 }],
    ['a budget of one use', { max_redemptions: 1 }],
    ['the largest budget', { max_redemptions: 100_000_000 }],
    ['one use per customer', { max_redemptions_per_customer: 1 }],
    ['the most uses per customer', { max_redemptions_per_customer: 1000 }],
    ['every limit at once', { max_redemptions_per_code: 500_000, max_redemptions: 20_000, max_redemptions_per_customer: 3 }],
    ['every limit as its default, sent', { max_redemptions_per_code: 1, max_redemptions: null, max_redemptions_per_customer: null }],
  ])('creates a generator with %s: answered, read back and listed as sent', async (_, limits) => {
    const response = await create({ discount: { type: 'percent', percent_off: 10 }, ...limits });

    expect(response.status, response.text).toBe(201);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toEqual({
      ...winterPromotion,
      discount: { type: 'percent', percent_off: 10 },
      minimum_basket: null,
      valid_from: null,
      valid_until: null,
      site_ids: null,
      ...DEFAULT_LIMITS,
      ...limits,
      id: body.id,
      account_id: ctx.account.accountId,
      created_at: body.created_at,
      updated_at: body.updated_at,
      times_redeemed: 0,
    });
    expect((await get(body.id)).json).toEqual({ code_generator: body });
    expect(await stored(body.id)).toMatchObject({ ...DEFAULT_LIMITS, ...limits });
  });

  describe('422 naming the field, and writing nothing', () => {
    it.each<[string, Record<string, unknown>, string, string]>([
      ['a code for nobody', { max_redemptions_per_code: 0 }, 'max_redemptions_per_code', PER_CODE_RANGE],
      ['a negative maximum per code', { max_redemptions_per_code: -1 }, 'max_redemptions_per_code', PER_CODE_RANGE],
      ['a maximum per code over a million', { max_redemptions_per_code: 1_000_001 }, 'max_redemptions_per_code', PER_CODE_RANGE],
      ['a maximum per code with decimals', { max_redemptions_per_code: 2.5 }, 'max_redemptions_per_code', 'must be an integer'],
      ['a maximum per code as text', { max_redemptions_per_code: '5' }, 'max_redemptions_per_code', 'must be an integer'],
      ['a null maximum per code (it always has one)', { max_redemptions_per_code: null }, 'max_redemptions_per_code', 'must be an integer'],
      ['a maximum per code of true', { max_redemptions_per_code: true }, 'max_redemptions_per_code', 'must be an integer'],
      ['a budget of 0', { max_redemptions: 0 }, 'max_redemptions', BUDGET_RANGE],
      ['a negative budget', { max_redemptions: -5 }, 'max_redemptions', BUDGET_RANGE],
      ['a budget over 100 million', { max_redemptions: 100_000_001 }, 'max_redemptions', BUDGET_RANGE],
      ['a budget with decimals', { max_redemptions: 1.5 }, 'max_redemptions', BUDGET_FORM],
      ['a budget as text', { max_redemptions: '1000' }, 'max_redemptions', BUDGET_FORM],
      ['a budget of false', { max_redemptions: false }, 'max_redemptions', BUDGET_FORM],
      ['a budget that is an object', { max_redemptions: { uses: 10 } }, 'max_redemptions', BUDGET_FORM],
      ['a limit per customer of 0', { max_redemptions_per_customer: 0 }, 'max_redemptions_per_customer', PER_CUSTOMER_RANGE],
      ['a limit per customer over 1000', { max_redemptions_per_customer: 1001 }, 'max_redemptions_per_customer', PER_CUSTOMER_RANGE],
      ['a limit per customer with decimals', { max_redemptions_per_customer: 0.5 }, 'max_redemptions_per_customer', PER_CUSTOMER_FORM],
      ['a limit per customer as text', { max_redemptions_per_customer: 'one' }, 'max_redemptions_per_customer', PER_CUSTOMER_FORM],
      ['a limit per customer in a list', { max_redemptions_per_customer: [1] }, 'max_redemptions_per_customer', PER_CUSTOMER_FORM],
    ])('%s', async (_, fields, field, message) => {
      const response = await createRaw(fields);

      expect(response.status, response.text).toBe(422);
      expect(response.json).toEqual({ errors: [{ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` }] });
      expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
      expect(await eventsOf(ctx.account.accountId)).toEqual([]);
    });

    it('names every problem at once, the limits after the terms in their order', async () => {
      const response = await createRaw({
        max_redemptions_per_customer: 0,
        max_redemptions: 'all',
        max_redemptions_per_code: 0,
        site_ids: [],
        colour: 'red',
      });

      expect(response.status).toBe(422);
      expect(response.json.errors).toEqual(
        [
          ['colour', 'is not a known field'],
          ['site_ids', 'must be null or a list of 1 to 100 distinct site ids, each a string of 1 to 128 characters'],
          ['max_redemptions_per_code', PER_CODE_RANGE],
          ['max_redemptions', BUDGET_FORM],
          ['max_redemptions_per_customer', PER_CUSTOMER_RANGE],
        ].map(([field, message]) => ({ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` })),
      );
    });
  });
});

describe('PATCH /v1.0/codegen/{id} with limits', () => {
  it.each<[string, Partial<Fields>, Change]>([
    ['raises the maximum per code', {}, { max_redemptions_per_code: 10_000 }],
    ['lowers the maximum per code to single use', { max_redemptions_per_code: 50 }, { max_redemptions_per_code: 1 }],
    ['sets a budget', {}, { max_redemptions: 5000 }],
    ['raises a budget', { max_redemptions: 5000 }, { max_redemptions: 7500 }],
    ['lowers a budget', { max_redemptions: 5000 }, { max_redemptions: 1 }],
    ['removes a budget', { max_redemptions: 5000 }, { max_redemptions: null }],
    ['sets a limit per customer', {}, { max_redemptions_per_customer: 2 }],
    ['lowers a limit per customer', { max_redemptions_per_customer: 1000 }, { max_redemptions_per_customer: 1 }],
    ['removes a limit per customer', { max_redemptions_per_customer: 3 }, { max_redemptions_per_customer: null }],
    [
      'every limit at once, with status and a term',
      {},
      { status: 'inactive', valid_until: '2027-01-01T00:00:00Z', max_redemptions_per_code: 3, max_redemptions: 900, max_redemptions_per_customer: 5 },
    ],
  ])('%s: 200 with every field, updated_at advanced, one code_generator.updated event, terms_version bumped', async (_, limits, change) => {
    const generator = await created(limits);

    const response = await patch(generator.id, change);

    expect(response.status, response.text).toBe(200);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    const expected = { ...change, ...(change.valid_until ? { valid_until: '2027-01-01T00:00:00.000Z' } : {}) };
    expect(body).toEqual({ ...generator, ...expected, updated_at: expect.stringMatching(RFC3339_MILLIS_UTC) });
    expect(Date.parse(body.updated_at)).toBeGreaterThan(Date.parse(generator.updated_at));
    expect((await get(generator.id)).json).toEqual({ code_generator: body });
    expect(await stored(generator.id)).toMatchObject({ ...expected, terms_version: 2 });
    expect(await eventTypes()).toEqual(['code_generator.created', 'code_generator.updated']);
  });

  it('leaves the limits as they are when a PATCH does not send them', async () => {
    const limits = { max_redemptions_per_code: 40, max_redemptions: 400, max_redemptions_per_customer: 4 };
    const generator = await created(limits);

    const response = await patch(generator.id, { description: 'Winter promotion, second week', discount: { type: 'percent', percent_off: 5 } });

    expect(response.status, response.text).toBe(200);
    expect(response.json.code_generator).toMatchObject(limits);
    expect(await stored(generator.id)).toMatchObject(limits);
  });

  it('answers 200 and writes nothing for limits equal to the stored ones', async () => {
    const generator = await created({ max_redemptions_per_code: 25, max_redemptions: 1000 });
    const read = await get(generator.id);
    const before = await snapshot(generator.id);

    const response = await patch(generator.id, { max_redemptions_per_code: 25, max_redemptions: 1000, max_redemptions_per_customer: null });

    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({ code_generator: generator });
    expect(response.headers.get('etag')).toBe(read.headers.get('etag'));
    expect(await snapshot(generator.id)).toEqual(before);
    expect(await eventTypes()).toEqual(['code_generator.created']);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a maximum per code of 0', { max_redemptions_per_code: 0 }, 'max_redemptions_per_code', PER_CODE_RANGE],
    ['a maximum per code over a million', { max_redemptions_per_code: 1_000_001 }, 'max_redemptions_per_code', PER_CODE_RANGE],
    ['a null maximum per code', { max_redemptions_per_code: null }, 'max_redemptions_per_code', 'must be an integer'],
    ['a budget over 100 million', { max_redemptions: 100_000_001 }, 'max_redemptions', BUDGET_RANGE],
    ['a budget as text', { max_redemptions: '5' }, 'max_redemptions', BUDGET_FORM],
    ['a limit per customer of 0', { max_redemptions_per_customer: 0 }, 'max_redemptions_per_customer', PER_CUSTOMER_RANGE],
    ['a limit per customer with decimals', { max_redemptions_per_customer: 1.5 }, 'max_redemptions_per_customer', PER_CUSTOMER_FORM],
  ])('422 for %s, naming the field and changing nothing', async (_, fields, field, message) => {
    const generator = await created({ max_redemptions: 10 });
    const before = await snapshot(generator.id);

    const response = await patchRaw(generator.id, fields);

    expect(response.status, response.text).toBe(422);
    expect(response.json).toEqual({ errors: [{ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` }] });
    expect(await snapshot(generator.id)).toEqual(before);
  });

  /** What the first redemption through a shard writes (data/promotion-shards.ts): the shard, and the generator at that version. */
  const createShard = (generatorId: number, shard: number, version: number) =>
    writeTogether([createdAt(ctx.account.accountId, generatorId, shard, version), generatorAt(ctx.account.accountId, generatorId, version)]);

  it('versions a change of a limit as a change of terms: every existing shard brought to it before the 200, so a redemption judged by the old limits fails', async () => {
    const generator = await created({ max_redemptions: 100 });
    for (const shard of [2, 40]) expect((await createShard(generator.id, shard, 1)).outcome).toBe('written');

    const response = await patch(generator.id, { max_redemptions: 50 });

    expect(response.status, response.text).toBe(200);
    const shards = await promotionShardsOf(ctx.account.accountId, generator.id);
    expect(shards.map((shard) => shard.shard_number).sort((a, b) => a - b)).toEqual([2, 40]);
    expect(new Set(shards.map((shard) => shard.terms_version))).toEqual(new Set([2]));
    expect(await stored(generator.id)).toMatchObject({ max_redemptions: 50, terms_version: 2, shards_version: 2 });
    const stale = await writeTogether([judgedAt(ctx.account.accountId, generator.id, 2, 1)]);
    expect(stale.outcome).toBe('condition-failed');
    expect((await writeTogether([judgedAt(ctx.account.accountId, generator.id, 2, 2)])).outcome).toBe('written');
    // The till reads the limits with the version they belong to.
    expect(await generatorSettings(ctx.account.accountId, generator.id, 0)).toMatchObject({ max_redemptions: 50, terms_version: 2 });
  });

  it('says the limits can change when a field cannot', async () => {
    const generator = await created();
    const response = await patchRaw(generator.id, { code_length: 10 });
    expect(response.status).toBe(422);
    expect(response.json.errors).toEqual([
      {
        message:
          'code_generator.code_length cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
        field: 'code_generator.code_length',
      },
    ]);
  });
});

describe('reads show the limits', () => {
  it('lists each generator with its limits, in the order of the answers, also by store', async () => {
    const plain = await created();
    const flyer = await created({ max_redemptions_per_code: 1_000_000, max_redemptions: 250_000, max_redemptions_per_customer: 1 });

    const page = await list();
    // Through the by_store index, which projects the limits.
    const ofStore = await list(winterPromotion.store_id);

    expect(page.status).toBe(200);
    expect(page.json).toEqual({ code_generators: [plain, flyer], next_cursor: null });
    expect(ofStore.json).toEqual(page.json);
    expect(page.json.code_generators.map((generator: object) => Object.keys(generator))).toEqual([GENERATOR_FIELDS, GENERATOR_FIELDS]);
  });

  it('gives a generator written before the limits their defaults: on GET, in both lists, to the till, and after a PATCH of another field', async () => {
    const generator = await created();
    await withoutLimits(generator.id);

    const one = await get(generator.id);
    const page = await list();
    const ofStore = await list(winterPromotion.store_id);
    const settings = await generatorSettings(ctx.account.accountId, generator.id, 0);
    const fresh = (await settingsOf(ctx.account.accountId, [generator.id], true)).get(generator.id);
    const changed = await patch(generator.id, { description: 'Written before the limits' });

    expect(one.json).toEqual({ code_generator: generator });
    expect(page.json.code_generators).toEqual([generator]);
    expect(ofStore.json.code_generators).toEqual([generator]);
    expect(settings).toMatchObject({ ...DEFAULT_LIMITS, terms_version: 1 });
    expect(fresh).toMatchObject(DEFAULT_LIMITS);
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.code_generator).toMatchObject({ ...DEFAULT_LIMITS, description: 'Written before the limits' });
  });

  it('changes a limit of a generator written before the limits', async () => {
    const generator = await created();
    await withoutLimits(generator.id);

    const response = await patch(generator.id, { max_redemptions_per_customer: 2 });

    expect(response.status, response.text).toBe(200);
    expect(response.json.code_generator).toEqual({ ...generator, max_redemptions_per_customer: 2, updated_at: response.json.code_generator.updated_at });
    expect(await stored(generator.id)).toMatchObject({ ...DEFAULT_LIMITS, max_redemptions_per_customer: 2, terms_version: 2 });
  });
});

describe("the till's customer on the pos host (transaction.customer_id)", () => {
  const sale = { site_id: 'S-0042', pos_transaction_id: 'T-88' };
  const post = (path: '/v2.0/redeemed_codes' | '/v2.0/validated_codes', transaction: Record<string, unknown>) =>
    call(ctx.api, 'pos', 'POST', path, { token: ctx.account.token, body: { transaction } });
  async function issuedCodes(count = 1) {
    const generator = await created();
    const issued = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generator.id } }, body: { count } }),
    );
    return issued.json.codes as string[];
  }

  it('is optional: a string of 1 or 128 characters, or null (no customer), and is never returned', async () => {
    const codes = await issuedCodes(2);
    const card = 'CARD-7731-0042-SECRET';

    const checks = await Promise.all(
      [card, 'C', 'c'.repeat(128), null].map((customer) => post('/v2.0/validated_codes', { ...sale, codes, customer_id: customer })),
    );
    const redeemed = await post('/v2.0/redeemed_codes', { ...sale, codes, customer_id: card });

    expect(checks.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    expect(redeemed.status, redeemed.text).toBe(200);
    for (const response of [...checks, redeemed]) expect(response.text).not.toContain('SECRET');
    // Nor stored as sent.
    const records = JSON.stringify([
      await posTransactionsOf(ctx.account.accountId),
      await codeItemsOf(ctx.account.accountId),
      await eventsOf(ctx.account.accountId),
    ]);
    expect(records).not.toContain(card);
  });

  it.each<[string, unknown, string]>([
    ['an empty string', '', 'transaction.customer_id must not be empty'],
    ['129 characters', `SECRET-${'x'.repeat(122)}`, 'transaction.customer_id must be at most 128 characters'],
    ['a number', 4_417_004_212, 'transaction.customer_id must be a string'],
    ['true', true, 'transaction.customer_id must be a string'],
    ['an object', { card: 'SECRET-CARD' }, 'transaction.customer_id must be a string'],
    ['a list', ['SECRET-CARD'], 'transaction.customer_id must be a string'],
  ])('422 for %s, naming the field without showing the value (pos errors carry a message only)', async (_, customer, message) => {
    for (const path of ['/v2.0/redeemed_codes', '/v2.0/validated_codes'] as const) {
      const response = await post(path, { ...sale, codes: ['WIN-AAAAAAAA'], customer_id: customer });

      expect(response.status, path).toBe(422);
      expect(response.json.transaction.errors).toEqual([{ message }]);
      expect(response.json.transaction.display_messages).toHaveLength(1);
      expect(response.json.transaction.display_messages[0]).toMatchObject({ message_id: 'validation_failed', priority: 1 });
      expect(response.text).not.toContain('SECRET');
      expect(response.text).not.toContain('4417004212');
    }
    expect(await posTransactionsOf(ctx.account.accountId)).toEqual([]);
  });
});
