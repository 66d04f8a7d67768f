import { describe, expect, it } from 'vitest';
import { CURRENCY_CODES, minorUnits } from '../../../functions/codes/currencies.ts';

/** The ISO 4217 table the terms' currencies are checked against, and the exponent amounts are read with. */
describe('minorUnits', () => {
  it.each([
    ['EUR', 2],
    ['USD', 2],
    ['GBP', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['XOF', 0],
    ['BHD', 3],
    ['KWD', 3],
    ['TND', 3],
    ['CLF', 4],
    ['UYW', 4],
    ['XCG', 2],
  ] as const)('%s has %i decimals', (code, exponent) => {
    expect(minorUnits(code)).toBe(exponent);
  });

  it.each([
    ['a code ISO 4217 lists without a minor unit (gold, the test code, no currency)', ['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XTS', 'XXX', 'XBA', 'XSU', 'XUA']],
    ['a withdrawn code', ['DEM', 'FRF', 'HRK', 'ANG', 'BGN', 'SLL']],
    ['a code never assigned', ['ABC', 'XYZ', 'EUX']],
    ['a code in another case or form', ['eur', 'Eur', 'EURO', 'EU', '', ' EUR']],
    ["an object's own property", ['constructor', '__proto__', 'toString']],
  ])('knows no minor unit for %s', (_, codes) => {
    for (const code of codes) expect(minorUnits(code), code).toBeUndefined();
  });
});

describe('CURRENCY_CODES', () => {
  it('lists each code of the table once, in alphabetical order, each three uppercase letters with a minor unit of 0, 2, 3 or 4', () => {
    expect(CURRENCY_CODES).toHaveLength(165);
    expect([...CURRENCY_CODES].sort()).toEqual(CURRENCY_CODES);
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length);
    for (const code of CURRENCY_CODES) {
      expect(code).toMatch(/^[A-Z]{3}$/);
      expect([0, 2, 3, 4]).toContain(minorUnits(code));
    }
  });

  it('counts 17 currencies without decimals, 7 with three and 2 with four; the others have two', () => {
    const byExponent = (exponent: number) => CURRENCY_CODES.filter((code) => minorUnits(code) === exponent);
    expect(byExponent(0)).toEqual(['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
    expect(byExponent(3)).toEqual(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);
    expect(byExponent(4)).toEqual(['CLF', 'UYW']);
    expect(byExponent(2)).toHaveLength(139);
  });
});
