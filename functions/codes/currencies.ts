/**
 * The currencies a promotion's amounts may be in: ISO 4217's list one (current currencies and
 * funds) as published on 2026-01-01, each with its minor unit, the exponent that turns the
 * minor units amounts are given in into the major unit (EUR 2: 250 is 2.50 EUR; JPY 0: 300 is
 * 300 JPY). The codes ISO 4217 lists without a minor unit ("N.A.": the precious metals XAU, XAG,
 * XPD and XPT, the bond-market units XBA-XBD, XDR, XSU, XUA, and the test and no-currency codes
 * XTS and XXX) are left out: an amount in minor units means nothing for them.
 *
 * ISO 4217 changes a few times a year (BGN left on 2026-01-01, when Bulgaria adopted the euro;
 * XCG replaced ANG in 2025): a code it adds is refused until it is added here.
 */
const BY_MINOR_UNIT: Readonly<Record<number, string>> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2:
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU ' +
    'CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES ' +
    'KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR ' +
    'NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP ' +
    'TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XAD XCD XCG YER ZAR ZMW ZWG',
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};

const MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  Object.entries(BY_MINOR_UNIT).flatMap(([exponent, codes]) => codes.split(' ').map((code) => [code, Number(exponent)] as const)),
);

/** Every code of the table, in alphabetical order. */
export const CURRENCY_CODES: readonly string[] = [...MINOR_UNITS.keys()].sort();

/** The minor unit of a currency ISO 4217 lists with one (EUR 2, JPY 0, BHD 3, CLF 4), else undefined. */
export function minorUnits(code: string): number | undefined {
  return MINOR_UNITS.get(code);
}
