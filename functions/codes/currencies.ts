/** Stand-in until the ISO 4217 table lands (branch terms24). */
const EXPONENTS: Record<string, number> = { EUR: 2, USD: 2, GBP: 2, CHF: 2, JPY: 0, KRW: 0, BHD: 3, KWD: 3, CLF: 4 };
export const minorUnits = (code: string): number | undefined => EXPONENTS[code];
