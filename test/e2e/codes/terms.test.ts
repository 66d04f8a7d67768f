import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { generatorAt } from '../../../functions/data/code-generators.ts';
import { createdAt, judgedAt, SHARD_COUNT, shardOf } from '../../../functions/data/promotion-shards.ts';
import { writeTogether } from '../../../functions/data/transactions.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { DEFAULT_LIMITS, GENERATOR_FIELDS, winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { generatorRoutes, type GeneratorChange, type GeneratorFields } from '../../support/generator-routes.ts';
import { codeGeneratorsOf, eventsOf, promotionShardsOf } from '../../support/records.ts';

/**
 * A code generator's promotion terms (PRODUCT.md "Promotion terms"): discount, minimum_basket,
 * valid_from, valid_until and site_ids, on create, PATCH, GET and the list; and a change reaching
 * every shard of the promotion before its 200. Every answer is checked against the OpenAPI
 * documents by the client helpers.
 */
const ctx = useLocalApi();

type Fields = GeneratorFields;
type Change = GeneratorChange;

const DEFAULTS = { discount: { type: 'none' }, minimum_basket: null, valid_from: null, valid_until: null, site_ids: null };
const SITES_MESSAGE = 'must be null or a list of 1 to 100 distinct site ids, each a string of 1 to 128 characters';
const RANGE = 'must be between 1 and 1000000000000';
const FORM = 'must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z';
const unknownCurrency = (code: string) => `must be a currency code ISO 4217 lists with a minor unit: ${code} is not one`;

const { create, created, createRaw, patch, patchRaw, get, list, stored, eventTypes, snapshot } = generatorRoutes(ctx);

describe('POST /v1.0/codegen with promotion terms', () => {
  it("answers the seed's seven fields with the default terms after the eleven, and stores them", async () => {
    const response = await create();

    expect(response.status, response.text).toBe(201);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toMatchObject({ ...winterPromotion, ...DEFAULTS, account_id: ctx.account.accountId });
    // Stored explicitly, so that a reader of the table needs no defaults; the versions are internal.
    const item = await stored(body.id);
    expect(item).toMatchObject(DEFAULTS);
    expect(Object.keys(item)).toEqual(expect.arrayContaining(Object.keys(DEFAULTS)));
    expect(item).not.toHaveProperty('terms_version');
    expect((await get(body.id)).json).toEqual({ code_generator: body });
  });

  it.each<[string, Partial<Fields>, Record<string, unknown>]>([
    ['a percentage', { discount: { type: 'percent', percent_off: 12.5 } }, { discount: { type: 'percent', percent_off: 12.5 } }],
    ['a percentage of two decimals', { discount: { type: 'percent', percent_off: 0.29 } }, { discount: { type: 'percent', percent_off: 0.29 } }],
    ['all of it', { discount: { type: 'percent', percent_off: 100 } }, { discount: { type: 'percent', percent_off: 100 } }],
    [
      'a capped percentage, keys in another order',
      { discount: { currency: 'EUR', max_amount_off: 500, type: 'percent', percent_off: 33.33 } },
      { discount: { type: 'percent', percent_off: 33.33, max_amount_off: 500, currency: 'EUR' } },
    ],
    [
      'an amount in yen',
      { discount: { type: 'amount', amount_off: 300, currency: 'JPY' } },
      { discount: { type: 'amount', amount_off: 300, currency: 'JPY' } },
    ],
    [
      'the largest amount, in a currency of four decimals',
      { discount: { type: 'amount', amount_off: 10 ** 12, currency: 'CLF' } },
      { discount: { type: 'amount', amount_off: 10 ** 12, currency: 'CLF' } },
    ],
    [
      'a minimum basket in the discount currency',
      { discount: { type: 'amount', amount_off: 250, currency: 'EUR' }, minimum_basket: { amount: 2000, currency: 'EUR' } },
      { discount: { type: 'amount', amount_off: 250, currency: 'EUR' }, minimum_basket: { amount: 2000, currency: 'EUR' } },
    ],
    [
      'a minimum basket beside an uncapped percentage (no currency of its own)',
      { discount: { type: 'percent', percent_off: 5 }, minimum_basket: { currency: 'BHD', amount: 10_500 } },
      { discount: { type: 'percent', percent_off: 5 }, minimum_basket: { amount: 10_500, currency: 'BHD' } },
    ],
    ['a minimum basket and no discount', { minimum_basket: { amount: 1, currency: 'USD' } }, { minimum_basket: { amount: 1, currency: 'USD' } }],
    [
      'bounds with offsets, read back in UTC with milliseconds',
      { valid_from: '2026-12-01T10:00:00+01:00', valid_until: '2027-01-06T23:59:59.5-05:00' },
      { valid_from: '2026-12-01T09:00:00.000Z', valid_until: '2027-01-07T04:59:59.500Z' },
    ],
    [
      'a lower-case date-time with nine decimals',
      { valid_from: '2026-12-24t18:30:00.123456789z' },
      { valid_from: '2026-12-24T18:30:00.123Z', valid_until: null },
    ],
    ['a valid_until in the past (it ends the promotion)', { valid_until: '2020-01-01T00:00:00Z' }, { valid_until: '2020-01-01T00:00:00.000Z' }],
    ['sites compared exactly', { site_ids: ['S-0042', 's-0042', 'S-0042 '] }, { site_ids: ['S-0042', 's-0042', 'S-0042 '] }],
    ['every term null, as the defaults', { minimum_basket: null, valid_from: null, valid_until: null, site_ids: null }, DEFAULTS],
  ])('creates a generator with %s', async (_, fields, terms) => {
    const response = await create(fields);

    expect(response.status, response.text).toBe(201);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toEqual({
      ...winterPromotion,
      ...DEFAULTS,
      ...terms,
      ...DEFAULT_LIMITS,
      id: body.id,
      account_id: ctx.account.accountId,
      created_at: body.created_at,
      updated_at: body.updated_at,
      times_redeemed: 0,
    });
    for (const key of ['discount', 'minimum_basket'] as const) if (body[key]) expect(Object.keys(body[key])).toEqual(Object.keys(terms[key] ?? DEFAULTS[key]!));
    expect((await get(body.id)).json).toEqual({ code_generator: body });
    expect(await stored(body.id)).toMatchObject({ ...DEFAULTS, ...terms });
  });

  it('takes 100 site ids of 128 characters within the 16 KiB body limit', async () => {
    const sites = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}${'s'.repeat(125)}`);
    const body = await created({ site_ids: sites });
    expect(body.site_ids).toEqual(sites);
  });

  describe('422 naming the field, and writing nothing', () => {
    const percent = (fields: Record<string, unknown>) => ({ discount: { type: 'percent', ...fields } });
    const amount = (fields: Record<string, unknown>) => ({ discount: { type: 'amount', amount_off: 100, currency: 'EUR', ...fields } });
    it.each<[string, Record<string, unknown>, string, string]>([
      ['a discount that is not an object', { discount: 'none' }, 'discount', 'must be an object'],
      ['a null discount', { discount: null }, 'discount', 'must be an object'],
      ['a discount without a type', { discount: { percent_off: 10 } }, 'discount.type', 'is required'],
      ['an unknown type', { discount: { type: 'free' } }, 'discount.type', 'must be one of "none", "percent", "amount"'],
      ['a type that is not a string', { discount: { type: 1 } }, 'discount.type', 'must be one of "none", "percent", "amount"'],
      ['a key the type none does not use', { discount: { type: 'none', percent_off: 10 } }, 'discount.percent_off', 'is not used by a discount of type "none"'],
      ['a percentage without percent_off', percent({}), 'discount.percent_off', 'is required'],
      ['a percentage of 0', percent({ percent_off: 0 }), 'discount.percent_off', 'must be greater than 0 and at most 100'],
      ['a negative percentage', percent({ percent_off: -5 }), 'discount.percent_off', 'must be greater than 0 and at most 100'],
      ['a percentage over 100', percent({ percent_off: 100.01 }), 'discount.percent_off', 'must be greater than 0 and at most 100'],
      ['a percentage as text', percent({ percent_off: '10' }), 'discount.percent_off', 'must be a number'],
      ['a percentage with three decimals', percent({ percent_off: 12.345 }), 'discount.percent_off', 'must have at most two decimals'],
      ['max_amount_off without currency', percent({ percent_off: 10, max_amount_off: 500 }), 'discount.currency', 'is required when max_amount_off is given'],
      ['currency without max_amount_off', percent({ percent_off: 10, currency: 'EUR' }), 'discount.max_amount_off', 'is required when currency is given'],
      [
        'a null max_amount_off (absent, not null)',
        percent({ percent_off: 10, max_amount_off: null, currency: 'EUR' }),
        'discount.max_amount_off',
        'must be an integer',
      ],
      ['a cap of 0', percent({ percent_off: 10, max_amount_off: 0, currency: 'EUR' }), 'discount.max_amount_off', RANGE],
      [
        'a key the type percent does not use',
        percent({ percent_off: 10, amount_off: 100 }),
        'discount.amount_off',
        'is not used by a discount of type "percent"',
      ],
      ['an amount without currency', { discount: { type: 'amount', amount_off: 100 } }, 'discount.currency', 'is required'],
      ['an amount without amount_off', { discount: { type: 'amount', currency: 'EUR' } }, 'discount.amount_off', 'is required'],
      ['an amount over 10^12', amount({ amount_off: 10 ** 12 + 1 }), 'discount.amount_off', RANGE],
      ['an amount of 0', amount({ amount_off: 0 }), 'discount.amount_off', RANGE],
      ['an amount with decimals', amount({ amount_off: 2.5 }), 'discount.amount_off', 'must be an integer'],
      ['a key the type amount does not use', amount({ percent_off: 10 }), 'discount.percent_off', 'is not used by a discount of type "amount"'],
      ['a lower-case currency', amount({ currency: 'eur' }), 'discount.currency', 'must be an ISO 4217 currency code: three uppercase letters, such as EUR'],
      [
        'a currency of four letters',
        amount({ currency: 'EURO' }),
        'discount.currency',
        'must be an ISO 4217 currency code: three uppercase letters, such as EUR',
      ],
      ['a currency ISO 4217 does not list', amount({ currency: 'XYZ' }), 'discount.currency', unknownCurrency('XYZ')],
      ['a code ISO 4217 lists without a minor unit', amount({ currency: 'XAU' }), 'discount.currency', unknownCurrency('XAU')],
      ['a withdrawn currency', percent({ percent_off: 10, max_amount_off: 500, currency: 'DEM' }), 'discount.currency', unknownCurrency('DEM')],
      ['a minimum basket that is not an object', { minimum_basket: 5000 }, 'minimum_basket', 'must be null or an object with amount and currency'],
      ['a minimum basket of 0', { minimum_basket: { amount: 0, currency: 'EUR' } }, 'minimum_basket.amount', RANGE],
      ['a minimum basket of text', { minimum_basket: { amount: '10', currency: 'EUR' } }, 'minimum_basket.amount', 'must be an integer'],
      ['a minimum basket without currency', { minimum_basket: { amount: 100 } }, 'minimum_basket.currency', 'is required'],
      ['a minimum basket in an unknown currency', { minimum_basket: { amount: 100, currency: 'ABC' } }, 'minimum_basket.currency', unknownCurrency('ABC')],
      [
        'a minimum basket with another key',
        { minimum_basket: { amount: 100, currency: 'EUR', note: 'x' } },
        'minimum_basket.note',
        'is not a field of an amount of money',
      ],
      [
        'a minimum basket in another currency than the discount',
        { ...amount({}), minimum_basket: { amount: 100, currency: 'USD' } },
        'minimum_basket.currency',
        'must be EUR, the currency of the discount',
      ],
      [
        "a minimum basket in another currency than a percentage's cap",
        { ...percent({ percent_off: 10, max_amount_off: 500, currency: 'JPY' }), minimum_basket: { amount: 100, currency: 'EUR' } },
        'minimum_basket.currency',
        'must be JPY, the currency of the discount',
      ],
      ['a valid_from of free text', { valid_from: 'tomorrow' }, 'valid_from', FORM],
      ['a valid_from without an offset', { valid_from: '2026-12-01T10:00:00' }, 'valid_from', FORM],
      ['a valid_from without seconds', { valid_from: '2026-12-01T10:00Z' }, 'valid_from', FORM],
      ['a valid_from of a number', { valid_from: 5 }, 'valid_from', `must be null or an RFC 3339 date-time such as 2026-11-21T14:03:00Z`],
      [
        'a valid_until that does not exist',
        { valid_until: '2026-02-30T00:00:00Z' },
        'valid_until',
        'must be a date-time that exists: 2026-02-30T00:00:00Z is not a real day and time of day (hours 00-23, minutes 00-59, offset at most ±23:59)',
      ],
      [
        'a leap second',
        { valid_until: '2026-12-31T23:59:60Z' },
        'valid_until',
        'must be a moment from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, and not a leap second: it is stored in UTC with milliseconds',
      ],
      [
        'a moment past 9999 in UTC',
        { valid_until: '9999-12-31T23:00:00-02:00' },
        'valid_until',
        'must be a moment from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, and not a leap second: it is stored in UTC with milliseconds',
      ],
      [
        'valid_from equal to valid_until',
        { valid_from: '2026-12-01T09:00:00Z', valid_until: '2026-12-01T09:00:00.000Z' },
        'valid_until',
        'must be later than valid_from (2026-12-01T09:00:00.000Z)',
      ],
      [
        'valid_from equal to valid_until in another offset',
        { valid_from: '2026-12-01T10:00:00+01:00', valid_until: '2026-12-01T09:00:00Z' },
        'valid_until',
        'must be later than valid_from (2026-12-01T09:00:00.000Z)',
      ],
      [
        'valid_from after valid_until',
        { valid_from: '2027-01-01T00:00:00Z', valid_until: '2026-12-01T00:00:00Z' },
        'valid_until',
        'must be later than valid_from (2027-01-01T00:00:00.000Z)',
      ],
      ['an empty list of sites', { site_ids: [] }, 'site_ids', SITES_MESSAGE],
      ['a site listed twice', { site_ids: ['S-1', 'S-2', 'S-1'] }, 'site_ids', SITES_MESSAGE],
      ['101 sites', { site_ids: Array.from({ length: 101 }, (_, i) => `S-${i}`) }, 'site_ids', SITES_MESSAGE],
      ['a site id of 129 characters', { site_ids: ['S'.repeat(129)] }, 'site_ids', SITES_MESSAGE],
      ['an empty site id', { site_ids: [''] }, 'site_ids', SITES_MESSAGE],
      ['a site id that is a number', { site_ids: [42] }, 'site_ids', SITES_MESSAGE],
      ['one site, not in a list', { site_ids: 'S-1' }, 'site_ids', SITES_MESSAGE],
    ])('%s', async (_, fields, field, message) => {
      const response = await createRaw(fields);

      expect(response.status, response.text).toBe(422);
      expect(response.json).toEqual({ errors: [{ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` }] });
      expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
      expect(await eventsOf(ctx.account.accountId)).toEqual([]);
    });

    it('names every problem at once: unknown keys first, then the fields in their order, a term with the field that holds it', async () => {
      const response = await createRaw({
        site_ids: [],
        valid_until: '2026-12-01T00:00:00Z',
        valid_from: '2026-12-02T00:00:00Z',
        minimum_basket: { amount: 100, currency: 'USD' },
        discount: { type: 'amount', amount_off: 0, currency: 'QQQ', colour: 'red' },
        colour: 'red',
        code_length: 3,
      });

      expect(response.status).toBe(422);
      expect(response.json.errors).toEqual(
        [
          ['colour', 'is not a known field'],
          ['code_length', 'must be between 4 and 32'],
          ['discount.colour', 'is not used by a discount of type "amount"'],
          ['discount.amount_off', RANGE],
          ['discount.currency', unknownCurrency('QQQ')],
          // A refused discount is not compared with the minimum basket.
          ['valid_until', 'must be later than valid_from (2026-12-02T00:00:00.000Z)'],
          ['site_ids', SITES_MESSAGE],
        ].map(([field, message]) => ({ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` })),
      );
    });
  });
});

describe('PATCH /v1.0/codegen/{id} with promotion terms', () => {
  it.each<[string, Change, Record<string, unknown>]>([
    ['a discount', { discount: { type: 'amount', amount_off: 500, currency: 'EUR' } }, { discount: { type: 'amount', amount_off: 500, currency: 'EUR' } }],
    ['a minimum basket', { minimum_basket: { amount: 1500, currency: 'EUR' } }, { minimum_basket: { amount: 1500, currency: 'EUR' } }],
    ['valid_from, in UTC', { valid_from: '2026-12-01T08:00:00-02:00' }, { valid_from: '2026-12-01T10:00:00.000Z' }],
    ['valid_until, in UTC', { valid_until: '2027-01-01T00:00:00+01:00' }, { valid_until: '2026-12-31T23:00:00.000Z' }],
    ['the sites', { site_ids: ['S-7', 'S-9'] }, { site_ids: ['S-7', 'S-9'] }],
    [
      'every term at once, with status',
      {
        status: 'inactive',
        discount: { type: 'percent', percent_off: 15, max_amount_off: 1000, currency: 'SEK' },
        minimum_basket: { amount: 20_000, currency: 'SEK' },
        valid_from: '2026-12-01T00:00:00Z',
        valid_until: '2026-12-24T00:00:00Z',
        site_ids: ['S-1'],
      },
      {
        status: 'inactive',
        discount: { type: 'percent', percent_off: 15, max_amount_off: 1000, currency: 'SEK' },
        minimum_basket: { amount: 20_000, currency: 'SEK' },
        valid_from: '2026-12-01T00:00:00.000Z',
        valid_until: '2026-12-24T00:00:00.000Z',
        site_ids: ['S-1'],
      },
    ],
  ])('changes %s: 200 with every field, updated_at advanced, one code_generator.updated event', async (_, change, expected) => {
    const generator = await created();

    const response = await patch(generator.id, change);

    expect(response.status, response.text).toBe(200);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toEqual({ ...generator, ...expected, updated_at: expect.stringMatching(RFC3339_MILLIS_UTC) });
    expect(Date.parse(body.updated_at)).toBeGreaterThan(Date.parse(generator.updated_at));
    expect((await get(generator.id)).json).toEqual({ code_generator: body });
    expect(await stored(generator.id)).toMatchObject({ ...expected, terms_version: 2 });
    expect(await eventTypes()).toEqual(['code_generator.created', 'code_generator.updated']);
  });

  it('puts the defaults back: null terms and a discount of type none', async () => {
    const generator = await created({
      discount: { type: 'amount', amount_off: 100, currency: 'EUR' },
      minimum_basket: { amount: 1000, currency: 'EUR' },
      valid_from: '2026-12-01T00:00:00Z',
      valid_until: '2026-12-24T00:00:00Z',
      site_ids: ['S-1'],
    });

    const response = await patch(generator.id, { discount: { type: 'none' }, minimum_basket: null, valid_from: null, valid_until: null, site_ids: null });

    expect(response.status, response.text).toBe(200);
    expect(response.json.code_generator).toMatchObject(DEFAULTS);
    expect(await stored(generator.id)).toMatchObject(DEFAULTS);
  });

  describe('judges a PATCH together with the stored terms: 422 naming the field, changing nothing', () => {
    it.each<[string, Partial<Fields>, Change, string, string]>([
      [
        'a valid_until before the stored valid_from',
        { valid_from: '2026-12-01T00:00:00Z' },
        { valid_until: '2026-11-30T00:00:00Z' },
        'valid_until',
        'must be later than valid_from (2026-12-01T00:00:00.000Z)',
      ],
      [
        'a valid_until equal to the stored valid_from, in another offset',
        { valid_from: '2026-12-01T00:00:00Z' },
        { valid_until: '2026-12-01T01:00:00+01:00' },
        'valid_until',
        'must be later than valid_from (2026-12-01T00:00:00.000Z)',
      ],
      [
        'a valid_from after the stored valid_until (named as valid_until)',
        { valid_until: '2026-12-24T00:00:00Z' },
        { valid_from: '2026-12-25T00:00:00Z' },
        'valid_until',
        'must be later than valid_from (2026-12-25T00:00:00.000Z)',
      ],
      [
        "a minimum basket in another currency than the stored discount's",
        { discount: { type: 'amount', amount_off: 100, currency: 'EUR' } },
        { minimum_basket: { amount: 1000, currency: 'USD' } },
        'minimum_basket.currency',
        'must be EUR, the currency of the discount',
      ],
      [
        "a discount in another currency than the stored minimum basket's",
        { minimum_basket: { amount: 1000, currency: 'EUR' } },
        { discount: { type: 'amount', amount_off: 300, currency: 'JPY' } },
        'minimum_basket.currency',
        'must be JPY, the currency of the discount',
      ],
    ])('%s', async (_, terms, change, field, message) => {
      const generator = await created(terms);
      const before = await snapshot(generator.id);

      const response = await patch(generator.id, change);

      expect(response.status, response.text).toBe(422);
      expect(response.json).toEqual({ errors: [{ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` }] });
      expect(await snapshot(generator.id)).toEqual(before);
    });

    it('accepts what agrees once the change is applied: a new discount currency with a new minimum basket, a bound moved with the other', async () => {
      const generator = await created({
        discount: { type: 'amount', amount_off: 100, currency: 'EUR' },
        minimum_basket: { amount: 1000, currency: 'EUR' },
        valid_from: '2026-12-01T00:00:00Z',
        valid_until: '2026-12-24T00:00:00Z',
      });

      const currencies = await patch(generator.id, {
        discount: { type: 'amount', amount_off: 300, currency: 'JPY' },
        minimum_basket: { amount: 5000, currency: 'JPY' },
      });
      const noCurrency = await patch(generator.id, { discount: { type: 'none' }, minimum_basket: { amount: 50, currency: 'USD' } });
      const later = await patch(generator.id, { valid_from: '2027-01-01T00:00:00Z', valid_until: '2027-02-01T00:00:00Z' });

      expect([currencies.status, noCurrency.status, later.status]).toEqual([200, 200, 200]);
      expect(later.json.code_generator).toMatchObject({
        discount: { type: 'none' },
        minimum_basket: { amount: 50, currency: 'USD' },
        valid_from: '2027-01-01T00:00:00.000Z',
        valid_until: '2027-02-01T00:00:00.000Z',
      });
    });

    it('judges a body at odds with itself before the generator is looked up (422 before 404)', async () => {
      const response = await patchRaw(999_999_999_999, { valid_from: '2026-12-02T00:00:00Z', valid_until: '2026-12-01T00:00:00Z' });
      expect(response.status).toBe(422);
      expect(response.json.errors).toEqual([
        { message: 'code_generator.valid_until must be later than valid_from (2026-12-02T00:00:00.000Z)', field: 'code_generator.valid_until' },
      ]);
    });
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a percentage with three decimals', { discount: { type: 'percent', percent_off: 7.125 } }, 'discount.percent_off', 'must have at most two decimals'],
    ['an unknown currency', { minimum_basket: { amount: 100, currency: 'EUX' } }, 'minimum_basket.currency', unknownCurrency('EUX')],
    ['a site listed twice', { site_ids: ['S-1', 'S-1'] }, 'site_ids', SITES_MESSAGE],
    ['a discount of null', { discount: null }, 'discount', 'must be an object'],
  ])('422 for %s, naming the field and changing nothing', async (_, fields, field, message) => {
    const generator = await created();
    const before = await snapshot(generator.id);

    const response = await patchRaw(generator.id, fields);

    expect(response.status).toBe(422);
    expect(response.json).toEqual({ errors: [{ message: `code_generator.${field} ${message}`, field: `code_generator.${field}` }] });
    expect(await snapshot(generator.id)).toEqual(before);
  });

  it('says which fields can change when one cannot', async () => {
    const generator = await created();
    const response = await patchRaw(generator.id, { prefix: 'SUM-' });
    expect(response.status).toBe(422);
    expect(response.json.errors).toEqual([
      {
        message:
          'code_generator.prefix cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
        field: 'code_generator.prefix',
      },
    ]);
  });

  it('answers 200 and writes nothing for terms equal to the stored ones: keys in another order, a moment in another offset', async () => {
    const generator = await created({
      discount: { type: 'percent', percent_off: 20, max_amount_off: 900, currency: 'EUR' },
      minimum_basket: { amount: 3000, currency: 'EUR' },
      valid_from: '2026-12-01T09:00:00Z',
      site_ids: ['S-1', 'S-2'],
    });
    const read = await get(generator.id);
    const before = await snapshot(generator.id);

    const response = await patch(generator.id, {
      discount: { currency: 'EUR', max_amount_off: 900, percent_off: 20, type: 'percent' },
      minimum_basket: { currency: 'EUR', amount: 3000 },
      valid_from: '2026-12-01T10:00:00.000+01:00',
      valid_until: null,
      site_ids: ['S-1', 'S-2'],
    });

    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({ code_generator: generator });
    expect(response.headers.get('etag')).toBe(read.headers.get('etag'));
    expect(await snapshot(generator.id)).toEqual(before);
    expect(await eventTypes()).toEqual(['code_generator.created']);
  });

  it('counts a list of sites in another order as a change', async () => {
    const generator = await created({ site_ids: ['S-1', 'S-2'] });
    const response = await patch(generator.id, { site_ids: ['S-2', 'S-1'] });
    expect(response.json.code_generator.site_ids).toEqual(['S-2', 'S-1']);
    expect(await eventTypes()).toEqual(['code_generator.created', 'code_generator.updated']);
  });

  /** What the first redemption through a shard writes (data/promotion-shards.ts): the shard, and the generator at that version. */
  const createShard = (generatorId: number, shard: number, version: number) =>
    writeTogether([createdAt(ctx.account.accountId, generatorId, shard, version), generatorAt(ctx.account.accountId, generatorId, version)]);

  it('bumps terms_version with every change and brings every existing shard of the promotion to it before answering', async () => {
    const generator = await created();
    // A generator never changed and never redeemed has no shards; redemptions create them one by one.
    expect(await promotionShardsOf(ctx.account.accountId, generator.id)).toEqual([]);
    const made = [0, 7, SHARD_COUNT - 1];
    for (const shard of made) expect((await createShard(generator.id, shard, 1)).outcome).toBe('written');

    await patch(generator.id, { discount: { type: 'percent', percent_off: 10 } });
    const afterTerms = await promotionShardsOf(ctx.account.accountId, generator.id);
    await patch(generator.id, { status: 'inactive' });
    const afterStatus = await promotionShardsOf(ctx.account.accountId, generator.id);

    for (const [shards, version] of [
      [afterTerms, 2],
      [afterStatus, 3],
    ] as const) {
      expect(shards.map((shard) => shard.shard_number).sort((a, b) => a - b)).toEqual(made);
      expect(new Set(shards.map((shard) => shard.terms_version))).toEqual(new Set([version]));
      expect(shards.every((shard) => shard.account_id === ctx.account.accountId && shard.code_generator_id === generator.id)).toBe(true);
    }
    expect(await stored(generator.id)).toMatchObject({ terms_version: 3, shards_version: 3 });
    // The versions are internal: no answer shows them.
    expect(Object.keys((await get(generator.id)).json.code_generator)).toEqual(GENERATOR_FIELDS);
  });

  it("takes effect at once: after the 200, a redemption's transaction that judged by the earlier terms fails, on a shard that exists or one it would create", async () => {
    const generator = await created();
    const shard = shardOf('S-0042/T-1', generator.id);
    const other = (shard + 1) % SHARD_COUNT;
    // What redemptions write inside their transactions, judged at version 1, before any change.
    expect((await createShard(generator.id, shard, 1)).outcome).toBe('written');
    expect((await writeTogether([judgedAt(ctx.account.accountId, generator.id, shard, 1)])).outcome).toBe('written');

    const response = await patch(generator.id, { valid_until: '2020-01-01T00:00:00Z' });
    expect(response.status).toBe(200);

    const stale = await writeTogether([judgedAt(ctx.account.accountId, generator.id, shard, 1)]);
    expect(stale.outcome).toBe('condition-failed');
    expect(stale.outcome === 'condition-failed' && stale.failed.get(0)).toMatchObject({ terms_version: 2 });
    expect((await writeTogether([judgedAt(ctx.account.accountId, generator.id, shard, 2)])).outcome).toBe('written');
    // A shard no redemption created yet: judged at 1 it is missing (its condition fails, returning nothing), and created at 1 the generator refuses.
    const missing = await writeTogether([judgedAt(ctx.account.accountId, generator.id, other, 1)]);
    expect(missing.outcome === 'condition-failed' && missing.failed.has(0) && missing.failed.get(0) === undefined).toBe(true);
    const createdStale = await createShard(generator.id, other, 1);
    expect(createdStale.outcome === 'condition-failed' && [...createdStale.failed.keys()]).toEqual([1]);
    expect((await createShard(generator.id, other, 2)).outcome).toBe('written');
  });

  it('finishes a change whose shards were not reached: a PATCH that changes nothing brings them to the version, and writes no event', async () => {
    const generator = await created();
    for (const shard of [3, 4]) expect((await createShard(generator.id, shard, 1)).outcome).toBe('written');
    await patch(generator.id, { description: 'Winter promotion, first week' });
    // As a PATCH that wrote version 3 and stopped before its shards would leave it.
    await documents.send(
      new UpdateCommand({
        TableName: tableName('codeGenerators'),
        Key: { account_id: ctx.account.accountId, id: generator.id },
        UpdateExpression: 'SET terms_version = :three',
        ExpressionAttributeValues: { ':three': 3 },
      }),
    );
    const events = await eventTypes();

    const response = await patch(generator.id, { description: 'Winter promotion, first week' });

    expect(response.status, response.text).toBe(200);
    const shards = await promotionShardsOf(ctx.account.accountId, generator.id);
    expect(shards).toHaveLength(2);
    expect(new Set(shards.map((shard) => shard.terms_version))).toEqual(new Set([3]));
    expect(await stored(generator.id)).toMatchObject({ terms_version: 3, shards_version: 3 });
    expect(await eventTypes()).toEqual(events);
  });
});

describe('GET /v1.0/codegen and GET /v1.0/codegen/{id} show the terms', () => {
  it('lists each generator with its terms, in the order of the answers, also by store', async () => {
    const plain = await created();
    const promotion = await created({
      discount: { type: 'amount', amount_off: 500, currency: 'GBP' },
      minimum_basket: { amount: 2500, currency: 'GBP' },
      valid_from: '2026-12-01T00:00:00+00:00',
      valid_until: '2026-12-31T23:59:59.999Z',
      site_ids: ['S-0042'],
    });

    const page = await list();
    // Through the by_store index, which projects the terms.
    const ofStore = await list(winterPromotion.store_id);
    const one = await get(promotion.id);

    expect(page.status).toBe(200);
    expect(page.json).toEqual({ code_generators: [plain, promotion], next_cursor: null });
    expect(ofStore.json).toEqual(page.json);
    expect(page.json.code_generators.map((generator: object) => Object.keys(generator))).toEqual([GENERATOR_FIELDS, GENERATOR_FIELDS]);
    expect(one.json.code_generator).toEqual(promotion);
    expect(promotion).toMatchObject({ valid_from: '2026-12-01T00:00:00.000Z', valid_until: '2026-12-31T23:59:59.999Z' });
  });
});

describe("the till's basket on the pos host (transaction.basket)", () => {
  const sale = { site_id: 'S-0042', pos_transaction_id: 'T-77' };
  const check = (transaction: Record<string, unknown>) =>
    call(ctx.api, 'pos', 'POST', '/v2.0/validated_codes', { token: ctx.account.token, body: { transaction } });

  it('is optional: null is no basket, and keys inside it this version does not know are ignored', async () => {
    const generator = await created();
    const issued = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generator.id } }, body: { count: 1 } }),
    );
    const codes = issued.json.codes;

    const without = await check({ ...sale, codes, basket: null });
    const withExtra = await check({ ...sale, codes, basket: { total: 4250, currency: 'EUR', vat_included: true } });

    expect([without.status, withExtra.status]).toEqual([200, 200]);
  });

  it.each([
    [{ total: -1, currency: 'EUR' }, 'transaction.basket.total must be between 0 and 1000000000000'],
    [{ total: 10 ** 12 + 1, currency: 'EUR' }, 'transaction.basket.total must be between 0 and 1000000000000'],
    [{ total: '4250', currency: 'EUR' }, 'transaction.basket.total must be an integer'],
    [{ total: 4250, currency: 'Eur' }, 'transaction.basket.currency must be an ISO 4217 currency code: three uppercase letters, such as EUR'],
    [{ total: 4250 }, 'transaction.basket.currency is required'],
  ])('422 for the basket %o, its message naming the field (pos errors carry a message only)', async (basket, message) => {
    const response = await check({ ...sale, codes: ['WIN-AAAAAAAA'], basket });

    expect(response.status).toBe(422);
    expect(response.json.transaction.errors).toEqual([{ message }]);
    expect(response.json.transaction.display_messages).toHaveLength(1);
    expect(response.json.transaction.display_messages[0]).toMatchObject({ message_id: 'validation_failed', priority: 1 });
  });
});
