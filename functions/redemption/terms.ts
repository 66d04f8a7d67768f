import { generatorCurrency, type Discount, type PromotionTerms } from '#data/code-generators';
import { minorUnits } from '#codes/currencies';

/**
 * A promotion's terms at the till (PRODUCT.md "Promotion terms"): whether a code may be taken
 * now, at this site, for this basket, and what it takes off. Plain functions of the terms, the
 * till's request and the service's clock; the handlers make the transaction prove that the terms
 * they judged by are still current (data/promotion-shards.ts).
 */

/** The sale's total before the discounts of this request's codes, in minor units. */
export interface Basket {
  readonly total: number;
  readonly currency: string;
}

/** The terms a code is judged by, and the generator's status. */
export interface Judged extends PromotionTerms {
  readonly status: 'active' | 'inactive';
}

/** The reasons a promotion's terms refuse a code, in the order they are judged. */
const TERM_FAILURES = [
  'code_generator_inactive',
  'code_not_yet_valid',
  'code_expired',
  'code_not_valid_at_site',
  'basket_required',
  'currency_mismatch',
  'basket_below_minimum',
] as const;
export type TermFailure = (typeof TERM_FAILURES)[number];

/**
 * The first term a code of this promotion breaks for this till now, or undefined. `now` is the
 * service's clock, never the till's `occurred_at`. The minimum is compared with the basket's
 * total as sent (the sale before any of this request's codes), so the order of the codes listed
 * never decides whether one applies.
 */
export function brokenTerm(terms: Judged, siteId: string, basket: Basket | undefined, now: number): TermFailure | undefined {
  if (terms.status !== 'active') return 'code_generator_inactive';
  if (terms.valid_from !== null && now < Date.parse(terms.valid_from)) return 'code_not_yet_valid';
  if (terms.valid_until !== null && now >= Date.parse(terms.valid_until)) return 'code_expired';
  if (terms.site_ids !== null && !terms.site_ids.includes(siteId)) return 'code_not_valid_at_site';
  if (terms.minimum_basket !== null && basket === undefined) return 'basket_required';
  const currency = generatorCurrency(terms);
  if (basket !== undefined && currency !== undefined && basket.currency !== currency) return 'currency_mismatch';
  if (terms.minimum_basket !== null && basket!.total < terms.minimum_basket.amount) return 'basket_below_minimum';
  return undefined;
}

/**
 * What a code takes off `left` (the basket's total after the codes before it in the request):
 * for `percent` the total × percent_off / 100 rounded half up, capped by max_amount_off; for
 * `amount` the smaller of amount_off and the total; `none` takes off nothing. Exact in integers
 * (percent_off has at most two decimals; totals up to 10^12 need more than a double's 53 bits).
 */
export function amountOff(discount: Discount, left: number): number {
  switch (discount.type) {
    case 'none':
      return 0;
    case 'amount':
      return Math.min(discount.amount_off, left);
    case 'percent': {
      const hundredths = BigInt(Math.round(discount.percent_off * 100));
      const off = Number((BigInt(left) * hundredths + 5000n) / 10000n);
      return Math.min(off, discount.max_amount_off ?? off, left);
    }
  }
}

/** An amount in minor units as a cashier reads it: the major unit with ISO 4217's decimals and the code. */
export function formatAmount(amount: number, currency: string): string {
  const decimals = minorUnits(currency) ?? 2;
  const digits = String(amount).padStart(decimals + 1, '0');
  const major = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return `${major} ${currency}`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `1 December 2026 10:00 UTC` (seconds shown only when the time has them). */
export function formatMoment(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  const seconds = date.getUTCSeconds() !== 0 || date.getUTCMilliseconds() !== 0 ? `:${pad(date.getUTCSeconds())}` : '';
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}${seconds} UTC`;
}
