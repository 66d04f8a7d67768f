import { describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { send, type CoreBody, type CoreQuery, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';

/**
 * The back office's view of a code's uses (PRODUCT.md "Counting"): times_redeemed and
 * max_redemptions_per_code on the lookup and the codes list, and the transactions holding a code,
 * GET /v1.0/codegen/{id}/codes/{code}/redemptions, for single-use and multi-use codes alike.
 */
const ctx = useLocalApi();

const WEAK_ETAG = /^W\/"[0-9a-f]{32}"$/;
const twoFifty = { type: 'amount' as const, amount_off: 250, currency: 'EUR' };

async function newGenerator(fields: Partial<CoreBody<'createCodeGenerator'>['code_generator']> = {}, token = ctx.account.token) {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...fields } } }));
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator.id as number;
}
async function issue(id: number, count: number, token = ctx.account.token): Promise<string[]> {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(response.status, response.text).toBe(201);
  return response.json.codes;
}
/**
 * A generator's max_redemptions_per_code, set on its item with a new version of its terms, as a
 * PATCH will once the field is in the request schemas. Before any redemption (no promotion shard
 * exists: the first one checks the generator's version) or, after one, a refusal reads the terms
 * afresh.
 */
async function allowUses(id: number, max: number, accountId = ctx.account.accountId) {
  await documents.send(
    new UpdateCommand({
      TableName: tableName('codeGenerators'),
      Key: { account_id: accountId, id },
      UpdateExpression: 'SET max_redemptions_per_code = :max, terms_version = if_not_exists(terms_version, :one) + :one',
      ExpressionAttributeValues: { ':max': max, ':one': 1 },
    }),
  );
}
type Sale = PosBody<'redeemCodes'>['transaction'];
async function redeem(code: string, sale: Omit<Sale, 'codes'>) {
  const response = await send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/redeemed_codes', { body: { transaction: { ...sale, codes: [code] } } }));
  expect(response.status, response.text).toBe(200);
  return response.json.transaction.display_messages[0].message_content.redeemed_at as string;
}
async function voidSale(sale: Pick<Sale, 'site_id' | 'pos_transaction_id'>) {
  const response = await send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body: { transaction: sale } }));
  expect(response.status, response.text).toBe(200);
}
const lookUp = (id: number, code: string, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id, code } } }));
const listCodes = (id: number, query: CoreQuery<'listCodes'> = {}) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes', { params: { path: { id }, query } }));
const holders = (
  id: number,
  code: string,
  query: CoreQuery<'listCodeRedemptions'> = {},
  headers: { 'If-None-Match'?: string } = {},
  token = ctx.account.token,
) => send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes/{code}/redemptions', { params: { path: { id, code }, query, header: headers } }));
/** Requests no client would send (a forged cursor, an unknown parameter): raw. */
const holdersRaw = (id: number | string, code: string, query = '') =>
  call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes/${code}/redemptions${query}`, { token: ctx.account.token });

/** Every page of a code's redemptions at `limit` a page: the pages' sizes and the redemptions in order. */
async function allPages(id: number, code: string, limit: number) {
  const sizes: number[] = [];
  const all: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await holders(id, code, { limit, ...(cursor ? { cursor } : {}) });
    expect(page.status, page.text).toBe(200);
    sizes.push(page.json.redemptions.length);
    all.push(...page.json.redemptions);
    cursor = page.json.next_cursor ?? undefined;
  } while (cursor);
  return { sizes, all };
}

const held = (site_id: string, pos_transaction_id: string, redeemed_at: string, amount?: number) => ({
  site_id,
  pos_transaction_id,
  redeemed_at,
  discount_amount: amount ?? null,
  currency: amount === undefined ? null : 'EUR',
});
const noHolder = { redeemed_at: null, site_id: null, pos_transaction_id: null, discount_amount: null, currency: null };

describe('a multi-use code held by several transactions', () => {
  /** Five sales redeem one code of a promotion allowing 10 uses, the odd ones with a basket (2.50 EUR off). */
  async function heldByFive() {
    const id = await newGenerator({ discount: twoFifty });
    const [code] = await issue(id, 1);
    await allowUses(id, 10);
    const sales: { site_id: string; pos_transaction_id: string; redeemed_at: string; amount?: number }[] = [];
    for (let i = 1; i <= 5; i++) {
      const sale = { site_id: `S-${i % 2}`, pos_transaction_id: `T-${i}` };
      const basket = i % 2 === 1 ? { basket: { total: 1000, currency: 'EUR' } } : {};
      sales.push({ ...sale, redeemed_at: await redeem(code!, { ...sale, ...basket }), ...(i % 2 === 1 ? { amount: 250 } : {}) });
    }
    return { id, code: code!, sales };
  }

  it('the lookup counts them exactly and shows the maximum; the holder fields are null', async () => {
    const { id, code } = await heldByFive();

    const response = await lookUp(id, code.toLowerCase());

    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({
      code: {
        code,
        code_generator_id: id,
        issued_at: expect.stringMatching(RFC3339_MILLIS_UTC),
        ...noHolder,
        times_redeemed: 5,
        max_redemptions_per_code: 10,
      },
    });
    expect(Object.keys(response.json.code)).toEqual([
      'code',
      'code_generator_id',
      'issued_at',
      'redeemed_at',
      'site_id',
      'pos_transaction_id',
      'discount_amount',
      'currency',
      'times_redeemed',
      'max_redemptions_per_code',
    ]);
  });

  it('lists the transactions holding it in redemption order, with what each took off', async () => {
    const { id, code, sales } = await heldByFive();

    const response = await holders(id, code);

    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({
      redemptions: sales.map((sale) => held(sale.site_id, sale.pos_transaction_id, sale.redeemed_at, sale.amount)),
      next_cursor: null,
    });
    expect(sales.map((sale) => sale.redeemed_at)).toEqual(sales.map((sale) => sale.redeemed_at).sort());
    expect(response.headers.get('etag')).toMatch(WEAK_ETAG);
    expect(response.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
  });

  it('pages them as every list: full pages of limit, then the rest, no redemption twice', async () => {
    const { id, code, sales } = await heldByFive();

    const { sizes, all } = await allPages(id, code, 2);

    expect(sizes).toEqual([2, 2, 1]);
    expect(all).toEqual(sales.map((sale) => held(sale.site_id, sale.pos_transaction_id, sale.redeemed_at, sale.amount)));
    const last = await holders(id, code, { limit: 5 });
    expect(last.json.next_cursor).toBeNull();
  });

  it('a void takes its transaction off the list and lowers times_redeemed, at once', async () => {
    const { id, code, sales } = await heldByFive();
    const before = await holders(id, code);

    await voidSale({ site_id: sales[2]!.site_id, pos_transaction_id: sales[2]!.pos_transaction_id });

    const after = await holders(id, code);
    expect(after.json.redemptions).toEqual(
      sales.filter((_, i) => i !== 2).map((sale) => held(sale.site_id, sale.pos_transaction_id, sale.redeemed_at, sale.amount)),
    );
    expect((await lookUp(id, code)).json.code.times_redeemed).toBe(4);
    // A page read before the void is not current any more: its ETag no longer matches.
    const revalidated = await holders(id, code, {}, { 'If-None-Match': before.headers.get('etag')! });
    expect(revalidated.status).toBe(200);
    expect(revalidated.text).toBe(after.text);
  });

  it('a cursor read before a void still leads to the rest', async () => {
    const { id, code, sales } = await heldByFive();
    const first = await holders(id, code, { limit: 2 });

    await voidSale({ site_id: sales[1]!.site_id, pos_transaction_id: sales[1]!.pos_transaction_id });
    const next = await holders(id, code, { limit: 2, cursor: first.json.next_cursor! });

    expect(next.json.redemptions).toEqual(sales.slice(2, 4).map((sale) => held(sale.site_id, sale.pos_transaction_id, sale.redeemed_at, sale.amount)));
  });

  it('answers 304 to If-None-Match of the current page', async () => {
    const { id, code } = await heldByFive();
    const first = await holders(id, code);

    const again = await holders(id, code, {}, { 'If-None-Match': first.headers.get('etag')! });

    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('the codes list shows the maximum and null holder fields, and counts the uses its stream rolled up onto the code (shard_uses)', async () => {
    const { id, code } = await heldByFive();
    // The stream worker's roll-up of the code's shards, as it writes it onto the code's item.
    await documents.send(
      new UpdateCommand({
        TableName: tableName('codes'),
        Key: { code_key: `${ctx.account.accountId}#${code}` },
        UpdateExpression: 'SET shard_uses = :uses',
        ExpressionAttributeValues: { ':uses': { 3: 2, 17: 3 } },
      }),
    );

    const response = await listCodes(id);

    expect(response.status, response.text).toBe(200);
    expect(response.json.codes).toEqual([
      { code, code_generator_id: id, issued_at: expect.stringMatching(RFC3339_MILLIS_UTC), ...noHolder, times_redeemed: 5, max_redemptions_per_code: 10 },
    ]);
  });
});

describe('a code held before its promotion allowed more uses', () => {
  it('counts and lists its first holder (from its item) in order among the later ones, until its void', async () => {
    const id = await newGenerator();
    const [code] = await issue(id, 1);
    const first = { site_id: 'S-1', pos_transaction_id: 'T-0' };
    const firstAt = await redeem(code!, first);
    await allowUses(id, 3);
    const later = [
      { site_id: 'S-1', pos_transaction_id: 'T-1' },
      { site_id: 'S-2', pos_transaction_id: 'T-2' },
    ];
    const laterAt = [await redeem(code!, later[0]!), await redeem(code!, later[1]!)];

    expect((await lookUp(id, code!)).json.code).toMatchObject({ ...noHolder, times_redeemed: 3, max_redemptions_per_code: 3 });
    const { sizes, all } = await allPages(id, code!, 1);
    expect(sizes).toEqual([1, 1, 1]);
    expect(all).toEqual([
      held(first.site_id, first.pos_transaction_id, firstAt),
      held(later[0]!.site_id, later[0]!.pos_transaction_id, laterAt[0]!),
      held(later[1]!.site_id, later[1]!.pos_transaction_id, laterAt[1]!),
    ]);

    await voidSale(first);

    expect((await lookUp(id, code!)).json.code.times_redeemed).toBe(2);
    expect((await holders(id, code!)).json.redemptions).toEqual(later.map((sale, i) => held(sale.site_id, sale.pos_transaction_id, laterAt[i]!)));
  });
});

describe('a single-use code', () => {
  it('the lookup shows times_redeemed 0, then 1 with its holder, and max_redemptions_per_code 1', async () => {
    const id = await newGenerator({ discount: twoFifty });
    const [code] = await issue(id, 1);

    const fresh = await lookUp(id, code!);
    expect(fresh.json.code).toEqual({
      code,
      code_generator_id: id,
      issued_at: expect.stringMatching(RFC3339_MILLIS_UTC),
      ...noHolder,
      times_redeemed: 0,
      max_redemptions_per_code: 1,
    });

    const redeemedAt = await redeem(code!, { site_id: 'S-1', pos_transaction_id: 'T-1', basket: { total: 1000, currency: 'EUR' } });

    expect((await lookUp(id, code!)).json.code).toEqual({
      code,
      code_generator_id: id,
      issued_at: fresh.json.code.issued_at,
      redeemed_at: redeemedAt,
      site_id: 'S-1',
      pos_transaction_id: 'T-1',
      discount_amount: 250,
      currency: 'EUR',
      times_redeemed: 1,
      max_redemptions_per_code: 1,
    });
  });

  it('lists its one holder, or none', async () => {
    const id = await newGenerator();
    const [code] = await issue(id, 1);
    expect((await holders(id, code!)).json).toEqual({ redemptions: [], next_cursor: null });

    const redeemedAt = await redeem(code!, { site_id: 'S-1', pos_transaction_id: 'T-1' });
    expect((await holders(id, code!.toLowerCase(), { limit: 1 })).json).toEqual({ redemptions: [held('S-1', 'T-1', redeemedAt)], next_cursor: null });

    await voidSale({ site_id: 'S-1', pos_transaction_id: 'T-1' });
    expect((await holders(id, code!)).json).toEqual({ redemptions: [], next_cursor: null });
  });

  it('the codes list counts 0 or 1 and redeemed=true lists the codes redeemed once', async () => {
    const id = await newGenerator();
    const codes = (await issue(id, 2)).sort();
    const redeemedAt = await redeem(codes[1]!, { site_id: 'S-1', pos_transaction_id: 'T-1' });

    const all = await listCodes(id);
    const redeemed = await listCodes(id, { redeemed: true });

    const issuedAt = all.json.codes[0].issued_at;
    expect(all.json.codes).toEqual([
      { code: codes[0], code_generator_id: id, issued_at: issuedAt, ...noHolder, times_redeemed: 0, max_redemptions_per_code: 1 },
      {
        code: codes[1],
        code_generator_id: id,
        issued_at: issuedAt,
        ...noHolder,
        redeemed_at: redeemedAt,
        site_id: 'S-1',
        pos_transaction_id: 'T-1',
        times_redeemed: 1,
        max_redemptions_per_code: 1,
      },
    ]);
    expect(redeemed.json.codes.map((c: { code: string; times_redeemed: number }) => [c.code, c.times_redeemed])).toEqual([[codes[1], 1]]);
  });
});

describe("what is not the caller's", () => {
  it('401 without a token, before anything is read', async () => {
    const response = await call(ctx.api, 'core', 'GET', '/v1.0/codegen/1/codes/WIN-ANYTHING/redemptions');

    expect(response.status).toBe(401);
    expect(response.json).toEqual({ errors: [{ message: 'X-Auth-Token header is required' }] });
  });

  it("404 for a code the generator did not issue, an unknown generator and another generator's code", async () => {
    const id = await newGenerator();
    const other = await newGenerator();
    const [code] = await issue(id, 1);

    const answers = [
      [await holders(id, 'WIN-NOTISSUED'), `Code WIN-NOTISSUED was not issued by code generator ${id}`],
      [await holders(id + 1_000_000, code!), `Code ${code} was not issued by code generator ${id + 1_000_000}`],
      [await holders(other, code!), `Code ${code} was not issued by code generator ${other}`],
      [await holdersRaw(id, 'not%20a%20code'), `Code not a code was not issued by code generator ${id}`],
      [await lookUp(id + 1_000_000, code!), `Code ${code} was not issued by code generator ${id + 1_000_000}`],
    ] as const;
    for (const [response, message] of answers) {
      expect(response.status, response.text).toBe(404);
      expect(response.json).toEqual({ errors: [{ message }] });
    }
  });

  it("another account's code answers 404, on the lookup and the redemptions list alike", async () => {
    const intruder = await newAccount();
    const id = await newGenerator();
    const [code] = await issue(id, 1);
    await redeem(code!, { site_id: 'S-1', pos_transaction_id: 'T-1' });

    for (const response of [await holders(id, code!, {}, {}, intruder.token), await lookUp(id, code!, intruder.token)]) {
      expect(response.status, response.text).toBe(404);
      expect(response.json).toEqual({ errors: [{ message: `Code ${code} was not issued by code generator ${id}` }] });
    }
  });
});

describe('query parameters, as every list reads them', () => {
  it('400 naming the parameter for a bad limit, a malformed cursor, a cursor of another code, and an unknown parameter', async () => {
    const id = await newGenerator();
    const [one, two] = await issue(id, 2);
    await allowUses(id, 5);
    for (let i = 1; i <= 2; i++) await redeem(one!, { site_id: 'S-1', pos_transaction_id: `T-${i}` });
    const page = await holders(id, one!, { limit: 1 });
    expect(page.json.next_cursor).toEqual(expect.any(String));

    const answers = [
      [await holdersRaw(id, one!, '?limit=0'), { message: 'limit must be an integer from 1 to 1000', field: 'limit' }],
      [
        await holdersRaw(id, one!, '?cursor=not-a-cursor'),
        { message: 'cursor is malformed: pass the next_cursor of the previous page as it is', field: 'cursor' },
      ],
      [await holdersRaw(id, two!, `?cursor=${page.json.next_cursor}`), { message: 'cursor belongs to another account or to other filters', field: 'cursor' }],
      [await holdersRaw(id, one!, '?redeemed=true'), { message: 'redeemed is not a known query parameter', field: 'redeemed' }],
    ] as const;
    for (const [response, error] of answers) {
      expect(response.status, response.text).toBe(400);
      expect(response.json).toEqual({ errors: [error] });
    }
    // The cursor is bound to the code as issued, however the path spells it.
    const next = await holders(id, one!.toLowerCase(), { limit: 1, cursor: page.json.next_cursor! });
    expect(next.status, next.text).toBe(200);
    expect(next.json.redemptions).toHaveLength(1);
    expect(next.json.redemptions[0].pos_transaction_id).toBe('T-2');
  });

  it("ids of 128 characters that JSON escapes (a transaction key past DynamoDB's 1,024 bytes for a sort key): redeemed, listed, paged", async () => {
    const id = await newGenerator();
    const [code] = await issue(id, 1);
    await allowUses(id, 5);
    const sales = ['a', 'b'].map((last) => ({ site_id: '"'.repeat(128), pos_transaction_id: `${'\\'.repeat(127)}${last}` }));
    const redeemedAt = [await redeem(code!, sales[0]!), await redeem(code!, sales[1]!)];

    const first = await holders(id, code!, { limit: 1 });
    const next = await holders(id, code!, { limit: 1, cursor: first.json.next_cursor! });

    // The sort key holds a digest of the transaction, so the cursor stays short whatever the ids.
    expect(first.json.next_cursor!.length).toBeLessThan(512);
    expect([...first.json.redemptions, ...next.json.redemptions]).toEqual(sales.map((sale, i) => held(sale.site_id, sale.pos_transaction_id, redeemedAt[i]!)));
    expect(next.json.next_cursor).toBeNull();
  });
});
