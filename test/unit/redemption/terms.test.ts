import { describe, expect, it } from 'vitest';
import { amountOff, brokenTerm, formatAmount, formatMoment, type Judged } from '../../../functions/redemption/terms.ts';

/** The arithmetic and the order of the terms (PRODUCT.md "Promotion terms"), as plain functions. */
const open: Judged = { status: 'active', discount: { type: 'none' }, minimum_basket: null, valid_from: null, valid_until: null, site_ids: null };

describe('amountOff', () => {
  it('rounds a percentage half up, at the boundaries', () => {
    const tenth = { type: 'percent', percent_off: 10 } as const;
    expect(amountOff(tenth, 25)).toBe(3); // 2.5 → 3
    expect(amountOff(tenth, 24)).toBe(2); // 2.4 → 2
    expect(amountOff(tenth, 15)).toBe(2); // 1.5 → 2
    expect(amountOff(tenth, 14)).toBe(1);
    expect(amountOff(tenth, 5)).toBe(1); // 0.5 → 1
    expect(amountOff(tenth, 4)).toBe(0);
    expect(amountOff(tenth, 0)).toBe(0);
  });

  it('takes percentages with two decimals exactly, also past 2^53', () => {
    expect(amountOff({ type: 'percent', percent_off: 12.5 }, 1000)).toBe(125);
    expect(amountOff({ type: 'percent', percent_off: 0.01 }, 5000)).toBe(1); // 0.5 → 1
    expect(amountOff({ type: 'percent', percent_off: 0.01 }, 4999)).toBe(0);
    expect(amountOff({ type: 'percent', percent_off: 33.33 }, 1e12)).toBe(333_300_000_000);
    expect(amountOff({ type: 'percent', percent_off: 99.99 }, 999_999_999_999)).toBe(999_899_999_999); // 999899999999.0001
    expect(amountOff({ type: 'percent', percent_off: 100 }, 1e12)).toBe(1e12);
    // 0.07 is 0.07000000000000000666 as a double: read as 7 hundredths, not 7.000000000000001.
    expect(amountOff({ type: 'percent', percent_off: 0.07 }, 10_000)).toBe(7);
  });

  it('caps a percentage by max_amount_off', () => {
    const capped = { type: 'percent', percent_off: 50, max_amount_off: 1000, currency: 'EUR' } as const;
    expect(amountOff(capped, 1999)).toBe(1000);
    expect(amountOff(capped, 2000)).toBe(1000);
    expect(amountOff(capped, 1000)).toBe(500);
  });

  it('takes a fixed amount, never more than the total', () => {
    const five = { type: 'amount', amount_off: 500, currency: 'EUR' } as const;
    expect(amountOff(five, 2000)).toBe(500);
    expect(amountOff(five, 300)).toBe(300);
    expect(amountOff(five, 0)).toBe(0);
    expect(amountOff({ type: 'none' }, 2000)).toBe(0);
  });
});

describe('brokenTerm', () => {
  const now = Date.parse('2026-12-01T10:00:00.000Z');
  const basket = { total: 2000, currency: 'EUR' };

  it('judges in order: inactive, not yet valid, expired, site, basket required, currency, minimum', () => {
    const everything: Judged = {
      status: 'inactive',
      discount: { type: 'amount', amount_off: 500, currency: 'USD' },
      minimum_basket: { amount: 5000, currency: 'USD' },
      valid_from: '2026-12-02T00:00:00.000Z',
      valid_until: '2026-11-30T00:00:00.000Z',
      site_ids: ['S-1'],
    };
    const order: string[] = [];
    let terms: Judged = everything;
    const fixes: ((t: Judged) => Judged)[] = [
      (t) => ({ ...t, status: 'active' }),
      (t) => ({ ...t, valid_from: null }),
      (t) => ({ ...t, valid_until: null }),
      (t) => ({ ...t, site_ids: null }),
    ];
    for (const fix of fixes) {
      order.push(brokenTerm(terms, 'S-2', undefined, now)!);
      terms = fix(terms);
    }
    order.push(brokenTerm(terms, 'S-2', undefined, now)!);
    order.push(brokenTerm(terms, 'S-2', basket, now)!);
    order.push(brokenTerm(terms, 'S-2', { total: 2000, currency: 'USD' }, now)!);
    expect(order).toEqual([
      'code_generator_inactive',
      'code_not_yet_valid',
      'code_expired',
      'code_not_valid_at_site',
      'basket_required',
      'currency_mismatch',
      'basket_below_minimum',
    ]);
    expect(brokenTerm(terms, 'S-2', { total: 5000, currency: 'USD' }, now)).toBeUndefined();
  });

  it('valid_from is inclusive, valid_until exclusive', () => {
    expect(brokenTerm({ ...open, valid_from: '2026-12-01T10:00:00.000Z' }, 'S', undefined, now)).toBeUndefined();
    expect(brokenTerm({ ...open, valid_from: '2026-12-01T10:00:00.001Z' }, 'S', undefined, now)).toBe('code_not_yet_valid');
    expect(brokenTerm({ ...open, valid_until: '2026-12-01T10:00:00.000Z' }, 'S', undefined, now)).toBe('code_expired');
    expect(brokenTerm({ ...open, valid_until: '2026-12-01T10:00:00.001Z' }, 'S', undefined, now)).toBeUndefined();
  });

  it('a promotion without a currency takes any basket; a basket of 0 meets no positive minimum', () => {
    expect(brokenTerm({ ...open, discount: { type: 'percent', percent_off: 10 } }, 'S', { total: 0, currency: 'JPY' }, now)).toBeUndefined();
    expect(brokenTerm({ ...open, minimum_basket: { amount: 1, currency: 'JPY' } }, 'S', { total: 0, currency: 'JPY' }, now)).toBe('basket_below_minimum');
    expect(brokenTerm({ ...open, minimum_basket: { amount: 1, currency: 'JPY' } }, 'S', { total: 1, currency: 'JPY' }, now)).toBeUndefined();
  });

  it('compares site ids exactly', () => {
    expect(brokenTerm({ ...open, site_ids: ['Berlin-1'] }, 'berlin-1', undefined, now)).toBe('code_not_valid_at_site');
    expect(brokenTerm({ ...open, site_ids: ['Berlin-1'] }, 'Berlin-1', undefined, now)).toBeUndefined();
  });
});

describe('cashier texts', () => {
  it('name amounts in the major unit with ISO 4217 decimals', () => {
    expect(formatAmount(250, 'EUR')).toBe('2.50 EUR');
    expect(formatAmount(5, 'EUR')).toBe('0.05 EUR');
    expect(formatAmount(0, 'EUR')).toBe('0.00 EUR');
    expect(formatAmount(300, 'JPY')).toBe('300 JPY');
    expect(formatAmount(1234, 'BHD')).toBe('1.234 BHD');
    expect(formatAmount(1e12, 'EUR')).toBe('10000000000.00 EUR');
  });

  it('name moments in UTC, seconds only when they are there', () => {
    expect(formatMoment('2026-12-01T10:00:00.000Z')).toBe('1 December 2026 10:00 UTC');
    expect(formatMoment('2026-12-31T23:59:59.000Z')).toBe('31 December 2026 23:59:59 UTC');
  });
});
