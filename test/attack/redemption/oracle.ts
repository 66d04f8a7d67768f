import { minorUnits } from '../../../functions/codes/currencies.ts';
import { codePoints, envelope, isObject, parseRoot, type BodyVerdict, type ResourceVerdict } from '../http/oracle.ts';

/**
 * What PRODUCT.md says the answers of the till's routes must be (a void, a redemption, a check),
 * written from the contract and independently of the service's validators, so that
 * redemption/fuzz.test.ts compares two readings of the contract, not one with itself; a model of
 * which transaction holds which code, what each got and for which customer (TillModel) judges a
 * valid redemption, the promotions' terms and their counts ("Counting") included, and says what
 * the count tables must hold.
 */
const VOID_OPTIONAL = [
  'occurred_at',
  'business_date',
  'register_id',
  'operator_id',
  'till_id',
  'table_id',
  'posagent_version',
  'pos_vendor',
  'pos_version',
  'receipt_id',
];

/** `undefined` where the oracle does not decide (date formats it does not model). */
export function judgeVoid(text: string): ResourceVerdict | { kind: 'undecided' } {
  const resource = parseRoot(text, 'transaction');
  if (!resource) return { kind: 'malformed' };
  const present = (key: string) => Object.hasOwn(resource, key) && resource[key] !== null;
  const required = (key: string) =>
    present(key) && typeof resource[key] === 'string' && codePoints(resource[key] as string) >= 1 && codePoints(resource[key] as string) <= 128;
  if (!required('site_id') || !required('pos_transaction_id')) return { kind: 'invalid' };
  for (const key of VOID_OPTIONAL) {
    if (!present(key)) continue;
    const value = resource[key];
    if (typeof value !== 'string' || codePoints(value) > 128) return { kind: 'invalid' };
    if (key === 'business_date' && !isDate(value)) return { kind: 'invalid' };
    if (key === 'occurred_at' && !/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) {
      return { kind: 'invalid' };
    }
    if (key === 'occurred_at' && !isPlausibleDateTime(value)) return { kind: 'undecided' };
  }
  return { kind: 'valid', value: resource };
}

function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return month >= 1 && month <= 12 && day >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Well-formed date-times the generators make: a real date, hours, minutes, seconds in range. */
function isPlausibleDateTime(text: string): boolean {
  const [date = '', rest = ''] = text.split(/[Tt]/);
  const [hh, mm, ss] = rest.slice(0, 8).split(':').map(Number);
  return isDate(date) && hh! <= 23 && mm! <= 59 && ss! <= 59 && !/[+-](2[4-9]|[3-9]\d):|:[6-9]\d$/.test(rest);
}

const VOID_FIELDS = [
  'occurred_at',
  'business_date',
  'register_id',
  'operator_id',
  'till_id',
  'table_id',
  'posagent_version',
  'pos_vendor',
  'pos_version',
  'receipt_id',
];

/** The sale a till may send with its codes: the total before this request's discounts, in minor units. */
interface Basket {
  total: number;
  currency: string;
}

export interface RedemptionBody {
  site_id: string;
  pos_transaction_id: string;
  codes: string[];
  basket?: Basket;
  customer_id?: string;
}

/** The most codes a transaction holds (PRODUCT.md: lowered from 50 so that a void with limits fits one DynamoDB transaction). */
export const MAX_HELD_CODES = 24;

/** ISO 4217 codes with a minor unit: three uppercase letters the table lists. */
export const isCurrencyCode = (value: unknown): value is string => typeof value === 'string' && /^[A-Z]{3}$/.test(value) && minorUnits(value) !== undefined;

/**
 * `transaction.basket`: absent or null is no basket; else `{"total":t,"currency":c}`, t an integer
 * 0–10^12, c an ISO 4217 code; keys inside it that the contract does not name are ignored.
 * Returns the fields at fault (empty for a good or absent basket).
 */
function basketProblems(basket: unknown): string[] {
  if (basket === undefined || basket === null) return [];
  if (!isObject(basket)) return ['transaction.basket'];
  const wrong: string[] = [];
  const total = basket.total;
  if (!(typeof total === 'number' && Number.isInteger(total) && total >= 0 && total <= 10 ** 12)) wrong.push('transaction.basket.total');
  if (!isCurrencyCode(basket.currency)) wrong.push('transaction.basket.currency');
  return wrong;
}

/**
 * POST /v2.0/redeemed_codes and /v2.0/validated_codes: `{"transaction":{…}}` read as a void is
 * (unknown keys ignored, null absent), `site_id` and `pos_transaction_id` strings of 1–128
 * characters, the other void fields strings of at most 128, `codes` an array of 1–10 strings of
 * 1–64 characters, an optional `basket` and an optional `customer_id` (1–128 characters).
 * Invalid fields all answer 422 (pos errors name no field; their messages do).
 */
export function judgeRedemption(bytes: Buffer, contentType: string | undefined): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed) || !Object.hasOwn(parsed, 'transaction') || !isObject(parsed.transaction)) return { kind: 'malformed' };
  const resource = parsed.transaction;
  const present = (key: string) => Object.hasOwn(resource, key) && resource[key] !== null;
  const wrong = new Set<string>();
  for (const key of ['site_id', 'pos_transaction_id']) {
    const value = resource[key];
    if (!present(key) || typeof value !== 'string' || codePoints(value) < 1 || codePoints(value) > 128) wrong.add(`transaction.${key}`);
  }
  for (const key of VOID_FIELDS) {
    if (!present(key)) continue;
    const value = resource[key];
    if (typeof value !== 'string' || codePoints(value) > 128) wrong.add(`transaction.${key}`);
    else if (key === 'business_date' && !/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])$/.test(value)) wrong.add(`transaction.${key}`);
    else if (key === 'occurred_at' && !/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$/.test(value))
      wrong.add(`transaction.${key}`);
  }
  const codes = resource.codes;
  if (
    !present('codes') ||
    !Array.isArray(codes) ||
    codes.length < 1 ||
    codes.length > 10 ||
    !codes.every((code) => typeof code === 'string' && codePoints(code) >= 1 && codePoints(code) <= 64)
  ) {
    wrong.add('transaction.codes');
  }
  for (const field of basketProblems(resource.basket)) wrong.add(field);
  const customer = resource.customer_id;
  if (present('customer_id') && (typeof customer !== 'string' || codePoints(customer) < 1 || codePoints(customer) > 128)) wrong.add('transaction.customer_id');
  if (wrong.size > 0) return { kind: 'invalid', fields: wrong };
  const basket = resource.basket as { total: number; currency: string } | null | undefined;
  return {
    kind: 'valid',
    value: {
      site_id: resource.site_id,
      pos_transaction_id: resource.pos_transaction_id,
      codes,
      ...(basket ? { basket: { total: basket.total, currency: basket.currency } } : {}),
      ...(present('customer_id') ? { customer_id: customer } : {}),
    },
  };
}

/** A promotion as the till's judge reads it: a code generator's status, description, terms and limits (as a read of it shows them). */
export interface Promotion {
  status: string;
  description: string;
  discount: Discount;
  minimum_basket: { amount: number; currency: string } | null;
  valid_from: string | null;
  valid_until: string | null;
  site_ids: string[] | null;
  max_redemptions_per_code: number;
  max_redemptions: number | null;
  max_redemptions_per_customer: number | null;
}

/** The fields of a code generator (as a read shows it) that the till's judge reads. */
export const PROMOTION_FIELDS = [
  'status',
  'description',
  'discount',
  'minimum_basket',
  'valid_from',
  'valid_until',
  'site_ids',
  'max_redemptions_per_code',
  'max_redemptions',
  'max_redemptions_per_customer',
] as const;
type Discount =
  | { type: 'none' }
  | { type: 'percent'; percent_off: number; max_amount_off?: number; currency?: string }
  | { type: 'amount'; amount_off: number; currency: string };

/** What a code gave the transaction that holds it (or would give): the discount, and the amount when one was computed. */
interface Given {
  discount: Discount;
  discount_amount?: number;
  currency?: string;
}

/** A code a transaction holds: what it gave, when, and for which customer (the id as sent) when the till named one. */
export interface HeldCode {
  code: string;
  generatorId: number;
  given: Given;
  redeemedAt: string;
  customer?: string;
}

/** What a till's shop holds, as the fuzzer has made it: codes, their promotions, which transactions hold which codes and what each got, voided transactions. */
export interface TillModel {
  /** The caller's issued codes (as issued) and their generator. */
  readonly codes: ReadonlyMap<string, { generatorId: number }>;
  /** Generator id → its status, description, terms and limits now. */
  readonly promotions: Map<number, Promotion>;
  /** Transaction (site/pos JSON) → the codes it holds, in the order redeemed (a voided one holds none). */
  readonly held: Map<string, HeldCode[]>;
  readonly voided: Set<string>;
}

/** A model with nothing redeemed and nothing voided. */
export const newTillModel = (promotions: Map<number, Promotion>, codes: ReadonlyMap<string, { generatorId: number }>): TillModel => ({
  codes,
  promotions,
  held: new Map(),
  voided: new Set(),
});

/** The transactions holding a code, in the order they took it. */
export const holdersOf = (model: TillModel, code: string) =>
  [...model.held].filter(([, codes]) => codes.some((held) => held.code === code)).map(([transaction]) => transaction);

/** The uses a promotion's codes have, across the transactions holding them, for one customer when named. */
export function usesOf(model: TillModel, generatorId: number, customer?: string): number {
  let uses = 0;
  for (const codes of model.held.values())
    for (const held of codes) if (held.generatorId === generatorId && (customer === undefined || held.customer === customer)) uses++;
  return uses;
}

/** A failing code (`code` as issued, or as sent when not found), or a failure of the whole request. */
export interface Failure {
  messageId: string;
  code?: string;
  generatorId?: number;
  /** The display message's `message_content` beside `code` and `code_generator_id`. */
  content?: Record<string, unknown>;
}

export type RedemptionVerdict =
  | { kind: 'success'; codes: { code: string; generatorId: number; given: Given; held: boolean }[]; fresh: string[] }
  | { kind: 'refused'; status: 409 | 422; failures: Failure[] };

/** The promotion's currency: its discount's, else its minimum basket's, else none (it takes a basket in any). */
export function promotionCurrency(promotion: Promotion): string | undefined {
  return ('currency' in promotion.discount ? promotion.discount.currency : undefined) ?? promotion.minimum_basket?.currency;
}

/**
 * The first term of PRODUCT.md's order a code of this promotion breaks for this till at `now`
 * (the service's clock), with what its display message names; undefined when it breaks none.
 * The minimum is compared with the basket's total as sent.
 */
function brokenTerm(promotion: Promotion, siteId: string, basket: Basket | undefined, now: number): Omit<Failure, 'code' | 'generatorId'> | undefined {
  if (promotion.status !== 'active') return { messageId: 'code_generator_inactive', content: {} };
  if (promotion.valid_from !== null && now < Date.parse(promotion.valid_from))
    return { messageId: 'code_not_yet_valid', content: { valid_from: promotion.valid_from } };
  if (promotion.valid_until !== null && now >= Date.parse(promotion.valid_until))
    return { messageId: 'code_expired', content: { valid_until: promotion.valid_until } };
  if (promotion.site_ids !== null && !promotion.site_ids.includes(siteId)) return { messageId: 'code_not_valid_at_site', content: { site_id: siteId } };
  const minimum = promotion.minimum_basket;
  if (minimum !== null && basket === undefined) return { messageId: 'basket_required', content: { minimum_basket: minimum } };
  const currency = promotionCurrency(promotion);
  if (basket !== undefined && currency !== undefined && basket.currency !== currency)
    return { messageId: 'currency_mismatch', content: { currency, basket_currency: basket.currency } };
  if (minimum !== null && basket!.total < minimum.amount)
    return { messageId: 'basket_below_minimum', content: { minimum_basket: minimum, basket_total: basket!.total } };
  return undefined;
}

/** A percentage in hundredths, from the shortest decimal form of the number (it has at most two decimals). */
function hundredths(percent: number): bigint {
  const [whole = '0', fraction = ''] = String(percent).split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
}

/**
 * What a discount takes off what is left of the basket, in minor units: for `percent` left ×
 * percent_off / 100 rounded half up (exact, in integers), capped by max_amount_off; for `amount`
 * the smaller of amount_off and what is left.
 */
function amountOff(discount: Discount, left: number): number {
  if (discount.type === 'amount') return Math.min(discount.amount_off, left);
  if (discount.type === 'none') return 0;
  const off = Number((BigInt(left) * hundredths(discount.percent_off) * 2n + 10_000n) / 20_000n);
  return discount.max_amount_off === undefined ? off : Math.min(off, discount.max_amount_off);
}

/** An amount as a cashier reads it: the major unit with the currency's ISO 4217 decimals, and its code (`2.50 EUR`, `300 JPY`). */
export function formatMoney(amount: number, currency: string): string {
  const decimals = minorUnits(currency)!;
  if (decimals === 0) return `${amount} ${currency}`;
  const digits = String(amount).padStart(decimals + 1, '0');
  return `${digits.slice(0, digits.length - decimals)}.${digits.slice(digits.length - decimals)} ${currency}`;
}

/**
 * The answer PRODUCT.md gives a valid redemption (or check) in a known state at `now`: each
 * distinct code (ASCII letters folded, listed twice counts once) in order; a code this
 * transaction holds is not judged again and gives what it recorded; any other is judged by its
 * promotion's terms in PRODUCT.md's order, then by the counts of "Counting": `customer_required`
 * (a limit per customer and no customer_id), the code's uses (held by as many other transactions
 * as its current maximum: `code_already_redeemed` when that is 1, else
 * `code_usage_limit_reached`), the promotion's budget, the customer's uses of the promotion; the
 * codes of one request count together, each taking one use of its promotion's budget and of the
 * customer's limit when it passes, so that a later code of the same promotion finds one use
 * fewer. 422 if any code is not the account's, else 409 if any fails or the transaction was
 * voided (it holds nothing then) or would hold more than MAX_HELD_CODES codes (docs/redemption.md:
 * every listed code it does not hold and that has a use left counts, whatever its terms: a
 * single-use code another transaction holds does not, a multi-use code does until its uses are
 * all held). On success each code's discount and amount: the codes apply in their order to what
 * is left of the basket, a held code taking off what it recorded (in the basket's currency), a
 * fresh one what its discount takes (none without a basket or for type none).
 */
export function judgeTill(body: RedemptionBody, model: TillModel, now: number): RedemptionVerdict {
  const me = JSON.stringify([body.site_id, body.pos_transaction_id]);
  const seen = new Set<string>();
  const distinct: { typed: string; issued?: string }[] = [];
  for (const typed of body.codes) {
    const folded = /^[\x21-\x7e]+$/.test(typed) ? typed.replace(/[a-z]/g, (c) => c.toUpperCase()) : undefined;
    const identity = folded ?? `raw:${typed}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    distinct.push({ typed, ...(folded !== undefined && model.codes.has(folded) ? { issued: folded } : {}) });
  }
  const mine = new Map((model.held.get(me) ?? []).map((held) => [held.code, held]));
  const failures: Failure[] = [];
  const succeeding: { code: string; generatorId: number; held?: HeldCode }[] = [];
  /** Uses the codes before the current one take, per promotion. */
  const taking = new Map<number, number>();
  let adding = 0;
  let notFound = false;
  for (const code of distinct) {
    if (code.issued === undefined) {
      failures.push({ messageId: 'code_not_found', content: { code: code.typed } });
      notFound = true;
      continue;
    }
    const generatorId = model.codes.get(code.issued)!.generatorId;
    const held = mine.get(code.issued);
    if (held) {
      succeeding.push({ code: code.issued, generatorId, held });
      continue;
    }
    const promotion = model.promotions.get(generatorId)!;
    if (holdersOf(model, code.issued).length < promotion.max_redemptions_per_code) adding++;
    const refused = brokenTerm(promotion, body.site_id, body.basket, now) ?? countRefusal(promotion, model, code.issued, generatorId, body.customer_id, taking);
    if (refused) failures.push({ ...refused, code: code.issued, generatorId });
    else {
      taking.set(generatorId, (taking.get(generatorId) ?? 0) + 1);
      succeeding.push({ code: code.issued, generatorId });
    }
  }
  const held = model.held.get(me)?.length ?? 0;
  if (model.voided.has(me))
    failures.unshift({ messageId: 'transaction_voided', content: { site_id: body.site_id, pos_transaction_id: body.pos_transaction_id } });
  if (held + adding > MAX_HELD_CODES) failures.push({ messageId: 'too_many_codes', content: { held, adding, limit: MAX_HELD_CODES } });
  if (failures.length > 0) return { kind: 'refused', status: notFound ? 422 : 409, failures };

  let left = body.basket?.total ?? 0;
  const codes = succeeding.map(({ code, generatorId, held: recorded }) => {
    if (recorded) {
      const { given } = recorded;
      if (given.discount_amount !== undefined && given.currency === body.basket?.currency) left = Math.max(0, left - given.discount_amount);
      return { code, generatorId, given, held: true };
    }
    const { discount } = model.promotions.get(generatorId)!;
    if (body.basket === undefined || discount.type === 'none') return { code, generatorId, given: { discount }, held: false };
    const off = amountOff(discount, left);
    left -= off;
    return { code, generatorId, given: { discount, discount_amount: off, currency: body.basket.currency }, held: false };
  });
  return { kind: 'success', codes, fresh: codes.filter((code) => !code.held).map((code) => code.code) };
}

/** The first count of "Counting" a code breaks (its terms passed), given the uses the codes before it in the request take. */
function countRefusal(
  promotion: Promotion,
  model: TillModel,
  code: string,
  generatorId: number,
  customer: string | undefined,
  taking: ReadonlyMap<number, number>,
): Omit<Failure, 'code' | 'generatorId'> | undefined {
  const perCustomer = promotion.max_redemptions_per_customer;
  if (perCustomer !== null && customer === undefined) return { messageId: 'customer_required', content: { max_redemptions_per_customer: perCustomer } };
  const maximum = promotion.max_redemptions_per_code;
  if (holdersOf(model, code).length + 1 > maximum) {
    return maximum === 1
      ? { messageId: 'code_already_redeemed', content: {} }
      : { messageId: 'code_usage_limit_reached', content: { max_redemptions_per_code: maximum } };
  }
  const before = taking.get(generatorId) ?? 0;
  const budget = promotion.max_redemptions;
  if (budget !== null && usesOf(model, generatorId) + before + 1 > budget)
    return { messageId: 'promotion_budget_exhausted', content: { max_redemptions: budget } };
  if (perCustomer !== null && usesOf(model, generatorId, customer) + before + 1 > perCustomer) {
    return { messageId: 'customer_limit_reached', content: { max_redemptions_per_customer: perCustomer } };
  }
  return undefined;
}

/** A successful redemption's codes taken now, into the model: held by the transaction with what they gave, at `redeemedAt`, for the customer named. */
export function recordRedemption(model: TillModel, body: RedemptionBody, verdict: Extract<RedemptionVerdict, { kind: 'success' }>, redeemedAt: string): void {
  const me = JSON.stringify([body.site_id, body.pos_transaction_id]);
  const taken = verdict.codes
    .filter(({ held }) => !held)
    .map(
      ({ code, generatorId, given }): HeldCode => ({
        code,
        generatorId,
        given,
        redeemedAt,
        ...(body.customer_id !== undefined ? { customer: body.customer_id } : {}),
      }),
    );
  if (taken.length > 0) model.held.set(me, [...(model.held.get(me) ?? []), ...taken]);
}

/** A first void of a transaction, into the model: it releases what it holds (returned, in the order redeemed) and is voided for good. */
export function recordVoid(model: TillModel, transaction: string): HeldCode[] {
  const released = model.held.get(transaction) ?? [];
  model.held.delete(transaction);
  model.voided.add(transaction);
  return released;
}

/**
 * The uses the count tables must hold for this model (keys as count-tables.ts names them): per
 * promotion, per code and per customer of a promotion (by `customerKey`, the keyed hash the
 * service stores), the uses held by transactions not voided.
 */
export function expectedCounts(model: TillModel, accountId: number, customerKey: (customer: string) => string): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const codes of model.held.values()) {
    for (const held of codes) {
      bump(`promotion ${held.generatorId}`);
      bump(`code ${accountId}#${held.code}`);
      if (held.customer !== undefined) bump(`customer ${held.generatorId}#${customerKey(held.customer)}`);
    }
  }
  return counts;
}
