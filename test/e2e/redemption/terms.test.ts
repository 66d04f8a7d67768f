import { describe, expect, it } from 'vitest';
import { winterPromotion } from '../../support/fixtures.ts';
import { RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { send, type CoreBody, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * Promotion terms at the till (PRODUCT.md "Promotion terms"), over HTTP and checked against the
 * OpenAPI documents: each term and its refusal, the order when several apply, the amounts (half
 * up, caps, JPY, codes in order down to 0) and what a retry answers after the terms changed.
 */
const ctx = useLocalApi();

type Generator = CoreBody<'createCodeGenerator'>['code_generator'];
type Transaction = PosBody<'redeemCodes'>['transaction'];
let sales = 0;
const newSale = (fields: Partial<Transaction> = {}): Omit<Transaction, 'codes'> => ({ site_id: 'S-BER-1', pos_transaction_id: `T-${++sales}`, ...fields });

async function promotion(terms: Partial<Generator>, count = 1) {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...terms } } }),
  );
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id as number;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(issued.status, issued.text).toBe(201);
  return { id, codes: issued.json.codes as string[] };
}
const patch = async (id: number, fields: Record<string, unknown>) => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id } }, body: { code_generator: fields as CoreBody<'updateCodeGenerator'>['code_generator'] } }),
  );
  expect(response.status, response.text).toBe(200);
};
const redeem = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/redeemed_codes', { body: { transaction } }));
const check = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/validated_codes', { body: { transaction } }));
const lookUp = (id: number, code: string) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id, code } } }));
const messagesOf = (response: { json: any }) => response.json.transaction.display_messages as { message: string; message_id: string; message_content: any }[];

async function snapshot(accountId = ctx.account.accountId) {
  const [codes, transactions, events] = await Promise.all([codeItemsOf(accountId), posTransactionsOf(accountId), eventsOf(accountId)]);
  const order = (items: Record<string, any>[], key: string) => [...items].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return { codes: order(codes, 'code_key'), transactions: order(transactions, 'transaction_key'), events: order(events, 'id') };
}

const tenPercent = { type: 'percent' as const, percent_off: 10 };
const past = '2020-01-01T00:00:00.000Z';
const future = '2099-01-01T00:00:00.000Z';

describe('what a code gives', () => {
  it('a percent promotion with a basket: the amount in the message and its content, recorded on the code and the transaction', async () => {
    const { id, codes } = await promotion({ discount: tenPercent, minimum_basket: { amount: 2000, currency: 'EUR' }, valid_until: future });
    const sale = newSale({ basket: { total: 2505, currency: 'EUR' } });
    const response = await redeem({ ...sale, codes });
    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({
      transaction: {
        errors: [],
        display_messages: [
          {
            message: `Code ${codes[0]} redeemed: 2.51 EUR off`,
            message_id: 'code_redeemed',
            message_content: {
              code: codes[0],
              code_generator_id: id,
              description: 'Winter promotion',
              redeemed_at: expect.stringMatching(RFC3339_MILLIS_UTC),
              discount: tenPercent,
              discount_amount: 251,
              currency: 'EUR',
            },
            priority: 1,
          },
        ],
      },
    });
    const code = await lookUp(id, codes[0]!);
    expect(code.json.code).toMatchObject({ discount_amount: 251, currency: 'EUR', site_id: 'S-BER-1' });
    const [transaction] = await posTransactionsOf(ctx.account.accountId);
    expect(transaction!.codes).toEqual([expect.objectContaining({ code: codes[0], discount: tenPercent, discount_amount: 251, currency: 'EUR' })]);
  });

  it('no basket, or type none: the discount object without an amount', async () => {
    const percent = await promotion({ discount: tenPercent });
    const plain = await promotion({});
    const response = await redeem({ ...newSale(), codes: [percent.codes[0]!, plain.codes[0]!] });
    expect(response.status, response.text).toBe(200);
    expect(messagesOf(response).map((m) => [m.message, m.message_content.discount, m.message_content.discount_amount])).toEqual([
      [`Code ${percent.codes[0]} redeemed`, tenPercent, undefined],
      [`Code ${plain.codes[0]} redeemed`, { type: 'none' }, undefined],
    ]);
    const withBasket = await redeem({ ...newSale({ basket: { total: 1000, currency: 'EUR' } }), codes: [plain.codes[0]!] });
    expect(withBasket.status).toBe(409); // held by the first sale
    const plainToo = await promotion({});
    const none = await redeem({ ...newSale({ basket: { total: 1000, currency: 'EUR' } }), codes: plainToo.codes });
    expect(messagesOf(none)[0]).toMatchObject({ message: `Code ${plainToo.codes[0]} redeemed`, message_content: { discount: { type: 'none' } } });
    expect(messagesOf(none)[0]!.message_content).not.toHaveProperty('discount_amount');
    expect((await lookUp(plainToo.id, plainToo.codes[0]!)).json.code).toMatchObject({ discount_amount: null, currency: null });
  });

  it('several codes apply in order, each to what is left, down to 0; a code held already takes off what it recorded', async () => {
    const fixed = await promotion({ discount: { type: 'amount', amount_off: 700, currency: 'EUR' } }, 3);
    const half = await promotion({ discount: { type: 'percent', percent_off: 50, max_amount_off: 200, currency: 'EUR' } }, 2);
    const sale = newSale({ basket: { total: 1500, currency: 'EUR' } });
    const first = await redeem({ ...sale, codes: [fixed.codes[0]!, half.codes[0]!, fixed.codes[1]!, fixed.codes[2]!] });
    expect(first.status, first.text).toBe(200);
    // 1500 - 700 = 800; 50 % of 800 capped at 200 → 600; 700 → 0 left; the last takes nothing.
    expect(messagesOf(first).map((m) => m.message_content.discount_amount)).toEqual([700, 200, 600, 0]);
    expect(messagesOf(first).map((m) => m.message)).toEqual([
      `Code ${fixed.codes[0]} redeemed: 7.00 EUR off`,
      `Code ${half.codes[0]} redeemed: 2.00 EUR off`,
      `Code ${fixed.codes[1]} redeemed: 6.00 EUR off`,
      `Code ${fixed.codes[2]} redeemed: 0.00 EUR off`,
    ]);
    // The till adds a code to the sale: the held ones take off what they recorded first.
    const more = await redeem({ ...sale, codes: [fixed.codes[0]!, half.codes[1]!] });
    expect(more.status, more.text).toBe(200);
    expect(messagesOf(more).map((m) => m.message_content.discount_amount)).toEqual([700, 200]);
  });

  it('a zero-decimal currency (JPY) and a basket of 0', async () => {
    const yen = await promotion({ discount: { type: 'percent', percent_off: 12.5, max_amount_off: 1000, currency: 'JPY' } }, 2);
    const response = await redeem({ ...newSale({ basket: { total: 2404, currency: 'JPY' } }), codes: [yen.codes[0]!] });
    expect(response.status, response.text).toBe(200);
    expect(messagesOf(response)[0]).toMatchObject({
      message: `Code ${yen.codes[0]} redeemed: 301 JPY off`,
      message_content: { discount_amount: 301, currency: 'JPY' },
    });
    const zero = await redeem({ ...newSale({ basket: { total: 0, currency: 'JPY' } }), codes: [yen.codes[1]!] });
    expect(messagesOf(zero)[0]).toMatchObject({ message: `Code ${yen.codes[1]} redeemed: 0 JPY off`, message_content: { discount_amount: 0 } });
  });

  it('a check computes the same answer and writes nothing', async () => {
    const { id, codes } = await promotion({ discount: { type: 'amount', amount_off: 250, currency: 'EUR' } });
    const before = await snapshot();
    const response = await check({ ...newSale({ basket: { total: 1000, currency: 'EUR' } }), codes });
    expect(response.status, response.text).toBe(200);
    expect(messagesOf(response)).toEqual([
      {
        message: `Code ${codes[0]} is valid: 2.50 EUR off`,
        message_id: 'code_valid',
        message_content: {
          code: codes[0],
          code_generator_id: id,
          description: 'Winter promotion',
          discount: { type: 'amount', amount_off: 250, currency: 'EUR' },
          discount_amount: 250,
          currency: 'EUR',
        },
        priority: 1,
      },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('a retry answers with the recorded discount and amount after a PATCH of the discount, and after the promotion ended', async () => {
    const { id, codes } = await promotion({ discount: tenPercent });
    const sale = { ...newSale({ basket: { total: 3000, currency: 'EUR' } }), codes };
    const first = await redeem(sale);
    expect(messagesOf(first)[0]!.message_content).toMatchObject({ discount: tenPercent, discount_amount: 300 });
    await patch(id, { discount: { type: 'amount', amount_off: 999, currency: 'EUR' } });
    const again = await redeem(sale);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    await patch(id, { valid_until: past });
    const after = await redeem(sale);
    expect(after.json).toEqual(first.json);
    expect((await check(sale)).status).toBe(200);
  });
});

/** The refusal of one code: its errors entry and display message. */
const refusalOf = (response: { status: number; json: any }) => ({
  status: response.status,
  errors: response.json.transaction.errors.map((e: { message: string }) => e.message),
  messages: messagesOf(response).map(({ message, message_id, message_content }) => ({ message, message_id, message_content })),
});

describe('a code outside its terms is refused, writing nothing', () => {
  it('code_not_yet_valid, with the moment in words', async () => {
    const { id, codes } = await promotion({ valid_from: '2099-12-01T10:00:00+01:00' });
    const before = await snapshot();
    const response = await redeem({ ...newSale(), codes });
    expect(refusalOf(response)).toEqual({
      status: 409,
      errors: [`Code ${codes[0]} belongs to code generator ${id}, valid from 2099-12-01T09:00:00.000Z`],
      messages: [
        {
          message: `Code ${codes[0]} is valid from 1 December 2099 09:00 UTC. Do not accept it before then.`,
          message_id: 'code_not_yet_valid',
          message_content: { code: codes[0], code_generator_id: id, valid_from: '2099-12-01T09:00:00.000Z' },
        },
      ],
    });
    expect(await snapshot()).toEqual(before);
  });

  it('code_expired', async () => {
    const { id, codes } = await promotion({ valid_until: past });
    const response = await redeem({ ...newSale(), codes });
    expect(refusalOf(response)).toEqual({
      status: 409,
      errors: [`Code ${codes[0]} belongs to code generator ${id}, valid until ${past}`],
      messages: [
        {
          message: `Code ${codes[0]} expired on 1 January 2020 00:00 UTC. Do not accept it.`,
          message_id: 'code_expired',
          message_content: { code: codes[0], code_generator_id: id, valid_until: past },
        },
      ],
    });
  });

  it('code_not_valid_at_site, site ids compared exactly', async () => {
    const { id, codes } = await promotion({ site_ids: ['S-BER-1', 'S-BER-2'] });
    const response = await redeem({ ...newSale({ site_id: 's-ber-1' }), codes });
    expect(refusalOf(response)).toEqual({
      status: 409,
      errors: [`Code ${codes[0]} belongs to code generator ${id}, which does not list site s-ber-1`],
      messages: [
        {
          message: `Code ${codes[0]} cannot be used in this store. Do not accept it here.`,
          message_id: 'code_not_valid_at_site',
          message_content: { code: codes[0], code_generator_id: id, site_id: 's-ber-1' },
        },
      ],
    });
    expect((await redeem({ ...newSale({ site_id: 'S-BER-2' }), codes })).status).toBe(200);
  });

  it('basket_required, currency_mismatch and basket_below_minimum', async () => {
    const minimum = { amount: 2000, currency: 'EUR' };
    const { id, codes } = await promotion({ discount: tenPercent, minimum_basket: minimum });
    const code = codes[0]!;
    expect(refusalOf(await redeem({ ...newSale(), codes }))).toEqual({
      status: 409,
      errors: [`Code ${code} needs a minimum basket of 20.00 EUR, and the transaction has no basket`],
      messages: [
        {
          message: `Code ${code} applies only to sales of 20.00 EUR or more, and this till did not send the sale's total. Call support: the till must send the basket with the code.`,
          message_id: 'basket_required',
          message_content: { code, code_generator_id: id, minimum_basket: minimum },
        },
      ],
    });
    expect(refusalOf(await redeem({ ...newSale({ basket: { total: 5000, currency: 'USD' } }), codes }))).toEqual({
      status: 409,
      errors: [`Code ${code} is for amounts in EUR; the basket is in USD`],
      messages: [
        {
          message: `Code ${code} is for sales in EUR, and this sale is in USD. Do not accept it.`,
          message_id: 'currency_mismatch',
          message_content: { code, code_generator_id: id, currency: 'EUR', basket_currency: 'USD' },
        },
      ],
    });
    expect(refusalOf(await redeem({ ...newSale({ basket: { total: 1999, currency: 'EUR' } }), codes }))).toEqual({
      status: 409,
      errors: [`Code ${code} needs a basket of at least 20.00 EUR; the basket is 19.99 EUR`],
      messages: [
        {
          message: `Code ${code} applies only to sales of 20.00 EUR or more; this sale is 19.99 EUR. Add items, or do not accept it.`,
          message_id: 'basket_below_minimum',
          message_content: { code, code_generator_id: id, minimum_basket: minimum, basket_total: 1999 },
        },
      ],
    });
    const exact = await redeem({ ...newSale({ basket: { total: 2000, currency: 'EUR' } }), codes });
    expect(exact.status, exact.text).toBe(200);
    expect(messagesOf(exact)[0]!.message_content.discount_amount).toBe(200);
  });

  it('the order when several apply: the first broken rule names the code, then held by another transaction', async () => {
    const everything = await promotion({
      valid_from: future,
      valid_until: '2099-06-01T00:00:00.000Z',
      site_ids: ['S-ELSEWHERE'],
      minimum_basket: { amount: 100, currency: 'EUR' },
    });
    await patch(everything.id, { status: 'inactive' });
    // Judged in turn, lifting each rule (valid_until stays after valid_from).
    const sale = newSale({ basket: { total: 50, currency: 'USD' } });
    const ids = async () => messagesOf(await redeem({ ...sale, codes: everything.codes })).map((m) => m.message_id);
    expect(await ids()).toEqual(['code_generator_inactive']);
    await patch(everything.id, { status: 'active' });
    expect(await ids()).toEqual(['code_not_yet_valid']);
    await patch(everything.id, { valid_from: past, valid_until: '2020-06-01T00:00:00.000Z' });
    expect(await ids()).toEqual(['code_expired']);
    await patch(everything.id, { valid_until: null });
    expect(await ids()).toEqual(['code_not_valid_at_site']);
    await patch(everything.id, { site_ids: null });
    expect(messagesOf(await redeem({ ...sale, basket: null, codes: everything.codes } as Transaction)).map((m) => m.message_id)).toEqual(['basket_required']);
    expect(await ids()).toEqual(['currency_mismatch']);
    expect(messagesOf(await redeem({ ...sale, basket: { total: 50, currency: 'EUR' }, codes: everything.codes })).map((m) => m.message_id)).toEqual([
      'basket_below_minimum',
    ]);
    // Held by another sale: a broken term is named first, then code_already_redeemed.
    const taken = await promotion({ minimum_basket: { amount: 100, currency: 'EUR' } });
    expect((await redeem({ ...newSale({ basket: { total: 100, currency: 'EUR' } }), codes: taken.codes })).status).toBe(200);
    expect(messagesOf(await redeem({ ...newSale(), codes: taken.codes })).map((m) => m.message_id)).toEqual(['basket_required']);
    expect(messagesOf(await redeem({ ...newSale({ basket: { total: 100, currency: 'EUR' } }), codes: taken.codes })).map((m) => m.message_id)).toEqual([
      'code_already_redeemed',
    ]);
  });

  it('a check refuses as a redemption does, with the same bodies', async () => {
    const { codes } = await promotion({ valid_until: past });
    const sale = { ...newSale(), codes };
    const refused = await check(sale);
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual((await redeem(sale)).json);
  });

  it('a PATCH takes effect at once: a promotion ended, a site removed, a minimum raised', async () => {
    const { id, codes } = await promotion({ site_ids: ['S-BER-1', 'S-BER-2'] }, 4);
    expect((await redeem({ ...newSale(), codes: [codes[0]!] })).status).toBe(200);
    await patch(id, { site_ids: ['S-BER-2'] });
    expect(messagesOf(await redeem({ ...newSale(), codes: [codes[1]!] })).map((m) => m.message_id)).toEqual(['code_not_valid_at_site']);
    await patch(id, { valid_until: past });
    expect(messagesOf(await redeem({ ...newSale({ site_id: 'S-BER-2' }), codes: [codes[1]!] })).map((m) => m.message_id)).toEqual(['code_expired']);
    await patch(id, { valid_until: null, minimum_basket: { amount: 5000, currency: 'EUR' } });
    expect(
      messagesOf(await check({ ...newSale({ site_id: 'S-BER-2', basket: { total: 4999, currency: 'EUR' } }), codes: [codes[2]!] })).map((m) => m.message_id),
    ).toEqual(['basket_below_minimum']);
    expect((await redeem({ ...newSale({ site_id: 'S-BER-2', basket: { total: 5000, currency: 'EUR' } }), codes: [codes[2]!] })).status).toBe(200);
  });
});

describe('the basket', () => {
  it('422 for a malformed basket, naming it; null is no basket; unknown keys inside it are ignored', async () => {
    const { codes } = await promotion({ discount: tenPercent });
    for (const basket of [{ total: -1, currency: 'EUR' }, { total: 1.5, currency: 'EUR' }, { total: 1e12 + 1, currency: 'EUR' }, { currency: 'EUR' }]) {
      const response = await redeem({ ...newSale(), basket, codes } as Transaction);
      expect(response.status, JSON.stringify(basket)).toBe(422);
      expect(response.json.transaction.errors[0].message).toMatch(/^transaction\.basket\.total /);
    }
    for (const basket of [{ total: 1, currency: 'eur' }, { total: 1, currency: 'XYZ' }, { total: 1 }]) {
      const response = await redeem({ ...newSale(), basket, codes } as Transaction);
      expect(response.status, JSON.stringify(basket)).toBe(422);
      expect(response.json.transaction.errors[0].message).toMatch(/^transaction\.basket\.currency /);
    }
    const nulled = await redeem({ ...newSale(), basket: null, codes } as Transaction);
    expect(nulled.status, nulled.text).toBe(200);
    expect(messagesOf(nulled)[0]!.message_content).not.toHaveProperty('discount_amount');
  });

  it('takes unknown keys inside the basket without complaint', async () => {
    const { codes } = await promotion({ discount: tenPercent });
    const response = await redeem({ ...newSale(), basket: { total: 1000, currency: 'EUR', items: 3 }, codes } as Transaction);
    expect(response.status, response.text).toBe(200);
    expect(messagesOf(response)[0]!.message_content.discount_amount).toBe(100);
  });
});
