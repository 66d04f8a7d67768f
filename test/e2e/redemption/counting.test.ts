import { describe, expect, it } from 'vitest';
import { winterPromotion } from '../../support/fixtures.ts';
import { send, type CoreBody, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { countItemsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * Counting at the till (PRODUCT.md "Counting"), over HTTP and checked against the OpenAPI
 * documents: every new refusal with its exact texts and content, the order when several apply,
 * the codes of one request counting together, checks that answer as a redemption would and write
 * nothing, voids that give every use back, and a customer id that is stored only as a keyed hash.
 * The races are in test/attack/redemption/counting-races.test.ts.
 */
const ctx = useLocalApi();

type Generator = CoreBody<'createCodeGenerator'>['code_generator'];
type Transaction = PosBody<'redeemCodes'>['transaction'];
let sales = 0;
const newSale = (fields: Partial<Transaction> = {}): Omit<Transaction, 'codes'> => ({ site_id: 'S-HAM-2', pos_transaction_id: `C-${++sales}`, ...fields });

async function promotion(limits: Partial<Generator>, count = 1) {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...limits } } }),
  );
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id as number;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(issued.status, issued.text).toBe(201);
  return { id, codes: issued.json.codes as string[] };
}
const redeem = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/redeemed_codes', { body: { transaction } }));
const check = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/validated_codes', { body: { transaction } }));
const voidSale = (sale: Omit<Transaction, 'codes'>) =>
  send(ctx.api, ctx.account.token, ({ pos }) =>
    pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: sale.site_id, pos_transaction_id: sale.pos_transaction_id } } }),
  );
const patch = async (id: number, fields: Record<string, unknown>) => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id } }, body: { code_generator: fields as CoreBody<'updateCodeGenerator'>['code_generator'] } }),
  );
  expect(response.status, response.text).toBe(200);
};
const messagesOf = (response: { json: any }) => response.json.transaction.display_messages as { message: string; message_id: string; message_content: any }[];
const errorsOf = (response: { json: any }) => (response.json.transaction.errors as { message: string }[]).map((e) => e.message);

describe('a multi-use code', () => {
  it('is held by up to max_redemptions_per_code transactions at once; the next is told it is used up, and a void makes room', async () => {
    const { id, codes } = await promotion({ max_redemptions_per_code: 2 });
    const [first, second, third] = [newSale(), newSale(), newSale()];
    expect((await redeem({ ...first, codes })).status).toBe(200);
    expect((await redeem({ ...second, codes })).status).toBe(200);
    const refused = await redeem({ ...third, codes });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toEqual({
      transaction: {
        errors: [{ message: `Code ${codes[0]} is held by as many transactions as its maximum (2)` }],
        display_messages: [
          {
            message: `Code ${codes[0]} has been used as many times as allowed (2). Do not accept it.`,
            message_id: 'code_usage_limit_reached',
            message_content: { code: codes[0], code_generator_id: id, max_redemptions_per_code: 2 },
            priority: 1,
          },
        ],
      },
    });
    expect(messagesOf(await check({ ...third, codes }))[0]!.message_id).toBe('code_usage_limit_reached');
    expect((await voidSale(first)).status).toBe(200);
    expect(messagesOf(await check({ ...third, codes }))[0]!.message_id).toBe('code_valid');
    expect((await redeem({ ...third, codes })).status).toBe(200);
  });

  it('a retry, or the same code listed again by its transaction, holds it once', async () => {
    const { codes } = await promotion({ max_redemptions_per_code: 3 });
    const sale = newSale();
    for (let i = 0; i < 3; i++) expect((await redeem({ ...sale, codes: [codes[0]!, codes[0]!.toLowerCase()] })).status).toBe(200);
    const [transaction] = (await posTransactionsOf(ctx.account.accountId)).filter((t) => t.pos_transaction_id === sale.pos_transaction_id);
    expect(transaction!.codes).toHaveLength(1);
    expect((await redeem({ ...newSale(), codes })).status).toBe(200);
    expect((await redeem({ ...newSale(), codes })).status).toBe(200);
    expect(messagesOf(await redeem({ ...newSale(), codes }))[0]!.message_id).toBe('code_usage_limit_reached');
  });

  it('with a maximum of 1 after a PATCH, its refusal is code_already_redeemed', async () => {
    const { id, codes } = await promotion({ max_redemptions_per_code: 5 });
    expect((await redeem({ ...newSale(), codes })).status).toBe(200);
    await patch(id, { max_redemptions_per_code: 1 });
    expect(messagesOf(await redeem({ ...newSale(), codes }))[0]!.message_id).toBe('code_already_redeemed');
  });
});

describe("a promotion's budget", () => {
  it('counts uses across its codes, the codes of one request together and in their order', async () => {
    const { id, codes } = await promotion({ max_redemptions: 3 }, 5);
    expect((await redeem({ ...newSale(), codes: [codes[0]!] })).status).toBe(200);
    // Two left: of three codes in one request, the third is refused, and nothing is written.
    const refused = await redeem({ ...newSale(), codes: [codes[1]!, codes[2]!, codes[3]!] });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.transaction.display_messages).toEqual([
      {
        message: `The promotion of code ${codes[3]} has been used up. Do not accept it.`,
        message_id: 'promotion_budget_exhausted',
        message_content: { code: codes[3], code_generator_id: id, max_redemptions: 3 },
        priority: 1,
      },
    ]);
    expect(errorsOf(refused)).toEqual([`Code ${codes[3]} belongs to code generator ${id}, whose budget of 3 redemptions is used up`]);
    expect((await redeem({ ...newSale(), codes: [codes[1]!, codes[2]!] })).status).toBe(200);
    expect(messagesOf(await redeem({ ...newSale(), codes: [codes[4]!] }))[0]!.message_id).toBe('promotion_budget_exhausted');
  });

  it('set by a PATCH on a promotion already redeemed from counts what it holds; raised, it gives more', async () => {
    const { id, codes } = await promotion({}, 4);
    expect((await redeem({ ...newSale(), codes: [codes[0]!, codes[1]!] })).status).toBe(200);
    await patch(id, { max_redemptions: 3 });
    expect((await redeem({ ...newSale(), codes: [codes[2]!] })).status).toBe(200);
    expect(messagesOf(await redeem({ ...newSale(), codes: [codes[3]!] }))[0]!.message_id).toBe('promotion_budget_exhausted');
    await patch(id, { max_redemptions: 4 });
    expect((await redeem({ ...newSale(), codes: [codes[3]!] })).status).toBe(200);
  });
});

describe("a customer's limit", () => {
  it('needs a customer id, then counts that customer across the promotion, never another', async () => {
    const { id, codes } = await promotion({ max_redemptions_per_customer: 1, max_redemptions_per_code: 10 });
    const required = await redeem({ ...newSale(), codes });
    expect(required.status, required.text).toBe(409);
    expect(required.json.transaction.display_messages).toEqual([
      {
        message: `Code ${codes[0]} needs the customer's loyalty card or customer number. Scan it, then the code again.`,
        message_id: 'customer_required',
        message_content: { code: codes[0], code_generator_id: id, max_redemptions_per_customer: 1 },
        priority: 1,
      },
    ]);
    const card = 'LOYAL-0042';
    expect((await redeem({ ...newSale({ customer_id: card }), codes })).status).toBe(200);
    const limited = await redeem({ ...newSale({ customer_id: card }), codes });
    expect(limited.json.transaction.display_messages).toEqual([
      {
        message: `This customer has already used this promotion as often as allowed (1). Do not accept code ${codes[0]} for them.`,
        message_id: 'customer_limit_reached',
        message_content: { code: codes[0], code_generator_id: id, max_redemptions_per_customer: 1 },
        priority: 1,
      },
    ]);
    expect((await redeem({ ...newSale({ customer_id: 'LOYAL-0043' }), codes })).status).toBe(200);
    // Stored only as a keyed hash: not the id, nor anything holding it.
    const counts = await countItemsOf(ctx.account.accountId);
    const transactions = await posTransactionsOf(ctx.account.accountId);
    expect(JSON.stringify([counts, transactions])).not.toContain('LOYAL-004');
  });

  it('a void gives the customer their use back', async () => {
    const { codes } = await promotion({ max_redemptions_per_customer: 1 }, 2);
    const sale = newSale({ customer_id: 'CARD-9' });
    expect((await redeem({ ...sale, codes: [codes[0]!] })).status).toBe(200);
    expect(messagesOf(await check({ ...newSale({ customer_id: 'CARD-9' }), codes: [codes[1]!] }))[0]!.message_id).toBe('customer_limit_reached');
    expect((await voidSale(sale)).status).toBe(200);
    expect((await redeem({ ...newSale({ customer_id: 'CARD-9' }), codes: [codes[1]!] })).status).toBe(200);
  });
});

describe('the order of the refusals', () => {
  it('terms first, then customer_required, the code, the budget, the customer; one entry per failing code', async () => {
    const inactive = await promotion({ max_redemptions_per_customer: 1 });
    await patch(inactive.id, { status: 'inactive' });
    const needsCustomer = await promotion({ max_redemptions_per_customer: 1, max_redemptions: 1 });
    const full = await promotion({ max_redemptions: 1 }, 2);
    expect((await redeem({ ...newSale(), codes: [full.codes[0]!] })).status).toBe(200);
    const response = await redeem({ ...newSale(), codes: [inactive.codes[0]!, needsCustomer.codes[0]!, full.codes[1]!] });
    expect(response.status, response.text).toBe(409);
    expect(messagesOf(response).map((m) => m.message_id)).toEqual(['code_generator_inactive', 'customer_required', 'promotion_budget_exhausted']);
  });

  it('a check writes nothing: the counts stay as they were', async () => {
    const { codes } = await promotion({ max_redemptions_per_code: 4, max_redemptions: 10, max_redemptions_per_customer: 2 });
    expect((await redeem({ ...newSale({ customer_id: 'C-1' }), codes })).status).toBe(200);
    const before = await countItemsOf(ctx.account.accountId);
    const valid = await check({ ...newSale({ customer_id: 'C-1' }), codes });
    expect(messagesOf(valid).map((m) => m.message_id)).toEqual(['code_valid']);
    expect(await countItemsOf(ctx.account.accountId)).toEqual(before);
  });
});
