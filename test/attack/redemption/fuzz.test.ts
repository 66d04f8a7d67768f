import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostId } from '../../../functions/routes.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { checkAgainstOpenApi } from '../../support/openapi.ts';
import { TEST_CUSTOMER_KEY } from '../../support/customer-key.ts';
import { eventsOf, posTransactionsOf, voidsOf } from '../../support/records.ts';
import { authenticated, callers, expectRequestIdHandled, headerChoice, openCallers, rawHeaders, textBodies } from '../fuzz/requests.ts';
import {
  bodies,
  bodyStatus,
  callerOf,
  contentType,
  core,
  createGenerator,
  eventsSummary,
  generators,
  issued,
  openShop,
  owner,
  stranger,
  tokenChoice,
  tokenHeaders,
  type Account,
  type TokenChoice,
} from '../fuzz/shop.ts';
import { MAX_BODY_BYTES, isJsonContentType, trimOws } from '../http/oracle.ts';
import { expectClientError, expectStandardHeaders, fuzzRuns, fuzzSeed, gatewayAnswer, seededRandom, sendTo } from '../support.ts';
import { consistentTerms } from '../fuzz/terms.ts';
import { expectCountsExact } from './count-tables.ts';
import {
  MAX_HELD_CODES,
  PROMOTION_FIELDS,
  expectedCounts,
  formatMoney,
  holdersOf,
  isCurrencyCode,
  judgeRedemption,
  newTillModel,
  promotionCurrency,
  judgeTill,
  judgeVoid,
  recordRedemption,
  recordVoid,
  usesOf,
  type Failure,
  type Promotion,
  type RedemptionBody,
  type RedemptionVerdict,
  type TillModel,
} from './oracle.ts';

/**
 * Property-based attacks on the till's routes through the local server: POST
 * /v2.0/voided_transactions with every header generated (fuzz/requests.ts), then, on the shop of
 * fuzz/shop.ts, redemptions, checks and voids of the same transactions (POST /v2.0/redeemed_codes,
 * /v2.0/validated_codes, /v2.0/voided_transactions) judged against a model of who holds which
 * code. Each property judges the answer with oracle.ts (written from PRODUCT.md) and reads the
 * tables back: a failed request writes nothing.
 *
 * The shop's promotions have terms (discounts of each type and currency, minimum baskets, valid
 * windows past, future and open, lists of sites with and without the fuzzer's), two of them
 * changed by PATCHes during the run; bodies carry baskets (valid, null, malformed). The oracle
 * names each failing code's first broken term in PRODUCT.md's order, and for a success each
 * code's discount, amount and currency, and the cashier's text.
 *
 * Then the counts ("Counting"): seeded sequences of steps on promotions with small limits
 * (multi-use codes, budgets, limits per customer), each step one request judged against the
 * model of oracle.ts: redemptions and checks with customer ids or none, of several promotions at
 * once, retries, voids, PATCHes raising and lowering the limits around what is held; the count
 * tables read whole along the way and at the end (count-tables.ts).
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; scale with FUZZ_RUNS=<runs per property>.
 */
const seed = fuzzSeed();
const routeRuns = fuzzRuns(400);
const numRuns = fuzzRuns(100);
const countingRuns = fuzzRuns(200);
/** The counting property reads its tables whole every this many steps (and at its end): FUZZ_TABLES_EVERY=1 finds the step that broke them. */
const tablesEvery = Number(process.env.FUZZ_TABLES_EVERY ?? 50);
console.log(
  `fuzz redemption: seed ${seed}, ${routeRuns} runs for POST /v2.0/voided_transactions, ${numRuns} for the till, ${countingRuns} steps of counting (replay: FUZZ_SEED=${seed} npx vitest run test/attack/redemption/fuzz.test.ts)`,
);
fc.configureGlobal({ seed, numRuns, endOnFailure: false });

/** A code generator (as a read shows it) as the till's judge reads it. */
const promotionOf = (generator: Record<string, unknown>): Promotion =>
  Object.fromEntries(PROMOTION_FIELDS.map((key) => [key, generator[key]])) as unknown as Promotion;

/** A code as a cashier may type it: the letters whose bit is set in `mask` in lower case. */
const mixCase = (code: string, mask: number) => [...code].map((c, i) => ((mask >> i) & 1 ? c.toLowerCase() : c)).join('');

/** The cashier's text of a refusal, as docs/redemption.md words it (a moment's wording only by its frame). */
function expectCashierText(text: string, failure: Failure, body: RedemptionBody) {
  const code = failure.code ?? (failure.content?.code as string);
  const content = failure.content ?? {};
  const minimum = content.minimum_basket as { amount: number; currency: string } | undefined;
  const basket = body.basket!;
  const where = `${failure.messageId}: ${text}`;
  switch (failure.messageId) {
    case 'code_not_found':
      return expect(text, where).toBe(`Code ${code} is not a valid code. Check that it was scanned or typed correctly; otherwise do not accept it.`);
    case 'code_generator_inactive':
      return expect(text, where).toBe(`Code ${code} belongs to a promotion that is not active. Do not accept it.`);
    case 'code_not_yet_valid':
      return expect(text, where).toMatch(
        new RegExp(`^Code ${code} is valid from \\d{1,2} [A-Z][a-z]+ \\d{4} \\d{2}:\\d{2}(:\\d{2})? UTC\\. Do not accept it before then\\.$`),
      );
    case 'code_expired':
      return expect(text, where).toMatch(
        new RegExp(`^Code ${code} expired on \\d{1,2} [A-Z][a-z]+ \\d{4} \\d{2}:\\d{2}(:\\d{2})? UTC\\. Do not accept it\\.$`),
      );
    case 'code_not_valid_at_site':
      return expect(text, where).toBe(`Code ${code} cannot be used in this store. Do not accept it here.`);
    case 'basket_required':
      return expect(text, where).toBe(
        `Code ${code} applies only to sales of ${formatMoney(minimum!.amount, minimum!.currency)} or more, and this till did not send the sale's total. Call support: the till must send the basket with the code.`,
      );
    case 'currency_mismatch':
      return expect(text, where).toBe(`Code ${code} is for sales in ${content.currency}, and this sale is in ${basket.currency}. Do not accept it.`);
    case 'basket_below_minimum':
      return expect(text, where).toBe(
        `Code ${code} applies only to sales of ${formatMoney(minimum!.amount, minimum!.currency)} or more; this sale is ${formatMoney(basket.total, basket.currency)}. Add items, or do not accept it.`,
      );
    case 'code_already_redeemed':
      return expect(text, where).toBe(`Code ${code} was already used in another sale. Do not accept it.`);
    case 'transaction_voided':
      return expect(text, where).toBe(`Transaction ${body.pos_transaction_id} was voided: no code can be redeemed on it. Start a new sale for these codes.`);
    case 'too_many_codes':
      return expect(text, where).toBe(
        `A sale can hold at most ${MAX_HELD_CODES} codes: this one holds ${content.held}, and ${content.adding} more would be too many. Take these codes in another sale.`,
      );
    case 'customer_required':
      return expect(text, where).toBe(`Code ${code} needs the customer's loyalty card or customer number. Scan it, then the code again.`);
    case 'code_usage_limit_reached':
      return expect(text, where).toBe(`Code ${code} has been used as many times as allowed (${content.max_redemptions_per_code}). Do not accept it.`);
    case 'promotion_budget_exhausted':
      return expect(text, where).toBe(`The promotion of code ${code} has been used up. Do not accept it.`);
    case 'customer_limit_reached':
      return expect(text, where).toBe(
        `This customer has already used this promotion as often as allowed (${content.max_redemptions_per_customer}). Do not accept code ${code} for them.`,
      );
  }
  throw new Error(`no cashier text known for ${failure.messageId}`);
}

/**
 * A valid redemption's or check's answer is the one the oracle judged: a refusal's status and
 * every message in order (id, content, cashier text), or a success's message per code (what it
 * gives, when it was redeemed: a held code its first time, the codes taken now this request's).
 * Returns the time of the codes taken now.
 */
function expectTillAnswer(
  what: 'redeem' | 'validate',
  body: RedemptionBody,
  model: TillModel,
  judged: RedemptionVerdict,
  response: { status: number; json: any },
  where: string,
): string | undefined {
  const display = response.json?.transaction?.display_messages as {
    message: string;
    message_id: string;
    message_content: Record<string, unknown>;
    priority: number;
  }[];
  if (judged.kind === 'refused') {
    expect(response.status, where).toBe(judged.status);
    expect(
      display.map((m) => m.message_id),
      where,
    ).toEqual(judged.failures.map((f) => f.messageId));
    expect(response.json.transaction.errors, where).toHaveLength(judged.failures.length);
    judged.failures.forEach((failure, i) => {
      const message = display[i]!;
      const content = failure.code === undefined ? failure.content : { code: failure.code, code_generator_id: failure.generatorId, ...failure.content };
      expect(message.message_content, where).toEqual(content);
      expectCashierText(message.message, failure, body);
      expect(message.priority).toBe(1);
    });
    return undefined;
  }
  expect(response.status, where).toBe(200);
  expect(response.json.transaction.errors).toEqual([]);
  expect(display, where).toHaveLength(judged.codes.length);
  const redeemedAt = display.find((_, i) => !judged.codes[i]!.held)?.message_content.redeemed_at as string | undefined;
  const me = JSON.stringify([body.site_id, body.pos_transaction_id]);
  const recorded = new Map((model.held.get(me) ?? []).map((held) => [held.code, held.redeemedAt]));
  judged.codes.forEach(({ code, generatorId, given, held }, i) => {
    const off = given.discount_amount === undefined ? '' : `: ${formatMoney(given.discount_amount, given.currency!)} off`;
    const at = what === 'validate' ? {} : { redeemed_at: held ? recorded.get(code) : redeemedAt };
    expect(display[i], where).toEqual({
      message: what === 'redeem' ? `Code ${code} redeemed${off}` : `Code ${code} is valid${off}`,
      message_id: what === 'redeem' ? 'code_redeemed' : 'code_valid',
      message_content: { code, code_generator_id: generatorId, description: model.promotions.get(generatorId)!.description, ...at, ...given },
      priority: 1,
    });
  });
  if (what === 'redeem' && judged.fresh.length > 0) expect(redeemedAt, where).toMatch(RFC3339_MILLIS_UTC);
  return redeemedAt;
}

let api: LocalApi;
beforeAll(async () => {
  api = await startTestApi();
  await openCallers();
  await openShop(api);
});
afterAll(() => api?.close());

describe('fuzzing the till routes through the local server', { timeout: 180_000 }, () => {
  it(`POST /v2.0/voided_transactions: ${routeRuns} generated requests, 4xx or a correct 200, nothing written on failure`, async () => {
    const host: HostId = 'pos';
    const path = '/v2.0/voided_transactions';
    const account = await newAccount();
    callers.owner = account;
    const voided = new Map<string, string>();
    const idText = fc.oneof(
      { arbitrary: fc.constantFrom('1', '2', 'site-1', '1234'), weight: 3 },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 128 }), weight: 1 },
    );
    const optionalText = fc.string({ unit: 'binary', maxLength: 128 });
    const validVoid = fc.record(
      {
        site_id: idText,
        pos_transaction_id: idText,
        occurred_at: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
        business_date: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
        register_id: optionalText,
        operator_id: optionalText,
        till_id: fc.constant(null),
        table_id: optionalText,
        posagent_version: optionalText,
        pos_vendor: optionalText,
        pos_version: optionalText,
        receipt_id: optionalText,
        unknown_future_field: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['site_id', 'pos_transaction_id'] },
    );
    const fields = ['site_id', 'pos_transaction_id', 'occurred_at', 'business_date', 'register_id', 'receipt_id', 'till_id'];
    const method = fc.oneof({ arbitrary: fc.constant('POST'), weight: 20 }, { arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), weight: 1 });
    let events = 0;

    await fc.assert(
      fc.asyncProperty(headerChoice, textBodies('transaction', validVoid, fields), method, async (h, body, verb) => {
        const response = await sendTo(api, host, { method: verb, path, headers: rawHeaders(h), body });
        const caller = authenticated(h.token);
        const bytes = Buffer.byteLength(body, 'utf8');
        let expected: number | 'voided' | 'undecided';
        let voidKey: string | undefined;
        if (verb !== 'POST') expected = gatewayAnswer(host, verb, path) ?? 404;
        else if (!caller) expected = 401;
        else if (bytes > MAX_BODY_BYTES) expected = 413;
        else if (h.contentType !== undefined && !isJsonContentType(trimOws(h.contentType))) expected = 415;
        else {
          const verdict = judgeVoid(body);
          if (verdict.kind === 'malformed') expected = 400;
          else if (verdict.kind === 'invalid') expected = 422;
          else if (verdict.kind === 'undecided') expected = 'undecided';
          else {
            expected = 'voided';
            voidKey = JSON.stringify([caller.accountId, verdict.value.site_id, verdict.value.pos_transaction_id]);
          }
        }
        if (expected === 'undecided') expected = response.status === 422 ? 422 : 'voided';

        if (expected !== 'voided') {
          expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(expected);
          expectClientError(host, response, verb);
          if (verb === 'POST') expectRequestIdHandled(h, response);
          expect(await eventsOf(account.accountId)).toHaveLength(events);
          return;
        }

        expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(200);
        expectStandardHeaders(response);
        expectRequestIdHandled(h, response);
        expect(response.json.transaction.errors).toEqual([]);
        const first = voidKey ? voided.get(voidKey) : undefined;
        if (first !== undefined) {
          expect(response.text).toBe(first);
        } else {
          voided.set(voidKey!, response.text);
          if (caller === callers.owner) events += 1;
        }
        expect(await eventsOf(account.accountId)).toHaveLength(events);
      }),
      { numRuns: routeRuns },
    );

    const records = await voidsOf(account.accountId);
    const ownerPrefix = `[${account.accountId},`;
    expect(records.map((r) => r.transaction_key).sort()).toEqual([...voided.keys()].filter((k) => k.startsWith(ownerPrefix)).sort());
    const recorded = await eventsOf(account.accountId);
    expect(recorded.map((e) => e.id).sort()).toEqual(records.map((r) => r.event_id).sort());
    console.log(`fuzz voidTransaction: ${routeRuns} runs, ${records.length} voids recorded`);
  });

  it(`POST /v2.0/redeemed_codes and /v2.0/validated_codes: ${numRuns} generated bodies, baskets, voids and changes of terms, judged against a model of the promotions and of who holds which code`, async () => {
    const day = 86_400_000;
    const start = Date.now();
    // Bounds far from the run's clock, so that no request straddles one: a month or a year away.
    const moments = [start - 400 * day, start - 30 * day, start + 30 * day, start + 400 * day];
    const iso = (moment: number) => new Date(moment).toISOString();
    // The owner's promotions: most break one term for some of the fuzzer's tills (or take a
    // discount), two change terms during the run; codes issued before any is deactivated.
    const [firstChange, secondChange] = fc.sample(consistentTerms(moments), { seed, numRuns: 2 });
    const plans: [string, Record<string, unknown>, number][] = [
      ['plain', { generation_type: 'tillgate', code_length: 6, prefix: 'TG-', description: 'till fuzz' }, 20],
      ['stopped', { generation_type: 'numeric', code_length: 6 }, 5],
      [
        'percent',
        {
          prefix: 'PC-',
          discount: { type: 'percent', percent_off: 12.5 },
          valid_from: iso(moments[0]!),
          valid_until: iso(moments[3]!),
          site_ids: ['FZ-SITE', 'FZ-OTHER'],
        },
        10,
      ],
      [
        'capped',
        {
          prefix: 'CP-',
          discount: { type: 'percent', percent_off: 33.33, max_amount_off: 500, currency: 'EUR' },
          minimum_basket: { amount: 1000, currency: 'EUR' },
        },
        10,
      ],
      ['yen', { prefix: 'JP-', discount: { type: 'amount', amount_off: 300, currency: 'JPY' }, minimum_basket: { amount: 5000, currency: 'JPY' } }, 8],
      ['dinar', { prefix: 'BH-', discount: { type: 'amount', amount_off: 1234, currency: 'BHD' } }, 8],
      ['all', { prefix: 'AL-', discount: { type: 'percent', percent_off: 100 } }, 6],
      ['minimum', { prefix: 'MN-', minimum_basket: { amount: 2000, currency: 'USD' }, description: 'spend 20 USD' }, 4],
      ['not yet', { prefix: 'NY-', discount: { type: 'amount', amount_off: 100, currency: 'EUR' }, valid_from: iso(moments[2]!) }, 3],
      ['ended', { prefix: 'EX-', discount: { type: 'percent', percent_off: 10 }, valid_until: iso(moments[1]!) }, 3],
      ['elsewhere', { prefix: 'EL-', site_ids: ['FZ-OTHER', 'fz-site', 'FZ-SITE '] }, 3],
      ['changing 1', { prefix: 'C1-', ...firstChange }, 5],
      ['changing 2', { prefix: 'C2-', ...secondChange }, 5],
    ];
    const created = new Map<string, { id: number; codes: string[]; generator: Record<string, unknown> }>();
    await Promise.all(
      plans.map(async ([name, fields, count]) => {
        const generator = await createGenerator(owner, { generation_type: 'tillgate', code_length: 6, store_id: 9, ...fields });
        const response = await call(api, core, 'POST', `/v1.0/codegen/${generator.id}/codes`, { token: owner.token, body: { count } });
        expect(response.status, response.text).toBe(201);
        issued.set(generator.id, new Set(response.json.codes));
        created.set(name, { id: generator.id, codes: response.json.codes, generator: generator as unknown as Record<string, unknown> });
      }),
    );
    const stopped = created.get('stopped')!;
    const patched = await call(api, core, 'PATCH', `/v1.0/codegen/${stopped.id}`, { token: owner.token, body: { code_generator: { status: 'inactive' } } });
    expect(patched.status).toBe(200);
    stopped.generator = patched.json.code_generator;
    const changing = [created.get('changing 1')!.id, created.get('changing 2')!.id];

    const strangerGenerator = generators.get(stranger.accountId)![0]!;
    const strangerCodes = [...issued.get(strangerGenerator.id)!];
    // In the plans' order (the generators were created concurrently), so that a seed picks the same codes again.
    const inOrder = plans.map(([name]) => created.get(name)!);
    const ownCodes = inOrder.flatMap(({ codes }) => codes);
    const models = new Map<number, TillModel>();
    const modelOf = (account: Account, promotions: Map<number, Promotion>, codes: Map<string, { generatorId: number }>) =>
      models.set(account.accountId, newTillModel(promotions, codes));
    modelOf(
      owner,
      new Map(inOrder.map(({ id, generator }) => [id, promotionOf(generator)])),
      new Map(inOrder.flatMap(({ id, codes }) => codes.map((code) => [code, { generatorId: id }] as const))),
    );
    modelOf(
      stranger,
      new Map([[strangerGenerator.id, promotionOf(strangerGenerator as unknown as Record<string, unknown>)]]),
      new Map(strangerCodes.map((code) => [code, { generatorId: strangerGenerator.id }])),
    );
    // One transaction of each account is voided before anything is redeemed on it.
    for (const account of [owner, stranger]) {
      const voided = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', {
        token: account.token,
        body: { transaction: { site_id: 'FZ-SITE', pos_transaction_id: 'F-VOID' } },
      });
      expect(voided.status).toBe(200);
      recordVoid(models.get(account.accountId)!, JSON.stringify(['FZ-SITE', 'F-VOID']));
    }

    const ownCode = fc.tuple(fc.constantFrom(...ownCodes), fc.nat()).map(([code, mask]) => mixCase(code, mask));
    const codeChoice = fc.oneof(
      { arbitrary: ownCode, weight: 10 },
      { arbitrary: fc.constantFrom(...strangerCodes), weight: 2 },
      {
        arbitrary: fc.oneof(
          fc.constantFrom(
            'TG-ıııııı',
            'tg-ıııııı',
            '__proto__',
            'constructor',
            ' ',
            'TG-',
            '-',
            '*',
            "TG-'OR'1",
            'A'.repeat(64),
            'ß',
            '\u0000',
            '😀',
            'TG-\u212a',
          ),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
          fc.constantFrom(...ownCodes).map((code) => ` ${code}`),
        ),
        weight: 3,
      },
    );
    // The sale's total, in the currencies of the promotions and others; around the minimums, at the ends of the range.
    const total = fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 100_000 }), weight: 4 },
      { arbitrary: fc.constantFrom(0, 1, 7, 999, 1000, 1999, 2000, 4999, 5000, 10 ** 12 - 1, 10 ** 12), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 10 ** 12 }), weight: 1 },
    );
    const basket = fc.oneof(
      {
        arbitrary: fc
          .tuple(
            total,
            fc.constantFrom('EUR', 'EUR', 'EUR', 'JPY', 'JPY', 'USD', 'BHD', 'CLF'),
            fc.option(fc.constantFrom('vat_included', 'items', 'total_net'), { nil: undefined }),
          )
          .map(([t, currency, extra]) => ({ total: t, currency, ...(extra === undefined ? {} : { [extra]: extra === 'items' ? 3 : true }) })),
        weight: 8,
      },
      { arbitrary: fc.constant(null), weight: 1 },
      {
        // Not a basket: a negative, fractional or too large total, a currency in lower case or not in ISO 4217, a key missing, not an object.
        arbitrary: fc.constantFrom<unknown>(
          { total: -1, currency: 'EUR' },
          { total: 12.5, currency: 'EUR' },
          { total: 10 ** 12 + 1, currency: 'EUR' },
          { total: 1e21, currency: 'EUR' },
          { total: '4250', currency: 'EUR' },
          { total: null, currency: 'EUR' },
          { total: 4250, currency: 'eur' },
          { total: 4250, currency: 'Eur' },
          { total: 4250, currency: 'XYZ' },
          { total: 4250, currency: 'XAU' },
          { total: 4250, currency: 'EURO' },
          { total: 4250 },
          { currency: 'EUR' },
          {},
          [4250, 'EUR'],
          'EUR 42.50',
          4250,
        ),
        weight: 2,
      },
    );
    // A sale's currency is mostly that of its first code's promotion (as created), so that baskets meet their minimums and discounts.
    const currencyOf = new Map(
      inOrder.flatMap(({ codes, generator }) => {
        const currency = promotionCurrency(promotionOf(generator));
        return currency === undefined ? [] : codes.map((code) => [code, currency] as const);
      }),
    );
    const inCurrencyOfFirstCode = (transaction: Record<string, unknown>, follow: boolean) => {
      const basket = transaction.basket as Record<string, unknown> | null | undefined;
      const currency = currencyOf.get(String((transaction.codes as string[])[0]).toUpperCase());
      if (!follow || currency === undefined || typeof basket !== 'object' || basket === null || Array.isArray(basket) || !isCurrencyCode(basket.currency))
        return transaction;
      return { ...transaction, basket: { ...basket, currency } };
    };
    const validRedemption = fc.record(
      {
        site_id: fc.oneof(
          { arbitrary: fc.constant('FZ-SITE'), weight: 5 },
          { arbitrary: fc.constant('FZ-OTHER'), weight: 2 },
          { arbitrary: fc.constantFrom('a/b', 'Zürich 1', '😀', ' ', '\ud800', 'x\udfff', 'fz-site'), weight: 1 },
        ),
        // Sales that take several codes in turn, until a void ends them (F-VOID was voided first).
        pos_transaction_id: fc.oneof(
          { arbitrary: fc.integer({ min: 1, max: 12 }).map((n) => `F-${n}`), weight: 12 },
          { arbitrary: fc.constant('F-VOID'), weight: 1 },
        ),
        codes: fc.oneof(
          // Mostly the owner's own codes, so that sales fill up, collide and get voided; often one
          // at a time, as a till scans them, so that a sale takes several and applies them in turn.
          { arbitrary: fc.tuple(ownCode), weight: 3 },
          { arbitrary: fc.array(ownCode, { minLength: 1, maxLength: 4 }), weight: 3 },
          { arbitrary: fc.array(codeChoice, { minLength: 1, maxLength: 10 }), weight: 1 },
        ),
        basket,
        // A customer's id (counted by every promotion, limited by none here), or not one: empty, too long, not a string.
        customer_id: fc.oneof(
          { arbitrary: fc.constantFrom('CARD-1', 'CARD-2', 'ß-7', 'c'.repeat(128)), weight: 9 },
          { arbitrary: fc.constantFrom<unknown>(null, '', 'c'.repeat(129), 42, ['CARD-1'], { id: 'CARD-1' }), weight: 1 },
        ),
      },
      { requiredKeys: ['site_id', 'pos_transaction_id', 'codes'] },
    );
    const sale = fc.tuple(validRedemption, fc.nat(9)).map(([transaction, n]) => inCurrencyOfFirstCode(transaction, n < 7));
    // A sale as most tills make one: at the fuzzer's site, in one currency, with codes of the
    // promotions that take it (as created: the changing ones may have moved since) and a basket
    // mostly above their minimums, so that codes apply in turn and a sale's earlier codes count.
    const takes = (currency: string) =>
      ['plain', 'percent', 'all', ...({ EUR: ['capped'], JPY: ['yen'], BHD: ['dinar'] } as Record<string, string[]>)[currency]!].flatMap(
        (name) => created.get(name)!.codes,
      );
    const friendlySale = fc.constantFrom('EUR', 'EUR', 'JPY', 'BHD').chain((currency) =>
      fc.record({
        site_id: fc.constant('FZ-SITE'),
        pos_transaction_id: fc.integer({ min: 1, max: 12 }).map((n) => `F-${n}`),
        codes: fc.array(
          fc.tuple(fc.constantFrom(...takes(currency)), fc.nat()).map(([code, mask]) => mixCase(code, mask)),
          { minLength: 1, maxLength: 3 },
        ),
        basket: fc.record({
          total: fc.oneof({ arbitrary: fc.integer({ min: 5000, max: 200_000 }), weight: 3 }, { arbitrary: total, weight: 1 }),
          currency: fc.constant(currency),
        }),
      }),
    );
    // Hostile bodies under every token and content type, or a well-formed body of one of the two accounts.
    const request = fc.oneof(
      {
        arbitrary: fc.record({
          token: tokenChoice,
          bytes: bodies('transaction', sale, ['site_id', 'pos_transaction_id', 'codes', 'till_id', 'basket', 'customer_id']),
          type: contentType,
          resend: fc.constant(false),
        }),
        weight: 2,
      },
      {
        arbitrary: fc.record({
          token: fc.constantFrom<TokenChoice>('owner', 'owner', 'owner', 'owner', 'stranger'),
          bytes: fc
            .oneof({ arbitrary: sale, weight: 3 }, { arbitrary: friendlySale, weight: 2 })
            .map((transaction) => Buffer.from(JSON.stringify({ transaction }))),
          type: fc.constant<string | undefined>('application/json'),
          // A till adding codes to its sale sends the codes the sale holds again (the model knows which).
          resend: fc.boolean(),
        }),
        weight: 3,
      },
    );
    const action = fc.oneof(
      { arbitrary: fc.constant('redeem' as const), weight: 12 },
      { arbitrary: fc.constant('validate' as const), weight: 6 },
      { arbitrary: fc.constant('void' as const), weight: 2 },
      // A change brings the promotion's 64 shards to its new version before its 200: dear, so rarer.
      { arbitrary: fc.constant('change' as const), weight: 1 },
    );
    // A change of one of the two changing promotions: all its terms at once, or its status.
    const change = fc.record({
      which: fc.nat(1),
      body: fc.oneof(
        { arbitrary: consistentTerms(moments), weight: 4 },
        { arbitrary: fc.record({ status: fc.constantFrom('active', 'inactive') }), weight: 1 },
      ),
    });
    const statuses = new Map<string, number>();
    const failuresSeen = new Map<string, number>();
    let redeemedCodes = 0;
    let released = 0;
    let amounts = 0;
    /** Successful answers where two codes or more took an amount off; where a code held with an amount met a new one. */
    let stacked = 0;
    let addedToSale = 0;

    await fc.assert(
      fc.asyncProperty(action, request, change, async (what, { token, bytes: generated, type, resend }, { which, body: changed }) => {
        if (what === 'change') {
          const id = changing[which]!;
          const response = await call(api, core, 'PATCH', `/v1.0/codegen/${id}`, { token: owner.token, body: { code_generator: changed } });
          expect(response.status, `PATCH ${id} ${JSON.stringify(changed)} → ${response.text}`).toBe(200);
          models.get(owner.accountId)!.promotions.set(id, promotionOf(response.json.code_generator));
          statuses.set('change 200', (statuses.get('change 200') ?? 0) + 1);
          return;
        }
        const caller = callerOf(token);
        let bytes = generated;
        if (resend && caller) {
          const { transaction } = JSON.parse(generated.toString('utf8'));
          const holding = (models.get(caller.accountId)!.held.get(JSON.stringify([transaction.site_id, transaction.pos_transaction_id])) ?? []).map(
            (held) => held.code,
          );
          if (holding.length > 0)
            bytes = Buffer.from(JSON.stringify({ transaction: { ...transaction, codes: [...holding.slice(-3), ...transaction.codes].slice(0, 10) } }));
        }
        const path = what === 'redeem' ? '/v2.0/redeemed_codes' : what === 'validate' ? '/v2.0/validated_codes' : '/v2.0/voided_transactions';
        const headers = [...tokenHeaders(token)];
        if (type !== undefined) headers.push('Content-Type', type);
        const eventsBefore = caller ? await eventsSummary(caller) : [];
        const before = Date.now();
        const response = await sendTo(api, 'pos', { method: 'POST', path, headers, body: bytes });
        const after = Date.now();
        const where = `POST ${path} (${token}, ${type}) ${bytes.toString('utf8').slice(0, 400)} → ${response.status} ${response.text.slice(0, 600)}`;
        statuses.set(`${what} ${response.status}`, (statuses.get(`${what} ${response.status}`) ?? 0) + 1);
        expect(response.status, where).toBeLessThan(500);
        const headersSeen = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (value !== undefined) headersSeen.set(name, Array.isArray(value) ? value.join(', ') : value);
        checkAgainstOpenApi('pos', 'POST', path, { status: response.status, headers: headersSeen, text: response.text });
        if (!caller) {
          expect(response.status, where).toBe(401);
          expectClientError('pos', response, 'POST');
          return;
        }
        const verdict = judgeRedemption(bytes, type);
        const eventsAfter = async () => (await eventsSummary(caller)).filter((e) => !eventsBefore.includes(e));
        if (what === 'void') {
          // A void's body is judged by the void's own fuzzer: here only what it releases matters.
          if (response.status !== 200) {
            expect(await eventsAfter(), where).toEqual([]);
            return;
          }
          const model = models.get(caller.accountId)!;
          const sent = JSON.parse(bytes.toString('utf8')).transaction;
          const me = JSON.stringify([sent.site_id, sent.pos_transaction_id]);
          const messages = response.json.transaction.display_messages as { message_id: string; message_content: { code?: string } }[];
          expect(messages[0]!.message_id, where).toBe('transaction_voided');
          const replayed = response.headers['idempotent-replayed'] === 'true';
          if (!replayed) {
            const releasing = recordVoid(model, me);
            expect(
              messages.slice(1).map((m) => m.message_content.code),
              where,
            ).toEqual(releasing.map((held) => held.code));
            released += releasing.length;
          } else expect(model.voided.has(me), where).toBe(true);
          return;
        }
        const generic = bodyStatus(verdict, true, undefined);
        if (generic !== 'success') {
          expect(response.status, where).toBe(generic);
          expectClientError('pos', response, 'POST');
          if (verdict.kind === 'invalid') {
            // A basket at fault is named by the message of one of the errors (pos errors carry a message only).
            const messages = (response.json.transaction.errors as { message: string }[]).map((e) => e.message);
            for (const field of [...verdict.fields].filter((f) => f.startsWith('transaction.basket')))
              expect(
                messages.some((m) => m.startsWith(`${field} `)),
                `${where}: ${field}`,
              ).toBe(true);
          }
          expect(await eventsAfter(), where).toEqual([]);
          return;
        }
        const body = (verdict as { value: unknown }).value as RedemptionBody;
        const model = models.get(caller.accountId)!;
        // "Now" is the service's clock while it handled the request; the bounds are far from it.
        const judged = judgeTill(body, model, before);
        expect(JSON.stringify(judgeTill(body, model, after)), 'a bound fell within the request').toBe(JSON.stringify(judged));
        expectStandardHeaders(response);
        const redeemedAt = expectTillAnswer(what, body, model, judged, response, where);
        if (judged.kind === 'refused') {
          for (const failure of judged.failures) failuresSeen.set(failure.messageId, (failuresSeen.get(failure.messageId) ?? 0) + 1);
          expect(await eventsAfter(), where).toEqual([]);
          return;
        }
        amounts += judged.codes.filter(({ given }) => given.discount_amount !== undefined).length;
        const withAmounts = judged.codes.filter(({ given }) => given.discount_amount !== undefined);
        if (withAmounts.length > 1) stacked += 1;
        if (withAmounts.some(({ held }) => held) && withAmounts.some(({ held }) => !held)) addedToSale += 1;
        const added = await eventsAfter();
        if (what === 'validate' || judged.fresh.length === 0) expect(added, where).toEqual([]);
        else {
          expect(added, where).toHaveLength(1);
          expect(added[0], where).toMatch(/^\d+:codes\.redeemed:/);
          recordRedemption(model, body, judged, redeemedAt!);
          redeemedCodes += judged.fresh.length;
        }
      }),
    );
    // The tables agree with the model: each of the owner's codes is held by the transaction the
    // model says, with the amount it recorded, or by none.
    const model = models.get(owner.accountId)!;
    const reads = await Promise.all(
      ownCodes.map((code) => call(api, core, 'GET', `/v1.0/codegen/${model.codes.get(code)!.generatorId}/codes/${code}`, { token: owner.token })),
    );
    for (const [i, code] of ownCodes.entries()) {
      const read = reads[i]!;
      const holders = holdersOf(model, code);
      expect(holders.length, code).toBeLessThanOrEqual(1);
      const holder = holders[0];
      const held = holder === undefined ? undefined : model.held.get(holder)!.find((h) => h.code === code)!;
      expect(read.json.code, code).toMatchObject(
        holder === undefined
          ? {
              site_id: null,
              pos_transaction_id: null,
              redeemed_at: null,
              discount_amount: null,
              currency: null,
              times_redeemed: 0,
              max_redemptions_per_code: 1,
            }
          : {
              site_id: JSON.parse(holder)[0],
              pos_transaction_id: JSON.parse(holder)[1],
              redeemed_at: held!.redeemedAt,
              discount_amount: held!.given.discount_amount ?? null,
              currency: held!.given.currency ?? null,
              times_redeemed: 1,
              max_redemptions_per_code: 1,
            },
      );
    }
    console.log(
      `fuzz till: ${numRuns} runs, ${redeemedCodes} codes redeemed, ${released} released, ${amounts} amounts in successful answers (${stacked} with two or more, ${addedToSale} beside a code held with its amount), failures ${JSON.stringify(Object.fromEntries(failuresSeen))}, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  });

  it(`counting: ${countingRuns} generated steps on promotions with limits (multi-use codes, budgets, customers' limits), changed between them, judged against the model; the count tables checked along the way`, {
    timeout: 60_000 + countingRuns * 1_500,
  }, async () => {
    // One account of its own, so that the tables hold this sequence's counts only.
    const account = await newAccount();
    const random = seededRandom(seed);
    const limits = () => ({
      max_redemptions_per_code: [1, 1, 2, 3, 4, 1000][random.int(0, 5)]!,
      max_redemptions: random.next() < 0.5 ? null : random.int(1, 12),
      max_redemptions_per_customer: random.next() < 0.7 ? null : random.int(1, 4),
    });
    // Small limits, so that they are reached; terms that refuse before the counts are judged.
    const plans: [Record<string, unknown>, number][] = [
      // A flyer every sale may take (a million uses per code), so that sales grow to MAX_HELD_CODES.
      [{ prefix: 'OP-', description: 'flyer', max_redemptions_per_code: 1_000_000 }, 16],
      [{ prefix: 'AM-', description: '2.50 off', discount: { type: 'amount', amount_off: 250, currency: 'EUR' }, ...limits() }, 3],
      [{ prefix: 'PC-', description: '10 % off', discount: { type: 'percent', percent_off: 10 }, ...limits() }, 4],
      [{ prefix: 'MU-', description: 'a few uses each', max_redemptions_per_code: random.int(2, 3) }, 3],
      [{ prefix: 'LY-', description: 'loyalty', ...limits(), max_redemptions_per_customer: random.int(1, 3) }, 3],
      [{ prefix: 'BG-', description: 'budget', ...limits(), max_redemptions: random.int(1, 8) }, 5],
      [{ prefix: 'MN-', description: 'spend 30 EUR', minimum_basket: { amount: 3000, currency: 'EUR' }, ...limits() }, 3],
      [{ prefix: 'ST-', description: 'one shop', site_ids: ['CT-SITE'], ...limits() }, 3],
    ];
    const created: { id: number; codes: string[]; generator: Record<string, unknown> }[] = [];
    for (const [fields, count] of plans) {
      const generator = await createGenerator(account, { generation_type: 'tillgate', code_length: 6, store_id: 3, ...fields });
      const response = await call(api, core, 'POST', `/v1.0/codegen/${generator.id}/codes`, { token: account.token, body: { count } });
      expect(response.status, response.text).toBe(201);
      created.push({ id: generator.id, codes: response.json.codes, generator: generator as unknown as Record<string, unknown> });
    }
    const model = newTillModel(
      new Map(created.map(({ id, generator }) => [id, promotionOf(generator)])),
      new Map(created.flatMap(({ id, codes }) => codes.map((code) => [code, { generatorId: id }] as const))),
    );
    const allCodes = created.flatMap(({ codes }) => codes);
    const flyerCodes = created[0]!.codes;
    const fewUses = created[3]!.codes[0]!;
    const strangerCode = [...issued.get(generators.get(stranger.accountId)![0]!.id)!][0]!;
    /** The keyed hash the service stores a customer id as (functions/runtime/customer-key.ts), computed from its definition. */
    const customerKey = (customer: string) =>
      createHmac('sha256', Buffer.from(TEST_CUSTOMER_KEY, 'hex'))
        .update(JSON.stringify(['customer', account.accountId, customer]))
        .digest('base64url');

    /** Every sale opened so far (site/pos JSON), voided ones included; one in five at a site the one-shop promotion does not list. */
    const sales: string[] = [];
    const newSale = () => {
      const sale = JSON.stringify([sales.length % 5 === 4 ? 'CT-OTHER' : 'CT-SITE', `S-${sales.length + 1}`]);
      sales.push(sale);
      return sale;
    };
    /** A sale for a step: mostly one still open, sometimes a new one, now and then any (a voided one answers transaction_voided). */
    const pickSale = (n: number) => {
      const open = sales.filter((sale) => !model.voided.has(sale));
      if (open.length === 0 || n % 7 === 0) return newSale();
      if (n % 11 === 1) return sales[(n >> 4) % sales.length]!;
      return open[(n >> 4) % open.length]!;
    };
    const heldBy = (sale: string) => (model.held.get(sale) ?? []).map((held) => held.code);
    const customers = [undefined, 'CARD-1', 'CARD-2', 'CARD-3', 'CARD-1'] as const;
    const baskets = [undefined, undefined, undefined, { total: 5000, currency: 'EUR' }, { total: 1200, currency: 'EUR' }, { total: 800, currency: 'USD' }];

    /** The tables as the model has them: each sale's codes (time, customer) or its void, and every count (count-tables.ts). */
    const expectTables = async (where: string) => {
      const records = await posTransactionsOf(account.accountId);
      const seen = new Map(records.map((record) => [JSON.stringify([record.site_id, record.pos_transaction_id]), record]));
      for (const sale of sales) {
        const record = seen.get(sale);
        if (model.voided.has(sale)) expect(record?.voided_at, `${where}: ${sale} voided`).toBeDefined();
        else {
          expect(record?.voided_at, `${where}: ${sale} not voided`).toBeUndefined();
          expect(
            (record?.codes ?? []).map((held) => [held.code, held.redeemed_at, held.customer]),
            `${where}: what ${sale} holds`,
          ).toEqual(
            (model.held.get(sale) ?? []).map((held) => [held.code, held.redeemedAt, held.customer === undefined ? undefined : customerKey(held.customer)]),
          );
        }
      }
      await expectCountsExact(account.accountId, expectedCounts(model, account.accountId, customerKey));
    };

    const step = fc.record({
      kind: fc.oneof(
        { arbitrary: fc.constant('redeem' as const), weight: 10 },
        { arbitrary: fc.constant('validate' as const), weight: 4 },
        // A sale taking up to ten codes it does not hold, flyer codes first: towards MAX_HELD_CODES.
        { arbitrary: fc.constant('fill' as const), weight: 3 },
        // A till sending one of the last redemptions again, as it does after a lost answer.
        { arbitrary: fc.constant('retry' as const), weight: 2 },
        { arbitrary: fc.constant('void' as const), weight: 3 },
        { arbitrary: fc.constant('patch' as const), weight: 3 },
        { arbitrary: fc.constant('tables' as const), weight: 1 },
      ),
      sale: fc.nat(),
      // Mostly a few codes, as a till scans them; sometimes a full request.
      picks: fc.oneof(
        { arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), weight: 4 },
        { arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 10 }), weight: 1 },
      ),
      customer: fc.nat(customers.length - 1),
      basket: fc.nat(baskets.length - 1),
      choice: fc.nat(),
    });
    const history: RedemptionBody[] = [];
    /** One line per step, printed when one fails. */
    const trace: string[] = [];
    const firstVoids = new Map<string, string>();
    const statuses = new Map<string, number>();
    const failuresSeen = new Map<string, number>();
    const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
    let steps = 0;
    let mostHeld = 0;

    /** What the model knew of the listed codes' counts before a request, for a failure's message. */
    const countsBefore = (body: RedemptionBody) => {
      const me = JSON.stringify([body.site_id, body.pos_transaction_id]);
      const listed = [...new Set(body.codes.map((code) => code.toUpperCase()))].filter((code) => model.codes.has(code));
      const lines = listed.map((code) => {
        const id = model.codes.get(code)!.generatorId;
        const p = model.promotions.get(id)!;
        return `${code} (generator ${id}, ${p.status}): held by ${holdersOf(model, code).length}/${p.max_redemptions_per_code}, budget ${usesOf(model, id)}/${p.max_redemptions}, customer ${body.customer_id === undefined ? '-' : usesOf(model, id, body.customer_id)}/${p.max_redemptions_per_customer}`;
      });
      return `${me} holds ${heldBy(me).length}${model.voided.has(me) ? ' (voided)' : ''}; ${lines.join('; ')}`;
    };

    /** A redemption or a check of `body`, judged against the model; a redemption's codes taken into it. */
    const till = async (what: 'redeem' | 'validate', body: RedemptionBody) => {
      const path = what === 'redeem' ? '/v2.0/redeemed_codes' : '/v2.0/validated_codes';
      const judged = judgeTill(body, model, Date.now());
      const eventsBefore = await eventsSummary(account);
      const response = await call(api, 'pos', 'POST', path, { token: account.token, body: { transaction: body } });
      const ids = (response.json?.transaction?.display_messages as { message_id: string }[] | undefined)?.map((m) => m.message_id);
      trace.push(
        `${steps} ${what} ${body.pos_transaction_id} ${JSON.stringify(body.codes)}${body.customer_id === undefined ? '' : ` ${body.customer_id}`}${body.basket ? ` ${body.basket.total} ${body.basket.currency}` : ''} → ${response.status} ${JSON.stringify(ids)}`,
      );
      const where = `step ${steps}: POST ${path} ${JSON.stringify(body)} → ${response.status} ${response.text.slice(0, 1500)}\nthe model before it: ${countsBefore(body)}`;
      count(statuses, `${what} ${response.status}`);
      const redeemedAt = expectTillAnswer(what, body, model, judged, response, where);
      const added = (await eventsSummary(account)).filter((e) => !eventsBefore.includes(e));
      if (judged.kind === 'refused') for (const failure of judged.failures) count(failuresSeen, failure.messageId);
      if (what === 'validate' || judged.kind === 'refused' || judged.fresh.length === 0) {
        expect(added, where).toEqual([]);
        return;
      }
      expect(added, where).toHaveLength(1);
      expect(added[0], where).toMatch(/^\d+:codes\.redeemed:/);
      recordRedemption(model, body, judged, redeemedAt!);
      mostHeld = Math.max(mostHeld, model.held.get(JSON.stringify([body.site_id, body.pos_transaction_id]))!.length);
    };

    const voidSale = async (sale: string) => {
      const [site_id, pos_transaction_id] = JSON.parse(sale) as [string, string];
      const eventsBefore = await eventsSummary(account);
      const response = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', {
        token: account.token,
        body: { transaction: { site_id, pos_transaction_id } },
      });
      const where = `step ${steps}: void ${sale} → ${response.status} ${response.text.slice(0, 1500)}`;
      count(statuses, `void ${response.status}`);
      trace.push(
        `${steps} void ${pos_transaction_id} → ${response.status} ${(response.json?.transaction?.display_messages as unknown[] | undefined)?.length ?? 0} messages`,
      );
      expect(response.status, where).toBe(200);
      const added = (await eventsSummary(account)).filter((e) => !eventsBefore.includes(e));
      const first = firstVoids.get(sale);
      if (first !== undefined) {
        expect(response.headers.get('idempotent-replayed'), where).toBe('true');
        expect(response.text, where).toBe(first);
        expect(added, where).toEqual([]);
        return;
      }
      const released = recordVoid(model, sale);
      firstVoids.set(sale, response.text);
      const messages = response.json.transaction.display_messages as unknown[];
      expect(messages[0], where).toMatchObject({ message_id: 'transaction_voided' });
      expect(messages.slice(1), where).toEqual(
        released.map(({ code, generatorId }) => ({
          message: `Code ${code} released`,
          message_id: 'code_released',
          message_content: { code, code_generator_id: generatorId },
          priority: 1,
        })),
      );
      expect(added.map((e) => e.split(':')[1]).sort(), where).toEqual(released.length > 0 ? ['codes.released', 'transaction.voided'] : ['transaction.voided']);
    };

    /**
     * A PATCH of one promotion's limits (or its status), the values chosen around what is held
     * now: below it (new uses refused until voids bring the count under), at it, above it, none.
     */
    const patch = async (choice: number) => {
      // An inactive promotion is mostly the one changed, and made active again, so that its codes count again.
      const ids = created.map(({ id }) => id);
      const inactive = ids.filter((id) => model.promotions.get(id)!.status === 'inactive');
      const id = inactive.length > 0 && choice % 3 !== 0 ? inactive[0]! : ids[choice % ids.length]!;
      const promotion = model.promotions.get(id)!;
      const codes = allCodes.filter((code) => model.codes.get(code)!.generatorId === id);
      const mostHolders = Math.max(0, ...codes.map((code) => holdersOf(model, code).length));
      const used = usesOf(model, id);
      const mostByCustomer = Math.max(0, ...customers.flatMap((customer) => (customer === undefined ? [] : [usesOf(model, id, customer)])));
      const pick = <T>(options: T[], salt: number) => options[(choice >> salt) % options.length]!;
      const perCode = () =>
        pick(
          [1, 2, mostHolders - 1, mostHolders, mostHolders, mostHolders + 1, mostHolders + 2, 1000].filter((n) => n >= 1),
          6,
        );
      const budget = () =>
        pick(
          [null, used - 1, used, used + 1, used + 3, 100].filter((n) => n === null || n >= 1),
          9,
        );
      const perCustomer = () =>
        pick(
          [null, 1, mostByCustomer - 1, mostByCustomer, mostByCustomer + 1, 5].filter((n) => n === null || n >= 1),
          12,
        );
      const change: Record<string, unknown>[] = [
        { max_redemptions_per_code: perCode() },
        { max_redemptions_per_code: perCode() },
        { max_redemptions: budget() },
        { max_redemptions: budget() },
        { max_redemptions_per_customer: perCustomer() },
        { max_redemptions_per_code: perCode(), max_redemptions: budget(), max_redemptions_per_customer: perCustomer() },
        { max_redemptions_per_code: perCode(), max_redemptions: budget() },
        { max_redemptions_per_customer: perCustomer(), max_redemptions: budget() },
        { status: 'inactive', max_redemptions_per_code: perCode() },
      ];
      const body = promotion.status === 'inactive' ? { status: 'active', ...pick(change, 3) } : pick(change, 3);
      const response = await call(api, core, 'PATCH', `/v1.0/codegen/${id}`, { token: account.token, body: { code_generator: body } });
      const where = `step ${steps}: PATCH ${id} ${JSON.stringify(body)} → ${response.status} ${response.text.slice(0, 600)}`;
      count(statuses, `patch ${response.status}`);
      trace.push(`${steps} PATCH ${id} ${JSON.stringify(body)} → ${response.status}`);
      expect(response.status, where).toBe(200);
      expect(response.json.code_generator, where).toMatchObject(body);
      model.promotions.set(id, promotionOf(response.json.code_generator));
    };

    await fc.assert(
      fc.asyncProperty(step, async (input) => {
        steps++;
        try {
          await act(input);
        } catch (error) {
          console.log(`fuzz counting (seed ${seed}): the steps up to the failure\n${trace.join('\n')}`);
          throw error;
        }
      }),
      // Each step acts on the state the steps before it left: the first failure is the one to read (and to replay by its seed), not a shrunk one.
      { numRuns: countingRuns, endOnFailure: true },
    );
    await expectTables('at the end');
    console.log(
      `fuzz counting: ${countingRuns} steps, ${sales.length} sales, at most ${mostHeld} codes held by one, failures ${JSON.stringify(Object.fromEntries(failuresSeen))}, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    async function act({ kind, sale: saleChoice, picks, customer, basket, choice }: typeof step extends fc.Arbitrary<infer T> ? T : never) {
      if (kind === 'tables' || steps % tablesEvery === 0) await expectTables(`step ${steps}`);
      if (kind === 'patch') return patch(choice);
      if (kind === 'void') {
        // Mostly a sale holding codes; sometimes one voided before (its first answer again) or a new one (voided first).
        const holding = sales.filter((sale) => heldBy(sale).length > 0);
        const sale = holding.length > 0 && saleChoice % 4 !== 0 ? holding[(saleChoice >> 2) % holding.length]! : pickSale(saleChoice);
        return voidSale(sale);
      }
      if (kind === 'retry' && history.length > 0) return till('redeem', history[history.length - 1 - (choice % Math.min(3, history.length))]!);
      let sale: string;
      let codes: string[];
      if (kind === 'fill') {
        // The open sale holding the most codes, or any: up to 10 codes it does not hold, flyer codes first, then any.
        const open = sales.filter((s) => !model.voided.has(s)).sort((a, b) => heldBy(b).length - heldBy(a).length);
        sale = open.length > 0 && saleChoice % 2 === 0 ? open[0]! : pickSale(saleChoice);
        const holding = heldBy(sale);
        const others = allCodes.filter((code) => !flyerCodes.includes(code) && !holding.includes(code));
        const candidates = [...flyerCodes.filter((code) => !holding.includes(code)), ...others.map((_, i) => others[(i + choice) % others.length]!)];
        codes = candidates.slice(0, 1 + (choice % 10));
      } else {
        sale = pickSale(saleChoice);
        // Half of them the first code of a promotion (of the one of a few uses each, most often), so that a multi-use code's uses are all taken.
        const hot = (n: number) => (n % 3 === 0 ? fewUses : created[n % created.length]!.codes[0]!);
        codes = picks.map((n) => (n % 29 === 28 ? strangerCode : n % 2 === 0 ? hot(n >> 1) : allCodes[n % allCodes.length]!));
        // A till adding codes to its sale sends those it holds again.
        if (choice % 4 === 0) codes = [...heldBy(sale).slice(-3), ...codes];
      }
      const [site_id, pos_transaction_id] = JSON.parse(sale) as [string, string];
      const body: RedemptionBody = {
        site_id,
        pos_transaction_id,
        codes: codes.slice(0, 10).map((code, i) => mixCase(code, picks[i % picks.length]!)),
        ...(baskets[basket] ? { basket: baskets[basket] } : {}),
        ...(customers[customer] !== undefined ? { customer_id: customers[customer] } : {}),
      };
      const what = kind === 'validate' ? 'validate' : 'redeem';
      if (what === 'redeem') history.push(body);
      return till(what, body);
    }
  });
});
