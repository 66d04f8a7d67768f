import type { BodyRuleProblem, BodyRules } from '#http/validation';
import { isPlainObject } from '#http/validation';
import { DEFAULT_TERMS, generatorCurrency, type PromotionTerms } from '#data/code-generators';
import { minorUnits } from './currencies.ts';

/**
 * What the request schemas cannot say about a promotion's terms (PRODUCT.md "Promotion terms"):
 * a currency ISO 4217 lists, a percentage of at most two decimals, a date-time that has a UTC
 * form with milliseconds, and the rules between terms (the currencies of the discount and the
 * minimum basket agree; valid_from comes before valid_until). The body rules run with the schema
 * on what a create or a PATCH sends; a PATCH is then judged again with the stored terms
 * (`termsProblems`), once the generator is read.
 */

/**
 * A date-time as the terms store and answer it: UTC with milliseconds, as `created_at` is
 * (decimals past the millisecond are dropped). Undefined for a moment that has no such form: a
 * leap second (23:59:60), or a UTC year before 0000 or after 9999.
 */
export function utcMillis(text: string): string | undefined {
  const time = new Date(text.toUpperCase());
  if (Number.isNaN(time.getTime())) return undefined;
  const utc = time.toISOString();
  return /^\d{4}-/.test(utc) ? utc : undefined;
}

const UNREPRESENTABLE = 'must be a moment from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, and not a leap second: it is stored in UTC with milliseconds';

const currencyProblem = (code: string) =>
  minorUnits(code) === undefined ? `must be a currency code ISO 4217 lists with a minor unit: ${code} is not one` : undefined;

/**
 * At most two decimals, as a person types a percentage (12.5, 33.33): 12.345 is refused. A
 * division is correctly rounded, so n / 100 is exactly the number JSON's "0.29" parses to.
 */
const hasTwoDecimalsAtMost = (value: number) => Math.round(value * 100) / 100 === value;

/**
 * The rules between the terms, on terms each of which is valid on its own: by name (`valid_until`,
 * `minimum_basket.currency`), each said without the field's name.
 */
export function termsProblems(terms: Partial<PromotionTerms>): BodyRuleProblem[] {
  const problems: BodyRuleProblem[] = [];
  // The generator's currency is the discount's when it has one: the minimum basket's must be it.
  const currency = generatorCurrency({ ...DEFAULT_TERMS, ...terms });
  const basketCurrency = terms.minimum_basket?.currency;
  if (basketCurrency !== undefined && currency !== basketCurrency) {
    problems.push({ key: 'minimum_basket.currency', message: `must be ${currency}, the currency of the discount` });
  }
  const from = terms.valid_from ? utcMillis(terms.valid_from) : undefined;
  const until = terms.valid_until ? utcMillis(terms.valid_until) : undefined;
  if (from !== undefined && until !== undefined && from >= until) {
    problems.push({ key: 'valid_until', message: `must be later than valid_from (${from})` });
  }
  return problems;
}

/**
 * The create and PATCH body's rules: each term's own, on the fields the schema accepted (a
 * discount's fields once its type is known), then those between the terms that passed every
 * check (a currency refused is not compared again).
 */
export const termRules: BodyRules = (body, passed) => {
  const problems: BodyRuleProblem[] = [];
  const check = (key: string, problem: string | undefined) => {
    if (problem !== undefined && passed(key)) problems.push({ key, message: problem });
  };
  const { discount, minimum_basket: basket } = body;
  if (isPlainObject(discount) && passed('discount.type')) {
    const { percent_off: percentOff, currency } = discount;
    if (typeof percentOff === 'number') check('discount.percent_off', hasTwoDecimalsAtMost(percentOff) ? undefined : 'must have at most two decimals');
    if (typeof currency === 'string') check('discount.currency', currencyProblem(currency));
  }
  if (isPlainObject(basket) && typeof basket.currency === 'string') check('minimum_basket.currency', currencyProblem(basket.currency));
  for (const key of ['valid_from', 'valid_until'] as const) {
    const value = body[key];
    if (typeof value === 'string') check(key, utcMillis(value) === undefined ? UNREPRESENTABLE : undefined);
  }

  const fine = (key: string) => passed(key) && !problems.some((problem) => problem.key === key || problem.key.startsWith(`${key}.`));
  const valid = Object.fromEntries(
    ['discount', 'minimum_basket', 'valid_from', 'valid_until'].filter((key) => key in body && fine(key)).map((key) => [key, body[key]]),
  );
  return [...problems, ...termsProblems(valid as Partial<PromotionTerms>)];
};

/** The terms of a validated body with its date-times in UTC with milliseconds, as they are stored. */
export function inUtc<T extends Partial<Pick<PromotionTerms, 'valid_from' | 'valid_until'>>>(body: T): T {
  const converted = { ...body };
  // termRules refused a date-time without a UTC form: every one left has one.
  for (const key of ['valid_from', 'valid_until'] as const) if (typeof body[key] === 'string') converted[key] = utcMillis(body[key])! as T[typeof key];
  return converted;
}

/**
 * The pos host's basket (`transaction.basket`, POST /v2.0/redeemed_codes and validated_codes):
 * its currency one ISO 4217 lists. For the redemption handlers' `bodyRules`.
 */
export const basketRules: BodyRules = (body, passed) => {
  const basket = body.basket;
  const problem = isPlainObject(basket) && typeof basket.currency === 'string' && passed('basket.currency') ? currencyProblem(basket.currency) : undefined;
  return problem === undefined ? [] : [{ key: 'basket.currency', message: problem }];
};
