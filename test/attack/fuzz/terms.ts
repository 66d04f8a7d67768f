import fc from 'fast-check';

/**
 * Arbitraries of a promotion's terms (PRODUCT.md "Promotion terms") and, at the end, its limits
 * ("Counting"), for the fuzzers of codes/ (create and PATCH bodies, judged by codes/oracle.ts) and
 * redemption/ (the generators a till redeems from): valid terms in every form the contract allows (date-times in any offset and
 * precision, keys in any order, the extremes of each range), and terms that break one rule each.
 * The arbitraries only build values; what a value means is the oracles' business.
 */

/** Currencies ISO 4217 lists, with 2, 0, 3 and 4 decimals. */
const LISTED = ['EUR', 'JPY', 'USD', 'BHD'] as const;
const currency = fc.oneof({ arbitrary: fc.constantFrom(...LISTED), weight: 8 }, { arbitrary: fc.constantFrom('CLF', 'KWD', 'ISK', 'GBP'), weight: 1 });
/** Three letters ISO 4217 does not list with a minor unit, and codes of the wrong form. */
const unlistedCurrency = fc.constantFrom('XYZ', 'XAU', 'XXX', 'DEM', 'BGN', 'ANG', 'QQQ');
const malformedCurrency: fc.Arbitrary<unknown> = fc.constantFrom('eur', 'Eur', 'EURO', 'EU', '', 'E1R', 'ÉUR', ' EUR', 978, null, true, ['EUR']);

const amount = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 100_000 }), weight: 6 },
  { arbitrary: fc.constantFrom(1, 99, 1000, 10 ** 12), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 10 ** 12 }), weight: 1 },
);
const badAmount: fc.Arbitrary<unknown> = fc.constantFrom(0, -1, 10 ** 12 + 1, 2.5, 1e21, '100', null, true, [100]);
const percentOff = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100), weight: 3 },
  { arbitrary: fc.constantFrom(0.01, 0.29, 0.3, 12.5, 33.33, 99.99, 100, 5.05), weight: 2 },
);
const badPercentOff: fc.Arbitrary<unknown> = fc.constantFrom(0, -5, 100.01, 12.345, 7.125, 0.001, 1e-7, 150, '10', null, true, 1e21);

/** Shuffles an object's keys (the order of a JSON object's keys means nothing). */
const shuffled = (value: Record<string, unknown>, seed: number) => {
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = (seed >> (i * 3)) % (i + 1);
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return Object.fromEntries(keys.map((key) => [key, value[key]]));
};

export const validDiscount: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { arbitrary: fc.constant({ type: 'none' }), weight: 2 },
  { arbitrary: percentOff.map((p) => ({ type: 'percent', percent_off: p })), weight: 3 },
  {
    arbitrary: fc.tuple(percentOff, amount, currency).map(([p, cap, c]) => ({ type: 'percent', percent_off: p, max_amount_off: cap, currency: c })),
    weight: 3,
  },
  { arbitrary: fc.tuple(amount, currency).map(([a, c]) => ({ type: 'amount', amount_off: a, currency: c })), weight: 3 },
);

/** A discount that breaks at least one rule (its own, or of its type). */
const invalidDiscount: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    'none',
    null,
    5,
    [],
    [{ type: 'none' }],
    {},
    { type: 'free' },
    { type: 1 },
    { type: null },
    { percent_off: 10 },
    { type: 'PERCENT', percent_off: 10 },
  ),
  fc.constantFrom(
    { type: 'none', percent_off: 10 },
    { type: 'none', currency: 'EUR' },
    { type: 'percent' },
    { type: 'percent', percent_off: 10, max_amount_off: 500 },
    { type: 'percent', percent_off: 10, currency: 'EUR' },
    { type: 'percent', percent_off: 10, max_amount_off: null, currency: 'EUR' },
    { type: 'percent', percent_off: 10, amount_off: 100 },
    { type: 'amount', amount_off: 100 },
    { type: 'amount', currency: 'EUR' },
    { type: 'amount', amount_off: 100, currency: 'EUR', percent_off: 10 },
    { type: 'amount', amount_off: 100, currency: 'EUR', max_amount_off: 100 },
    { type: 'amount', amount_off: 100, currency: 'EUR', colour: 'red' },
  ),
  badPercentOff.map((p) => ({ type: 'percent', percent_off: p })),
  fc.tuple(percentOff, badAmount).map(([p, cap]) => ({ type: 'percent', percent_off: p, max_amount_off: cap, currency: 'EUR' })),
  fc.tuple(percentOff, fc.oneof(unlistedCurrency, malformedCurrency)).map(([p, c]) => ({ type: 'percent', percent_off: p, max_amount_off: 100, currency: c })),
  fc.tuple(badAmount, currency).map(([a, c]) => ({ type: 'amount', amount_off: a, currency: c })),
  fc.tuple(amount, fc.oneof(unlistedCurrency, malformedCurrency)).map(([a, c]) => ({ type: 'amount', amount_off: a, currency: c })),
);

export const validMoney = fc.tuple(amount, currency).map(([a, c]) => ({ amount: a, currency: c }));
const invalidMoney: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(5000, 'EUR', [], [{ amount: 1, currency: 'EUR' }], true, {}),
  badAmount.map((a) => ({ amount: a, currency: 'EUR' })),
  fc.oneof(unlistedCurrency, malformedCurrency).map((c) => ({ amount: 100, currency: c })),
  fc.constantFrom({ amount: 100 }, { currency: 'EUR' }, { amount: 100, currency: 'EUR', note: 'x' }, { amount: 100, currency: 'EUR', total: 1 }),
);

/** Moments the terms are set to: long past, around now, far in the future, and the ends of what a date-time can hold. */
const MOMENTS = [
  '2020-01-01T00:00:00.000Z',
  '2024-02-29T12:30:00.000Z',
  '2026-12-01T09:00:00.000Z',
  '2027-01-01T00:00:00.000Z',
  '2099-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
].map(Date.parse);

/**
 * A moment spelled as RFC 3339 allows: any offset (minutes east of UTC), 0 to 9 decimals (past
 * the millisecond made up, which the service drops), `T`/`t`, `Z`/`z`/`+00:00`/`-00:00`. Where
 * the local time would leave the years 0000–9999, it is spelled in UTC.
 */
export function spell(moment: number, offsetMinutes: number, decimals: number, style: number): string {
  let offset = offsetMinutes;
  let local = new Date(moment + offset * 60_000).toISOString();
  if (!/^\d{4}-/.test(local)) {
    offset = 0;
    local = new Date(moment).toISOString();
  }
  const [date, time] = [local.slice(0, 10), local.slice(11, 19)];
  const fraction = `${local.slice(20, 23)}987654`.slice(0, decimals);
  const zone =
    offset === 0
      ? ['Z', 'z', '+00:00', '-00:00'][style % 4]!
      : `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  return `${date}${style % 2 === 0 ? 'T' : 't'}${time}${fraction === '' ? '' : `.${fraction}`}${zone}`;
}

const offsetMinutes = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.constantFrom(60, -300, 330, 1439, -1439, -60, 765), weight: 2 });
export const dateTime = (moments: readonly number[] = MOMENTS) =>
  fc.tuple(fc.constantFrom(...moments), offsetMinutes, fc.integer({ min: 0, max: 9 }), fc.nat(7)).map(([m, o, d, s]) => spell(m, o, d, s));
const invalidDateTime: fc.Arbitrary<unknown> = fc.constantFrom(
  'tomorrow',
  '2026-12-01T10:00:00',
  '2026-12-01T10:00Z',
  '2026-12-01 10:00:00Z',
  '2026-02-30T00:00:00Z',
  '2100-02-29T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-12-01T24:00:00Z',
  '2026-12-01T10:60:00Z',
  '2026-12-31T23:59:60Z',
  '2026-12-01T10:00:00+24:00',
  '2026-12-01T10:00:00+05:60',
  '2026-12-01T10:00:00.1234567890Z',
  '2026-12-01T10:00:00.Z',
  '9999-12-31T23:00:00-02:00',
  '0000-01-01T00:00:00+00:01',
  '+02026-12-01T10:00:00Z',
  '2026-12-01T10:00:00+0100',
  '２０２６-12-01T10:00:00Z',
  5,
  true,
  {},
  ['2026-12-01T10:00:00Z'],
);

const validSiteIds: fc.Arbitrary<string[] | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 2 },
  {
    arbitrary: fc.uniqueArray(fc.constantFrom('FZ-SITE', 'FZ-OTHER', 'fz-site', 'FZ-SITE ', 'S-1', 'S-2', 'Zürich 1', '😀', 's'.repeat(128)), {
      minLength: 1,
      maxLength: 4,
    }),
    weight: 4,
  },
  { arbitrary: fc.uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 }), weight: 1 },
  { arbitrary: fc.constant(Array.from({ length: 100 }, (_, i) => `S-${i}`)), weight: 1 },
);
const invalidSiteIds: fc.Arbitrary<unknown> = fc.constantFrom(
  [],
  ['S-1', 'S-1'],
  Array.from({ length: 101 }, (_, i) => `S-${i}`),
  [''],
  ['s'.repeat(129)],
  [42],
  ['S-1', null],
  'S-1',
  {},
  5,
);

/**
 * One arbitrary per term: mostly valid, sometimes null (every term but discount may be), and
 * broken with about `broken` in 10 (a term's own rules; the rules between terms see `agreeing`).
 */
const termValues = (broken: number) => ({
  discount: fc.oneof({ arbitrary: validDiscount, weight: 10 - broken }, { arbitrary: invalidDiscount, weight: broken }),
  minimum_basket: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: validMoney, weight: 7 - broken },
    { arbitrary: invalidMoney, weight: broken },
  ),
  valid_from: fc.oneof(
    { arbitrary: fc.constant(null), weight: 2 },
    { arbitrary: dateTime(), weight: 8 - broken },
    { arbitrary: invalidDateTime, weight: broken },
  ),
  valid_until: fc.oneof(
    { arbitrary: fc.constant(null), weight: 2 },
    { arbitrary: dateTime(), weight: 8 - broken },
    { arbitrary: invalidDateTime, weight: broken },
  ),
  site_ids: fc.oneof({ arbitrary: validSiteIds, weight: 10 - broken }, { arbitrary: invalidSiteIds, weight: broken }),
});

/**
 * Makes the terms of a resource agree with one another where they can (a minimum basket in the
 * discount's currency, the bounds in order), so that most generated bodies pass the rules between
 * terms and the rest break them on purpose.
 */
function agreeing(resource: Record<string, unknown>): Record<string, unknown> {
  const out = { ...resource };
  const discount = out.discount as { currency?: unknown } | undefined;
  const minimum = out.minimum_basket as { currency?: unknown } | null | undefined;
  if (
    typeof discount?.currency === 'string' &&
    typeof minimum === 'object' &&
    minimum !== null &&
    !Array.isArray(minimum) &&
    typeof minimum.currency === 'string'
  )
    out.minimum_basket = { ...minimum, currency: discount.currency };
  if (typeof out.valid_from === 'string' && typeof out.valid_until === 'string' && out.valid_from > out.valid_until)
    [out.valid_from, out.valid_until] = [out.valid_until, out.valid_from];
  return out;
}

/** Some of the terms, each present or not, their objects' keys in any order; most agreeing with one another. */
export const someTerms = (broken: number): fc.Arbitrary<Record<string, unknown>> =>
  fc.tuple(fc.record(termValues(broken), { requiredKeys: [] }), fc.nat(), fc.nat(3)).map(([terms, seed, agree]) => {
    const out: Record<string, unknown> = agree > 0 ? agreeing(terms) : { ...terms };
    for (const key of ['discount', 'minimum_basket'])
      if (typeof out[key] === 'object' && out[key] !== null && !Array.isArray(out[key])) out[key] = shuffled(out[key] as Record<string, unknown>, seed);
    return out;
  });

/**
 * A whole set of valid terms that agree with one another (a minimum basket in the discount's
 * currency, valid_from before valid_until): what a PATCH of every term at once may send.
 */
export const consistentTerms = (moments: readonly number[] = MOMENTS) =>
  fc
    .record({
      discount: validDiscount,
      minimum: fc.option(amount, { nil: null }),
      other: currency,
      bounds: fc.uniqueArray(fc.constantFrom(...moments), { minLength: 0, maxLength: 2 }),
      open: fc.nat(3),
      sites: validSiteIds,
    })
    .map(({ discount, minimum, other, bounds, open, sites }) => {
      const own = typeof discount.currency === 'string' ? discount.currency : other;
      const [from, until] = [...bounds].sort((a, b) => a - b);
      const spellOf = (m: number | undefined) => (m === undefined ? null : new Date(m).toISOString());
      return {
        discount,
        minimum_basket: minimum === null ? null : { amount: minimum, currency: own },
        valid_from: open & 1 ? null : spellOf(from),
        valid_until: open & 2 ? null : spellOf(bounds.length === 2 ? until : undefined),
        site_ids: sites,
      };
    });

// ---------------------------------------------------------------- the limits (PRODUCT.md "Counting")

/** An integer from 1 to `max`: its bounds, small ones, and any. */
const count = (max: number) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(1, 2, max), weight: 3 },
    { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 3 },
    { arbitrary: fc.integer({ min: 1, max }), weight: 2 },
  );
/** Values no limit takes: not an integer, not a number, or out of every limit's range. */
const badCount: fc.Arbitrary<unknown> = fc.constantFrom(0, -1, 1.5, 2.5e8, 1e21, '5', true, {}, [1], Number.MAX_SAFE_INTEGER + 2);
/** One arbitrary per limit: mostly valid, null where a limit may be, and broken with about `broken` in 10 (just past its bound, or any bad value). */
const limitValues = (broken: number) => ({
  max_redemptions_per_code: fc.oneof(
    { arbitrary: count(1_000_000), weight: 10 - broken },
    { arbitrary: fc.oneof(badCount, fc.constantFrom(null, 1_000_001)), weight: broken },
  ),
  max_redemptions: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: count(100_000_000), weight: 7 - broken },
    { arbitrary: fc.oneof(badCount, fc.constant(100_000_001)), weight: broken },
  ),
  max_redemptions_per_customer: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: count(1000), weight: 7 - broken },
    { arbitrary: fc.oneof(badCount, fc.constant(1001)), weight: broken },
  ),
});

/** Some of the limits, each present or not. */
export const someLimits = (broken: number): fc.Arbitrary<Record<string, unknown>> => fc.record(limitValues(broken), { requiredKeys: [] });
