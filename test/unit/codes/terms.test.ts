import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../functions/http/errors.ts';
import { checkBody } from '../../../functions/http/validation.ts';
import { validators } from '../../../functions/http/schemas/all.generated.ts';
import { basketRules, inUtc, termsProblems, utcMillis } from '../../../functions/codes/terms.ts';

/** What a check threw, as the client will read it. */
function problemsOf(check: () => unknown) {
  try {
    check();
  } catch (error) {
    if (error instanceof HttpError) return error.problems;
    throw error;
  }
  return [];
}

describe('utcMillis: date-times as the terms store them', () => {
  it.each([
    ['2026-12-01T10:00:00+01:00', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01t10:00:00z', '2026-12-01T10:00:00.000Z'],
    ['2026-12-01T10:00:00.123456789-00:30', '2026-12-01T10:30:00.123Z'],
    ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s is %s', (text, utc) => expect(utcMillis(text)).toBe(utc));

  it.each(['2026-12-31T23:59:60Z', '9999-12-31T23:00:00-02:00', '0000-01-01T00:30:00+01:00'])('%s has no such form', (text) =>
    expect(utcMillis(text)).toBeUndefined(),
  );

  it('converts the bounds of a body and leaves the rest as it is', () => {
    expect(inUtc({ valid_from: '2026-12-01T10:00:00+01:00', valid_until: null, site_ids: ['S-1'] })).toEqual({
      valid_from: '2026-12-01T09:00:00.000Z',
      valid_until: null,
      site_ids: ['S-1'],
    });
  });
});

describe('termsProblems: the rules between terms', () => {
  it('compares the currencies of the discount and the minimum basket when both have one', () => {
    const basket = { amount: 100, currency: 'USD' };
    expect(termsProblems({ discount: { type: 'amount', amount_off: 1, currency: 'EUR' }, minimum_basket: basket })).toEqual([
      { key: 'minimum_basket.currency', message: 'must be EUR, the currency of the discount' },
    ]);
    expect(termsProblems({ discount: { type: 'percent', percent_off: 5 }, minimum_basket: basket })).toEqual([]);
    expect(termsProblems({ discount: { type: 'none' }, minimum_basket: basket })).toEqual([]);
    expect(termsProblems({ discount: { type: 'amount', amount_off: 1, currency: 'USD' }, minimum_basket: basket })).toEqual([]);
  });

  it('wants valid_from strictly before valid_until, compared as moments', () => {
    const problem = { key: 'valid_until', message: 'must be later than valid_from (2026-12-01T09:00:00.000Z)' };
    expect(termsProblems({ valid_from: '2026-12-01T10:00:00+01:00', valid_until: '2026-12-01T09:00:00.000Z' })).toEqual([problem]);
    expect(termsProblems({ valid_from: '2026-12-01T10:00:00+01:00', valid_until: '2026-12-01T08:59:59.999Z' })).toEqual([problem]);
    expect(termsProblems({ valid_from: '2026-12-01T10:00:00+01:00', valid_until: '2026-12-01T09:00:00.001Z' })).toEqual([]);
    expect(termsProblems({ valid_from: null, valid_until: '2000-01-01T00:00:00Z' })).toEqual([]);
  });
});

describe("the till's basket (transaction.basket on the pos host)", () => {
  const redemption = (basket: unknown) => ({ site_id: 'S-1', pos_transaction_id: 'T-1', codes: ['WIN-1'], basket });
  const check = (basket: unknown) => () => checkBody(validators.codesRedemption, redemption(basket), 'transaction', basketRules);

  it('takes a total of 0 to 10^12 in a currency ISO 4217 lists, ignoring keys it does not know', () => {
    expect(check({ total: 0, currency: 'JPY' })()).toMatchObject({ basket: { total: 0, currency: 'JPY' } });
    expect(check({ total: 10 ** 12, currency: 'EUR', vat: 19 })()).toMatchObject({ basket: { total: 10 ** 12, currency: 'EUR' } });
  });

  it.each([
    [{ total: -1, currency: 'EUR' }, 'transaction.basket.total must be between 0 and 1000000000000'],
    [{ total: 10 ** 12 + 1, currency: 'EUR' }, 'transaction.basket.total must be between 0 and 1000000000000'],
    [{ total: 12.5, currency: 'EUR' }, 'transaction.basket.total must be an integer'],
    [{ currency: 'EUR' }, 'transaction.basket.total is required'],
    [{ total: 100 }, 'transaction.basket.currency is required'],
    [{ total: 100, currency: 'eur' }, 'transaction.basket.currency must be an ISO 4217 currency code: three uppercase letters, such as EUR'],
    [{ total: 100, currency: 'XYZ' }, 'transaction.basket.currency must be a currency code ISO 4217 lists with a minor unit: XYZ is not one'],
    ['4250 EUR', 'transaction.basket must be an object'],
  ])('refuses %o naming the field', (basket, message) => {
    expect(problemsOf(check(basket)).map((problem) => problem.message)).toEqual([message]);
  });
});
