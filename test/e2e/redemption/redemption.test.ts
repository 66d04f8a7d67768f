import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call, RFC3339_MILLIS_UTC, UUID, type HttpResponse } from '../../support/http.ts';
import { send, type CoreBody, type CoreQuery, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * Redeeming codes at the till over HTTP: POST /v2.0/redeemed_codes and /v2.0/validated_codes,
 * the void that releases what its transaction holds, and the back office's view of it
 * (GET /v1.0/codegen/{id}/codes[/{code}], the events).
 */
const ctx = useLocalApi();

const sale = { site_id: 'S-0042', pos_transaction_id: 'T-1001', register_id: 'R1', occurred_at: '2026-11-21T14:03:00Z' };

type Transaction<Id extends 'redeemCodes' | 'validateCodes' | 'voidTransaction'> = PosBody<Id>['transaction'];

async function newGenerator(fields: Partial<CoreBody<'createCodeGenerator'>['code_generator']> = {}, token = ctx.account.token) {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...fields } } }));
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator as { id: number; description: string };
}
async function issue(id: number, count: number, token = ctx.account.token): Promise<string[]> {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(response.status, response.text).toBe(201);
  return response.json.codes;
}
const redeem = (transaction: Transaction<'redeemCodes'>, token = ctx.account.token) =>
  send(ctx.api, token, ({ pos }) => pos.POST('/v2.0/redeemed_codes', { body: { transaction } }));
/** A redemption no client would send (a missing or mistyped field): raw. */
const redeemRaw = (transaction: Record<string, unknown>, token = ctx.account.token) =>
  call(ctx.api, 'pos', 'POST', '/v2.0/redeemed_codes', { token, body: { transaction } });
const check = (transaction: Transaction<'validateCodes'>, token = ctx.account.token) =>
  send(ctx.api, token, ({ pos }) => pos.POST('/v2.0/validated_codes', { body: { transaction } }));
const voidSale = (transaction: Transaction<'voidTransaction'>, token = ctx.account.token) =>
  send(ctx.api, token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body: { transaction } }));
const lookUp = (id: number, code: string) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id, code } } }));
const list = (id: number, query: CoreQuery<'listCodes'> = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes', { params: { path: { id }, query } }));
const setStatus = async (id: number, status: 'active' | 'inactive') => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id } }, body: { code_generator: { status } } }),
  );
  expect(response.status, response.text).toBe(200);
};

const redeemed = (code: string, generatorId: number, redeemedAt: unknown = expect.stringMatching(RFC3339_MILLIS_UTC)) => ({
  message: `Code ${code} redeemed`,
  message_id: 'code_redeemed',
  message_content: { code, code_generator_id: generatorId, description: 'Winter promotion', redeemed_at: redeemedAt, discount: { type: 'none' } },
  priority: 1,
});
const notFound = (code: string) => ({
  error: { message: `Code ${code} is not an issued code of this account` },
  display: {
    message: `Code ${code} is not a valid code. Check that it was scanned or typed correctly; otherwise do not accept it.`,
    message_id: 'code_not_found',
    message_content: { code },
    priority: 1,
  },
});
const alreadyRedeemed = (code: string, generatorId: number) => ({
  error: { message: `Code ${code} is redeemed by another transaction` },
  display: {
    message: `Code ${code} was already used in another sale. Do not accept it.`,
    message_id: 'code_already_redeemed',
    message_content: { code, code_generator_id: generatorId },
    priority: 1,
  },
});
const inactive = (code: string, generatorId: number) => ({
  error: { message: `Code ${code} belongs to code generator ${generatorId}, which is inactive` },
  display: {
    message: `Code ${code} belongs to a promotion that is not active. Do not accept it.`,
    message_id: 'code_generator_inactive',
    message_content: { code, code_generator_id: generatorId },
    priority: 1,
  },
});
const voided = (posTransactionId: string, siteId = sale.site_id) => ({
  error: { message: `Transaction ${posTransactionId} of site ${siteId} was voided; no code can be redeemed on it` },
  display: {
    message: `Transaction ${posTransactionId} was voided: no code can be redeemed on it. Start a new sale for these codes.`,
    message_id: 'transaction_voided',
    message_content: { site_id: siteId, pos_transaction_id: posTransactionId },
    priority: 1,
  },
});
const refusal = (...entries: { error: object; display: object }[]) => ({
  transaction: { errors: entries.map((e) => e.error), display_messages: entries.map((e) => e.display) },
});

/** What a refused request must leave as it was: the account's codes, transactions and events. */
async function snapshot(accountId = ctx.account.accountId) {
  const [codes, transactions, events] = await Promise.all([codeItemsOf(accountId), posTransactionsOf(accountId), eventsOf(accountId)]);
  const order = (items: Record<string, any>[], key: string) => [...items].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return { codes: order(codes, 'code_key'), transactions: order(transactions, 'transaction_key'), events: order(events, 'id') };
}

function expectPosHeaders(response: HttpResponse) {
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('x-request-id')).toMatch(UUID);
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('etag')).toBeNull();
}

describe('POST /v2.0/redeemed_codes', () => {
  it('redeems: 200, one code_redeemed message per distinct code in the order listed, the codes held, one codes.redeemed event', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 3);

    const response = await redeem({ ...sale, codes: [b!, a!.toLowerCase(), b!.toLowerCase(), a!] });

    expect(response.status, response.text).toBe(200);
    expectPosHeaders(response);
    const at = response.json.transaction.display_messages[0].message_content.redeemed_at;
    expect(response.json).toEqual({ transaction: { errors: [], display_messages: [redeemed(b!, generator.id, at), redeemed(a!, generator.id, at)] } });
    const read = await lookUp(generator.id, a!.toLowerCase());
    expect(read.json.code).toEqual({
      code: a,
      code_generator_id: generator.id,
      issued_at: expect.stringMatching(RFC3339_MILLIS_UTC),
      redeemed_at: at,
      site_id: 'S-0042',
      pos_transaction_id: 'T-1001',
      discount_amount: null,
      currency: null,
      times_redeemed: 1,
      max_redemptions_per_code: 1,
    });
    const events = (await eventsOf(ctx.account.accountId)).filter((e) => e.type === 'codes.redeemed');
    expect(events).toEqual([expect.objectContaining({ type: 'codes.redeemed', resource_id: 'S-0042/T-1001', created_at: at })]);
  });

  it('answers a retry 200 with the first redeemed_at and writes nothing; a code added to the sale later is redeemed beside them', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    const first = await redeem({ ...sale, codes: [a!] });
    const at = first.json.transaction.display_messages[0].message_content.redeemed_at;
    const before = await snapshot();

    const retry = await redeem({ ...sale, till_id: 'other', codes: [a!.toLowerCase()] });

    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({ transaction: { errors: [], display_messages: [redeemed(a!, generator.id, at)] } });
    expect(await snapshot()).toEqual(before);

    const added = await redeem({ ...sale, codes: [a!, b!] });
    expect(added.status).toBe(200);
    const [again, fresh] = added.json.transaction.display_messages;
    expect(again).toEqual(redeemed(a!, generator.id, at));
    expect(fresh).toEqual(redeemed(b!, generator.id));
    expect(fresh.message_content.redeemed_at > at).toBe(true);
    expect((await eventsOf(ctx.account.accountId)).filter((e) => e.type === 'codes.redeemed')).toHaveLength(2);
    expect((await posTransactionsOf(ctx.account.accountId))[0]!.codes!.map((c) => c.code)).toEqual([a, b]);
  });

  it('refuses a code another till redeemed: 409 code_already_redeemed, writing nothing', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    expect((await redeem({ ...sale, codes: [a!] })).status).toBe(200);
    const before = await snapshot();

    const response = await redeem({ site_id: 'S-0042', pos_transaction_id: 'T-2002', codes: [b!, a!] });

    expect(response.status).toBe(409);
    expectPosHeaders(response);
    expect(response.json).toEqual(refusal(alreadyRedeemed(a!, generator.id)));
    expect(await snapshot()).toEqual(before);
  });

  it("422 code_not_found for an unknown code, a code that cannot be one, and another account's code, naming each failing code once", async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    const other = await newAccount();
    const theirGenerator = await newGenerator({}, other.token);
    const [theirs] = await issue(theirGenerator.id, 1, other.token);
    expect((await redeem({ site_id: 'S-9', pos_transaction_id: 'T-9', codes: [b!] })).status).toBe(200);
    const before = await snapshot();

    const response = await redeem({ ...sale, codes: [a!, 'WIN-NOTISSUED', theirs!, 'wın-ıııı', b!, 'win-notissued'] });

    expect(response.status).toBe(422);
    expect(response.json).toEqual(refusal(notFound('WIN-NOTISSUED'), notFound(theirs!), notFound('wın-ıııı'), alreadyRedeemed(b!, generator.id)));
    expect(await snapshot()).toEqual(before);
    expect(await snapshot(other.accountId)).toEqual(await snapshot(other.accountId));
    // The other account's code is untouched and still its own to redeem.
    expect((await redeem({ ...sale, codes: [theirs!] }, other.token)).status).toBe(200);
  });

  it('409 code_generator_inactive once the generator is deactivated, at once; 200 again once it is active', async () => {
    const generator = await newGenerator();
    const [a] = await issue(generator.id, 1);
    // A redemption reads the generator's description (cached up to a minute) first.
    expect((await check({ ...sale, codes: [a!] })).status).toBe(200);
    await setStatus(generator.id, 'inactive');
    const before = await snapshot();

    const response = await redeem({ ...sale, codes: [a!] });

    expect(response.status).toBe(409);
    expect(response.json).toEqual(refusal(inactive(a!, generator.id)));
    expect(await snapshot()).toEqual(before);
    await setStatus(generator.id, 'active');
    expect((await redeem({ ...sale, codes: [a!] })).status).toBe(200);
  });

  it('409 transaction_voided, once, when the void arrived first; the codes stay free', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    expect((await voidSale(sale)).status).toBe(200);
    const before = await snapshot();

    const response = await redeem({ ...sale, codes: [a!, b!] });

    expect(response.status).toBe(409);
    expect(response.json).toEqual(refusal(voided('T-1001')));
    expect(await snapshot()).toEqual(before);
    expect((await lookUp(generator.id, a!)).json.code.redeemed_at).toBeNull();
  });

  it('409 too_many_codes past 24 codes in one transaction (MAX_HELD_CODES), writing nothing; 24 is fine', async () => {
    const generator = await newGenerator();
    const codes = await issue(generator.id, 25);
    for (let start = 0; start < 24; start += 10) expect((await redeem({ ...sale, codes: codes.slice(start, Math.min(start + 10, 24)) })).status).toBe(200);
    const before = await snapshot();

    const response = await redeem({ ...sale, codes: [codes[0]!, codes[24]!] });

    expect(response.status).toBe(409);
    expect(response.json).toEqual({
      transaction: {
        errors: [{ message: 'Transaction T-1001 holds 24 codes and this request adds 1; a transaction holds at most 24' }],
        display_messages: [
          {
            message: 'A sale can hold at most 24 codes: this one holds 24, and 1 more would be too many. Take these codes in another sale.',
            message_id: 'too_many_codes',
            message_content: { held: 24, adding: 1, limit: 24 },
            priority: 1,
          },
        ],
      },
    });
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['no codes', {}, 'transaction.codes is required'],
    ['an empty list', { codes: [] }, 'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters'],
    [
      '11 codes',
      { codes: Array.from({ length: 11 }, (_, i) => `C${i}`) },
      'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters',
    ],
    ['a number', { codes: [7] }, 'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters'],
    ['an empty code', { codes: [''] }, 'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters'],
    ['a code of 65 characters', { codes: ['A'.repeat(65)] }, 'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters'],
    ['a string', { codes: 'WIN-1' }, 'transaction.codes must be a list of 1 to 10 codes, each a string of 1 to 64 characters'],
  ])('422 naming transaction.codes for %s', async (_, extra, message) => {
    const before = await snapshot();
    const response = await redeemRaw({ ...sale, ...extra });
    expect(response.status).toBe(422);
    expect(response.json.transaction.errors).toEqual([{ message }]);
    expect(response.json.transaction.display_messages).toHaveLength(1);
    expect(response.json.transaction.display_messages[0]).toMatchObject({ message_id: 'validation_failed', priority: 1 });
    expect(await snapshot()).toEqual(before);
  });

  it('422 for the void fields as a void checks them; unknown keys and nulls are ignored', async () => {
    const generator = await newGenerator();
    const [a] = await issue(generator.id, 1);
    const response = await redeemRaw({ pos_transaction_id: 'T-1', business_date: '2026-02-30', codes: [a!] });
    expect(response.status).toBe(422);
    expect(response.json.transaction.errors).toEqual([
      { message: 'transaction.site_id is required' },
      { message: 'transaction.business_date must be a date that exists: 2026-02-30 is not a day of the calendar' },
    ]);
    const lenient = await redeemRaw({ ...sale, till_id: null, loyalty_card: '42', codes: [a!] });
    expect(lenient.status, lenient.text).toBe(200);
  });

  it('401 without a token, 400 for a body that is not the transaction', async () => {
    const noToken = await call(ctx.api, 'pos', 'POST', '/v2.0/redeemed_codes', { body: { transaction: { ...sale, codes: ['X'] } } });
    expect(noToken.status).toBe(401);
    expect(noToken.json.transaction.display_messages[0].message_id).toBe('unauthorized');
    const malformed = await call(ctx.api, 'pos', 'POST', '/v2.0/redeemed_codes', { token: ctx.account.token, body: '{"codes":["X"]}' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.transaction.errors).toEqual([{ message: 'Request body must be a JSON object with a "transaction" object' }]);
  });
});

describe.each([['/v2.0/redeemed_codes'], ['/v2.0/validated_codes']])('POST %s: the envelope failures of the pos host, writing nothing', (path) => {
  const post = (body: unknown, headers: Record<string, string> = {}) => call(ctx.api, 'pos', 'POST', path, { token: ctx.account.token, body, headers });

  it('401 without a token', async () => {
    const response = await call(ctx.api, 'pos', 'POST', path, { body: { transaction: { ...sale, codes: ['X'] } } });
    expect(response.status).toBe(401);
    expect(response.json.transaction.errors).toEqual([{ message: 'X-Auth-Token header is required' }]);
  });

  it('400 for malformed JSON, 413 over 16 KiB, 415 for a form', async () => {
    const before = await snapshot();
    const malformed = await post('{"transaction":{');
    expect(malformed.status).toBe(400);
    expect(malformed.json.transaction.errors).toEqual([{ message: 'Request body is not valid JSON' }]);
    const large = await post({ transaction: { ...sale, codes: ['X'], notes: 'x'.repeat(17_000) } });
    expect(large.status).toBe(413);
    expect(large.json.transaction.errors).toEqual([{ message: 'Request body exceeds 16384 bytes' }]);
    const form = await post('site_id=S1', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(form.json.transaction.display_messages[0].message_id).toBe('unsupported_media_type');
    expect(await snapshot()).toEqual(before);
  });
});

describe('POST /v2.0/validated_codes', () => {
  it('200 code_valid per distinct code when a redemption would succeed, and writes nothing', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    const before = await snapshot();

    const response = await check({ ...sale, codes: [a!.toLowerCase(), b!, a!] });

    expect(response.status, response.text).toBe(200);
    expectPosHeaders(response);
    expect(response.json).toEqual({
      transaction: {
        errors: [],
        display_messages: [a!, b!].map((code) => ({
          message: `Code ${code} is valid`,
          message_id: 'code_valid',
          message_content: { code, code_generator_id: generator.id, description: 'Winter promotion', discount: { type: 'none' } },
          priority: 1,
        })),
      },
    });
    expect(await snapshot()).toEqual(before);
  });

  it('a code the transaction holds already is valid for it, and taken for another', async () => {
    const generator = await newGenerator();
    const [a] = await issue(generator.id, 1);
    await redeem({ ...sale, codes: [a!] });
    expect((await check({ ...sale, codes: [a!] })).status).toBe(200);
    const other = await check({ ...sale, pos_transaction_id: 'T-3', codes: [a!] });
    expect(other.status).toBe(409);
    expect(other.json).toEqual(refusal(alreadyRedeemed(a!, generator.id)));
  });

  it('the same refusals as a redemption: 422 with code_not_found, 409 for inactive, voided and taken, writing nothing', async () => {
    const generator = await newGenerator();
    const stopped = await newGenerator({ description: 'Old promotion' });
    const [a] = await issue(generator.id, 1);
    const [s] = await issue(stopped.id, 1);
    await setStatus(stopped.id, 'inactive');
    await voidSale({ ...sale, pos_transaction_id: 'T-V' });
    const before = await snapshot();

    const unknown = await check({ ...sale, codes: [s!, 'NOPE'] });
    expect(unknown.status).toBe(422);
    expect(unknown.json).toEqual(refusal(inactive(s!, stopped.id), notFound('NOPE')));
    const refused = await check({ ...sale, pos_transaction_id: 'T-V', codes: [a!, s!] });
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual(refusal(voided('T-V'), inactive(s!, stopped.id)));
    expect(await snapshot()).toEqual(before);
  });
});

describe('a void releases the codes its transaction holds', () => {
  it('200 with the void message and one code_released per code, a codes.released event; the codes are redeemable again', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    await redeem({ ...sale, codes: [a!, b!] });

    const response = await voidSale({ ...sale, receipt_id: 'RC-1' });

    expect(response.status, response.text).toBe(200);
    const [first, ...released] = response.json.transaction.display_messages;
    expect(first).toEqual({
      message: 'Transaction T-1001 voided',
      message_id: 'transaction_voided',
      message_content: {
        site_id: 'S-0042',
        pos_transaction_id: 'T-1001',
        receipt_id: 'RC-1',
        event_id: expect.any(Number),
        voided_at: expect.stringMatching(RFC3339_MILLIS_UTC),
      },
      priority: 1,
    });
    expect(released).toEqual(
      [a!, b!].map((code) => ({
        message: `Code ${code} released`,
        message_id: 'code_released',
        message_content: { code, code_generator_id: generator.id },
        priority: 1,
      })),
    );
    const events = await eventsOf(ctx.account.accountId);
    expect(
      events
        .filter((e) => e.type !== 'code_generator.created' && e.type !== 'codes.issued')
        .map((e) => [e.type, e.resource_id])
        .sort(),
    ).toEqual([
      ['codes.redeemed', 'S-0042/T-1001'],
      ['codes.released', 'S-0042/T-1001'],
      ['transaction.voided', 'S-0042/T-1001'],
    ]);
    expect((await lookUp(generator.id, a!)).json.code).toMatchObject({ redeemed_at: null, site_id: null, pos_transaction_id: null });

    // A repeat answers the first body; the codes are free for another sale, and this one stays voided.
    const again = await voidSale(sale);
    expect(again.text).toBe(response.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await redeem({ ...sale, pos_transaction_id: 'T-1002', codes: [a!] })).status).toBe(200);
    expect((await redeem({ ...sale, codes: [b!] })).json).toEqual(refusal(voided('T-1001')));
  });

  it('names the transaction in its events as encodeURIComponent(site_id)/encodeURIComponent(pos_transaction_id)', async () => {
    const generator = await newGenerator();
    const [a, b] = await issue(generator.id, 2);
    await redeem({ site_id: 'a/b', pos_transaction_id: 'c', codes: [a!] });
    await redeem({ site_id: 'a', pos_transaction_id: 'b/c', codes: [b!] });
    await voidSale({ site_id: 'a/b', pos_transaction_id: 'c' });
    await voidSale({ site_id: 'a', pos_transaction_id: 'b/c' });
    await voidSale({ site_id: 'Zürich 1', pos_transaction_id: '#7?' });
    const ids = (await eventsOf(ctx.account.accountId)).filter((e) => e.type !== 'codes.issued' && e.type !== 'code_generator.created');
    expect(ids.map((e) => `${e.type} ${e.resource_id}`).sort()).toEqual([
      'codes.redeemed a%2Fb/c',
      'codes.redeemed a/b%2Fc',
      'codes.released a%2Fb/c',
      'codes.released a/b%2Fc',
      'transaction.voided Z%C3%BCrich%201/%237%3F',
      'transaction.voided a%2Fb/c',
      'transaction.voided a/b%2Fc',
    ]);
  });
});

describe('GET /v1.0/codegen/{id}/codes', () => {
  it('lists the issued codes in code order, full pages with a cursor, each with its redemption or nulls', async () => {
    const generator = await newGenerator();
    const codes = (await issue(generator.id, 7)).sort();
    await redeem({ ...sale, codes: [codes[2]!] });

    const seen: any[] = [];
    let query: CoreQuery<'listCodes'> = { limit: 3 };
    for (let page = 0; page < 5; page++) {
      const response = await list(generator.id, query);
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('etag')).toMatch(/^W\//);
      seen.push(...response.json.codes);
      if (response.json.next_cursor === null) {
        expect(response.json.codes).toHaveLength(1);
        break;
      }
      expect(response.json.codes).toHaveLength(3);
      query = { limit: 3, cursor: response.json.next_cursor };
    }
    expect(seen.map((c) => c.code)).toEqual(codes);
    expect(seen[2]).toMatchObject({
      code: codes[2],
      code_generator_id: generator.id,
      redeemed_at: expect.stringMatching(RFC3339_MILLIS_UTC),
      site_id: 'S-0042',
      pos_transaction_id: 'T-1001',
    });
    expect(seen[0]).toEqual({
      code: codes[0],
      code_generator_id: generator.id,
      issued_at: expect.stringMatching(RFC3339_MILLIS_UTC),
      redeemed_at: null,
      site_id: null,
      pos_transaction_id: null,
      discount_amount: null,
      currency: null,
      times_redeemed: 0,
      max_redemptions_per_code: 1,
    });
  });

  it('filters redeemed=true and redeemed=false, and follows a release', async () => {
    const generator = await newGenerator();
    const codes = (await issue(generator.id, 5)).sort();
    await redeem({ ...sale, codes: [codes[1]!, codes[3]!] });

    const only = async (redeemedFilter: boolean) =>
      ((await list(generator.id, { redeemed: redeemedFilter })).json.codes as { code: string }[]).map((c) => c.code);
    expect(await only(true)).toEqual([codes[1], codes[3]]);
    expect(await only(false)).toEqual([codes[0], codes[2], codes[4]]);
    const page = await list(generator.id, { redeemed: false, limit: 2 });
    expect(page.json.next_cursor).toEqual(expect.any(String));
    const next = await list(generator.id, { redeemed: false, limit: 2, cursor: page.json.next_cursor });
    expect(next.json).toEqual({ codes: [expect.objectContaining({ code: codes[4] })], next_cursor: null });
    // A cursor is bound to its filter.
    const foreign = await list(generator.id, { redeemed: true, cursor: page.json.next_cursor });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toEqual({ errors: [{ message: 'cursor belongs to another account or to other filters', field: 'cursor' }] });

    await voidSale(sale);
    expect(await only(true)).toEqual([]);
    expect(await only(false)).toEqual(codes);
  });

  it("lists codes of an issuance of several transactions, never a failed issuance's; 200 empty for a generator without codes", async () => {
    const generator = await newGenerator();
    const empty = await list(generator.id);
    expect(empty.json).toEqual({ codes: [], next_cursor: null });
    const codes = await issue(generator.id, 250);
    const all: string[] = [];
    const response = await list(generator.id, { limit: 1000 });
    all.push(...response.json.codes.map((c: { code: string }) => c.code));
    expect(all).toEqual([...codes].sort());
  });

  it('401 without a token; 304 for a matching If-None-Match', async () => {
    const generator = await newGenerator();
    await issue(generator.id, 2);
    const anonymous = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${generator.id}/codes`);
    expect(anonymous.status).toBe(401);
    const first = await list(generator.id);
    const again = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${generator.id}/codes`, {
      token: ctx.account.token,
      headers: { 'If-None-Match': first.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it("400 for a bad redeemed value or an unknown parameter, 404 for another account's generator", async () => {
    const generator = await newGenerator();
    await issue(generator.id, 1);
    const bad = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${generator.id}/codes?redeemed=yes`, { token: ctx.account.token });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ errors: [{ message: 'redeemed must be true or false', field: 'redeemed' }] });
    expect((await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${generator.id}/codes?state=redeemed`, { token: ctx.account.token })).json).toEqual({
      errors: [{ message: 'state is not a known query parameter', field: 'state' }],
    });
    const intruder = await newAccount();
    const foreign = await list(generator.id, {}, intruder.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ errors: [{ message: `Code generator ${generator.id} not found` }] });
    expect((await list(generator.id + 1_000_000)).status).toBe(404);
  });
});
