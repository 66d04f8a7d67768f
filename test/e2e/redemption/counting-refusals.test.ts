import { describe, expect, it } from 'vitest';
import { winterPromotion } from '../../support/fixtures.ts';
import { send, type CoreBody, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * The answers of refused redemptions with the counts of PRODUCT.md "Counting", over HTTP and
 * checked against the OpenAPI documents: every code a count refuses is named, whatever refused
 * the request first; several codes of one request count together from a customer's first use
 * on; a voided transaction holds nothing; MAX_HELD_CODES counts every code a request would add;
 * a request whose counts are all short (a limit lowered below the grants reserved) is answered.
 * Each was found by the redemption fuzzer (test/attack/redemption/fuzz.test.ts, the counting
 * property; the seed and step are named in each test).
 */
const ctx = useLocalApi();

type Generator = CoreBody<'createCodeGenerator'>['code_generator'];
type Transaction = PosBody<'redeemCodes'>['transaction'];
let sales = 0;
const newSale = (): Omit<Transaction, 'codes'> => ({ site_id: 'S-CNT-1', pos_transaction_id: `C-${++sales}` });

async function promotion(fields: Partial<Generator>, count = 1) {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...fields } } }),
  );
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id as number;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(issued.status, issued.text).toBe(201);
  return { id, codes: issued.json.codes as string[] };
}
const patch = async (id: number, fields: Partial<Generator>) => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id } }, body: { code_generator: fields as CoreBody<'updateCodeGenerator'>['code_generator'] } }),
  );
  expect(response.status, response.text).toBe(200);
};
const redeem = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/redeemed_codes', { body: { transaction } }));
const check = (transaction: Transaction) => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/validated_codes', { body: { transaction } }));
const voidSale = async (sale: Omit<Transaction, 'codes'>) => {
  const response = await send(ctx.api, ctx.account.token, ({ pos }) =>
    pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: sale.site_id, pos_transaction_id: sale.pos_transaction_id } } }),
  );
  expect(response.status, response.text).toBe(200);
};
/** Redeems `codes` on `sale`, ten at a time, each request answered 200. */
async function holdAll(sale: Omit<Transaction, 'codes'>, codes: string[]) {
  for (let start = 0; start < codes.length; start += 10) {
    const response = await redeem({ ...sale, codes: codes.slice(start, start + 10) });
    expect(response.status, response.text).toBe(200);
  }
}
const idsOf = (response: { json: any }) => (response.json.transaction.display_messages as { message_id: string }[]).map((m) => m.message_id);
const messagesOf = (response: { json: any }) =>
  response.json.transaction.display_messages as { message: string; message_id: string; message_content: unknown }[];

async function snapshot() {
  const [codes, transactions] = await Promise.all([codeItemsOf(ctx.account.accountId), posTransactionsOf(ctx.account.accountId)]);
  const order = (items: Record<string, any>[], key: string) => [...items].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return { codes: order(codes, 'code_key'), transactions: order(transactions, 'transaction_key') };
}

describe('a customer limit, from the customer’s first use', () => {
  // FUZZ_SEED=1, step 65: two codes of a promotion with a limit of 1 per customer, the customer's first use, both redeemed.
  it('two codes of one promotion in one request count together: the second is refused when the limit is 1', async () => {
    const { id, codes } = await promotion({ max_redemptions_per_customer: 1 }, 2);
    const before = await snapshot();

    const response = await redeem({ ...newSale(), customer_id: 'CARD-FIRST', codes });

    expect(response.status, response.text).toBe(409);
    expect(response.json.transaction.errors).toEqual([{ message: `The customer holds as many uses of code generator ${id} as its limit per customer (1)` }]);
    expect(messagesOf(response)).toEqual([
      {
        message: `This customer has already used this promotion as often as allowed (1). Do not accept code ${codes[1]} for them.`,
        message_id: 'customer_limit_reached',
        message_content: { code: codes[1], code_generator_id: id, max_redemptions_per_customer: 1 },
        priority: 1,
      },
    ]);
    expect(await snapshot()).toEqual(before);
    // One of them alone is the customer's one use.
    expect((await redeem({ ...newSale(), customer_id: 'CARD-FIRST', codes: [codes[1]!] })).status).toBe(200);
    expect(idsOf(await redeem({ ...newSale(), customer_id: 'CARD-FIRST', codes: [codes[0]!] }))).toEqual(['customer_limit_reached']);
  });
});

describe('a refusal names every code its counts refuse', () => {
  // FUZZ_SEED=1, step 15: a budget used up, not named beside another code's customer_required.
  it('whatever refused the request first: a budget used up beside a code that needs a customer', async () => {
    const budget = await promotion({ max_redemptions: 1 }, 2);
    const loyalty = await promotion({ max_redemptions_per_customer: 2 }, 1);
    expect((await redeem({ ...newSale(), codes: [budget.codes[0]!] })).status).toBe(200);

    const transaction = { ...newSale(), codes: [budget.codes[1]!, loyalty.codes[0]!] };
    for (const response of [await redeem(transaction), await check(transaction)]) {
      expect(response.status, response.text).toBe(409);
      expect(messagesOf(response)).toEqual([
        {
          message: `The promotion of code ${budget.codes[1]} has been used up. Do not accept it.`,
          message_id: 'promotion_budget_exhausted',
          message_content: { code: budget.codes[1], code_generator_id: budget.id, max_redemptions: 1 },
          priority: 1,
        },
        {
          message: `Code ${loyalty.codes[0]} needs the customer's loyalty card or customer number. Scan it, then the code again.`,
          message_id: 'customer_required',
          message_content: { code: loyalty.codes[0], code_generator_id: loyalty.id, max_redemptions_per_customer: 2 },
          priority: 1,
        },
      ]);
    }
  });

  // FUZZ_SEED=1, step 143 (a voided sale's retry): the customer's limit, not named beside transaction_voided.
  it('on a voided transaction: a multi-use code whose uses are all held, a budget used up, a customer at the limit', async () => {
    const flyer = await promotion({ max_redemptions_per_code: 2 }, 1);
    const budget = await promotion({ max_redemptions: 1 }, 2);
    const loyalty = await promotion({ max_redemptions_per_customer: 1, max_redemptions_per_code: 5 }, 1);
    await holdAll(newSale(), [flyer.codes[0]!, budget.codes[0]!]);
    await holdAll({ ...newSale(), customer_id: 'CARD-VOID' }, [flyer.codes[0]!, loyalty.codes[0]!]);
    const sale = newSale();
    await voidSale(sale);

    const response = await redeem({ ...sale, customer_id: 'CARD-VOID', codes: [flyer.codes[0]!, budget.codes[1]!, loyalty.codes[0]!] });

    expect(response.status, response.text).toBe(409);
    expect(idsOf(response)).toEqual(['transaction_voided', 'code_usage_limit_reached', 'promotion_budget_exhausted', 'customer_limit_reached']);
  });
});

describe('a voided transaction holds nothing', () => {
  // FUZZ_SEED=1, step 143: a till's retry on its voided sale, of a code the void released and another sale took since.
  it('a code it held before its void is judged again: named when another transaction holds it now', async () => {
    const { id, codes } = await promotion({}, 1);
    const sale = newSale();
    await holdAll(sale, codes);
    await voidSale(sale);
    await holdAll(newSale(), codes);

    const response = await redeem({ ...sale, codes });

    expect(response.status, response.text).toBe(409);
    expect(messagesOf(response).map(({ message_id, message_content }) => ({ message_id, message_content }))).toEqual([
      { message_id: 'transaction_voided', message_content: { site_id: sale.site_id, pos_transaction_id: sale.pos_transaction_id } },
      { message_id: 'code_already_redeemed', message_content: { code: codes[0], code_generator_id: id } },
    ]);
  });

  it('and counts no code towards MAX_HELD_CODES', async () => {
    const { codes } = await promotion({}, 25);
    const sale = newSale();
    await holdAll(sale, codes.slice(0, 21));
    await voidSale(sale);

    const response = await redeem({ ...sale, codes: codes.slice(21, 25) });

    expect(idsOf(response)).toEqual(['transaction_voided']);
  });
});

describe('MAX_HELD_CODES counts every code a request would add', () => {
  it('a code redeemed while single-use, then made multi-use: it has uses left, so it counts', async () => {
    const plenty = await promotion({ max_redemptions_per_code: 1000 }, 24);
    const raised = await promotion({}, 1);
    await holdAll(newSale(), raised.codes);
    await patch(raised.id, { max_redemptions_per_code: 3 });
    const sale = newSale();
    await holdAll(sale, plenty.codes);
    const before = await snapshot();

    const response = await redeem({ ...sale, codes: raised.codes });

    expect(response.status, response.text).toBe(409);
    expect(messagesOf(response)).toEqual([
      {
        message: 'A sale can hold at most 24 codes: this one holds 24, and 1 more would be too many. Take these codes in another sale.',
        message_id: 'too_many_codes',
        message_content: { held: 24, adding: 1, limit: 24 },
        priority: 1,
      },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('a multi-use code whose uses are all held does not count, as a single-use code another transaction holds does not', async () => {
    const plenty = await promotion({ max_redemptions_per_code: 1000 }, 24);
    const full = await promotion({ max_redemptions_per_code: 2 }, 1);
    const single = await promotion({}, 1);
    await holdAll(newSale(), [...full.codes, ...single.codes]);
    await holdAll(newSale(), full.codes);
    const sale = newSale();
    await holdAll(sale, plenty.codes);

    const response = await redeem({ ...sale, codes: [full.codes[0]!, single.codes[0]!] });

    expect(response.status, response.text).toBe(409);
    expect(idsOf(response)).toEqual(['code_usage_limit_reached', 'code_already_redeemed']);
  });
});

describe('a limit lowered below the grants its shards reserve', () => {
  // FUZZ_SEED=22 (FUZZ_RUNS=200), step 67: ten codes of a flyer lowered from a million uses to one, released by a void: 503.
  it('a request of ten codes whose counts are all short takes their grants back at once, and is answered', async () => {
    const flyer = await promotion({ max_redemptions_per_code: 1_000_000 }, 10);
    const first = newSale();
    await holdAll(first, flyer.codes);
    await voidSale(first);
    await patch(flyer.id, { max_redemptions_per_code: 1 });

    const response = await redeem({ ...newSale(), codes: flyer.codes });

    expect(response.status, response.text).toBe(200);
    expect(idsOf(response)).toEqual(flyer.codes.map(() => 'code_redeemed'));
    expect(idsOf(await redeem({ ...newSale(), codes: [flyer.codes[0]!] }))).toEqual(['code_already_redeemed']);
  });
});
