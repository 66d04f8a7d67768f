import { minorUnits } from '../../../functions/codes/currencies.ts';
import { codePoints, envelope, isObject, parseRoot, positiveInteger, type BodyVerdict } from '../http/oracle.ts';

/**
 * What PRODUCT.md says the answers of the code routes must be (code generators, their codes),
 * written from the contract and independently of the service's schemas and validators, so that
 * codes/fuzz.test.ts compares two readings of the contract, not one with itself.
 */
const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

const GENERATOR_DEFAULTS = { buffer_type: 'default', description: '', prefix: '', status: 'active' };
const GENERATOR_FIELDS = ['generation_type', 'buffer_type', 'code_length', 'description', 'prefix', 'store_id', 'status'];
const READ_ONLY = ['id', 'account_id', 'created_at', 'updated_at', 'times_redeemed'];

/** A 422's fields: each one it names must be in `fields`, and every one of `must` must be named. */
export type FieldsVerdict =
  | { kind: 'malformed' }
  | { kind: 'invalid'; fields: Set<string>; must: Set<string> }
  | { kind: 'valid'; value: Record<string, unknown> };

/**
 * POST /v1.0/codegen's `code_generator`: the seed's seven fields (PRODUCT.md "Code generators"),
 * the promotion's terms and its limits, every problem named by its field (`code_generator.code_length`,
 * `code_generator.discount.percent_off`). A valid body's value is the generator as every read
 * must show it: the defaults filled in, date-times in UTC with milliseconds, times_redeemed 0.
 */
export function judgeCodeGenerator(text: string): FieldsVerdict {
  const resource = parseRoot(text, 'code_generator');
  if (!resource) return { kind: 'malformed' };
  const problems = newProblems();
  for (const key of Object.keys(resource)) {
    if (GENERATOR_FIELDS.includes(key) || (TERM_FIELDS as readonly string[]).includes(key) || (LIMIT_FIELDS as readonly string[]).includes(key)) continue;
    (READ_ONLY.includes(key) || !isOddKey(key) ? problems.must : problems.may).add(key);
  }
  const present = (key: string) => Object.hasOwn(resource, key);
  if (!['tillgate', 'numeric'].includes(resource.generation_type as string)) problems.must.add('generation_type');
  if (present('buffer_type') && resource.buffer_type !== 'default') problems.must.add('buffer_type');
  if (!(isInteger(resource.code_length) && resource.code_length >= 4 && resource.code_length <= 32)) problems.must.add('code_length');
  if (present('description') && !(typeof resource.description === 'string' && codePoints(resource.description) <= 255)) problems.must.add('description');
  if (present('prefix') && !(typeof resource.prefix === 'string' && /^[A-Z0-9-]{0,16}$/.test(resource.prefix))) problems.must.add('prefix');
  if (!(isInteger(resource.store_id) && resource.store_id >= 1)) problems.must.add('store_id');
  if (present('status') && resource.status !== 'active' && resource.status !== 'inactive') problems.must.add('status');
  judgeTerms(resource, DEFAULT_TERMS, problems);
  judgeLimits(resource, problems);
  if (problems.must.size > 0 || problems.may.size > 0) return invalid(problems);
  // Nothing redeemed yet: a new generator's times_redeemed is 0.
  return { kind: 'valid', value: { ...GENERATOR_DEFAULTS, ...DEFAULT_TERMS, ...DEFAULT_LIMITS, ...resource, ...termsAsRead(resource), times_redeemed: 0 } };
}

/**
 * The fingerprint by which a repeated Idempotency-Key tells "the same request" from "a different
 * body" (PRODUCT.md: the same key with a different body answers 409): the values sent, the
 * defaults filled in, an object's keys in any order. With `moments`, date-times that name the
 * same moment in other spellings count as the same too (whether they do, the contract leaves open).
 */
export function generatorFingerprint(value: Record<string, unknown>, moments = false): string {
  const request = { ...GENERATOR_DEFAULTS, ...DEFAULT_TERMS, ...DEFAULT_LIMITS, ...value };
  return canonicalJson(moments ? { ...request, ...termsAsRead(request) } : request);
}

/** JSON with every object's keys sorted (a list keeps its order). */
function canonicalJson(value: unknown): string {
  const canonical = (inner: unknown): unknown =>
    Array.isArray(inner)
      ? inner.map(canonical)
      : isObject(inner)
        ? Object.fromEntries(
            Object.keys(inner)
              .sort()
              .map((key) => [key, canonical(inner[key])]),
          )
        : inner;
  return JSON.stringify(canonical(value));
}

// ---------------------------------------------------------------- promotion terms

export const TERM_FIELDS = ['discount', 'minimum_basket', 'valid_from', 'valid_until', 'site_ids'] as const;
type TermField = (typeof TERM_FIELDS)[number];
type Terms = Record<TermField, unknown>;
const DEFAULT_TERMS: Terms = { discount: { type: 'none' }, minimum_basket: null, valid_from: null, valid_until: null, site_ids: null };

interface Problems {
  /** Fields (below `code_generator`) the 422 must name. */
  readonly must: Set<string>;
  /** Fields it may name or not: where the contract does not say (odd keys, keys of a discount of no known type). */
  readonly may: Set<string>;
}
const newProblems = (): Problems => ({ must: new Set(), may: new Set() });
const invalid = (problems: Problems, root = 'code_generator'): FieldsVerdict => {
  const named = (fields: Set<string>) => new Set([...fields].map((field) => `${root}.${field}`));
  return { kind: 'invalid', fields: named(new Set([...problems.must, ...problems.may])), must: named(problems.must) };
};

/** Keys whose naming in an error the contract cannot be read to fix: empty, odd characters, Object.prototype's names. */
const isOddKey = (key: string) => !/^[a-z][a-z_]*$/.test(key) || ['constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'].includes(key);

/** ISO 4217 codes with a minor unit: three uppercase letters the table lists. */
const isCurrency = (value: unknown): value is string => typeof value === 'string' && /^[A-Z]{3}$/.test(value) && minorUnits(value) !== undefined;
/** An amount in minor units: an integer 1 to 10^12. */
const isAmount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 10 ** 12;
/** A percentage: a number above 0, at most 100, written with at most two decimals (the shortest form of the number read). */
const isPercent = (value: unknown): value is number => {
  if (typeof value !== 'number' || !(value > 0 && value <= 100)) return false;
  const text = String(value);
  return !/e/i.test(text) && (text.split('.')[1] ?? '').length <= 2;
};

/** The keys each type of discount uses; any other is refused. */
const DISCOUNT_KEYS: Readonly<Record<string, readonly string[]>> = {
  none: ['type'],
  percent: ['type', 'percent_off', 'max_amount_off', 'currency'],
  amount: ['type', 'amount_off', 'currency'],
};

function judgeDiscount(value: unknown, problems: Problems) {
  if (!isObject(value)) return void problems.must.add('discount');
  const keys = Object.keys(value);
  const used = typeof value.type === 'string' && Object.hasOwn(DISCOUNT_KEYS, value.type) ? DISCOUNT_KEYS[value.type] : undefined;
  if (used === undefined) {
    // No type, or one the contract does not know: the type is wrong; what the other keys are is undefined.
    problems.must.add('discount.type');
    for (const key of keys) if (key !== 'type') problems.may.add(`discount.${key}`);
    return;
  }
  for (const key of keys) if (!used.includes(key)) (isOddKey(key) ? problems.may : problems.must).add(`discount.${key}`);
  const has = (key: string) => Object.hasOwn(value, key);
  if (value.type === 'percent') {
    if (!isPercent(value.percent_off)) problems.must.add('discount.percent_off');
    // A cap and its currency come together, or neither.
    if (has('max_amount_off') && !isAmount(value.max_amount_off)) problems.must.add('discount.max_amount_off');
    if (has('currency') && !isCurrency(value.currency)) problems.must.add('discount.currency');
    if (has('max_amount_off') && !has('currency')) problems.must.add('discount.currency');
    if (has('currency') && !has('max_amount_off')) problems.must.add('discount.max_amount_off');
  } else if (value.type === 'amount') {
    if (!isAmount(value.amount_off)) problems.must.add('discount.amount_off');
    if (!isCurrency(value.currency)) problems.must.add('discount.currency');
  }
}

function judgeMoney(value: unknown, problems: Problems) {
  if (value === null) return;
  if (!isObject(value)) return void problems.must.add('minimum_basket');
  for (const key of Object.keys(value)) if (key !== 'amount' && key !== 'currency') (isOddKey(key) ? problems.may : problems.must).add(`minimum_basket.${key}`);
  if (!isAmount(value.amount)) problems.must.add('minimum_basket.amount');
  if (!isCurrency(value.currency)) problems.must.add('minimum_basket.currency');
}

const MIN_MOMENT = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MOMENT = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * The moment (UTC milliseconds, decimals past the millisecond dropped) of an RFC 3339 date-time
 * with an offset that names a real day and time of day (hours 00-23, minutes 00-59, seconds
 * 00-59: a leap second has no UTC-with-milliseconds form) and lies in the years 0000–9999 in UTC;
 * undefined for anything else.
 */
export function momentOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (days === undefined || day < 1 || day > days || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const [offsetHours, offsetMinutes] = [Number(match[9] ?? 0), Number(match[10] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const moment = daysFromCivil(year, month, day) * 86_400_000 + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis - offset;
  return moment >= MIN_MOMENT && moment <= MAX_MOMENT ? moment : undefined;
}

function judgeSites(value: unknown, problems: Problems) {
  if (value === null) return;
  const ok =
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= 100 &&
    value.every((site) => typeof site === 'string' && codePoints(site) >= 1 && codePoints(site) <= 128) &&
    new Set(value).size === value.length;
  if (!ok) problems.must.add('site_ids');
}

/**
 * Each term the resource sends, on its own; then the rules between terms (the minimum basket's
 * currency that of the discount; valid_from before valid_until), on `base` with the terms sent
 * over it, where every term involved is valid (one that is not is not compared: either way).
 */
function judgeTerms(resource: Record<string, unknown>, base: Terms, problems: Problems) {
  const has = (key: TermField) => Object.hasOwn(resource, key);
  if (has('discount')) judgeDiscount(resource.discount, problems);
  if (has('minimum_basket')) judgeMoney(resource.minimum_basket, problems);
  for (const key of ['valid_from', 'valid_until'] as const)
    if (has(key) && resource[key] !== null && momentOf(resource[key]) === undefined) problems.must.add(key);
  if (has('site_ids')) judgeSites(resource.site_ids, problems);
  const broken = (key: TermField) => [...problems.must, ...problems.may].some((field) => field === key || field.startsWith(`${key}.`));
  const merged = { ...base, ...Object.fromEntries(TERM_FIELDS.filter(has).map((key) => [key, resource[key]])) };
  for (const field of crossProblems(merged, broken)) problems.must.add(field);
}

/**
 * The rules between terms, on terms each valid on its own: `broken` says which are not (a broken
 * term is compared with nothing). Names the fields PRODUCT.md names: `minimum_basket.currency`,
 * `valid_until`.
 */
function crossProblems(terms: Terms, broken: (key: TermField) => boolean = () => false): string[] {
  const fields: string[] = [];
  const basket = terms.minimum_basket as { currency?: unknown } | null;
  if (!broken('discount') && !broken('minimum_basket') && basket !== null) {
    const own = (terms.discount as { currency?: unknown }).currency;
    if (own !== undefined && own !== basket.currency) fields.push('minimum_basket.currency');
  }
  const [from, until] = [momentOf(terms.valid_from), momentOf(terms.valid_until)];
  if (!broken('valid_from') && !broken('valid_until') && from !== undefined && until !== undefined && from >= until) fields.push('valid_until');
  return fields;
}

/** The terms a resource sends as every read must show them: date-times in UTC with milliseconds, a discount's and a basket's keys as sent. */
function termsAsRead(resource: Record<string, unknown>): Partial<Terms> {
  const read: Partial<Terms> = {};
  for (const key of TERM_FIELDS) {
    if (!Object.hasOwn(resource, key)) continue;
    const value = resource[key];
    read[key] = (key === 'valid_from' || key === 'valid_until') && typeof value === 'string' ? new Date(momentOf(value)!).toISOString() : value;
  }
  return read;
}

// ---------------------------------------------------------------- promotion limits

export const LIMIT_FIELDS = ['max_redemptions_per_code', 'max_redemptions', 'max_redemptions_per_customer'] as const;
const DEFAULT_LIMITS = { max_redemptions_per_code: 1, max_redemptions: null, max_redemptions_per_customer: null };
/** Each limit's greatest value; every one is at least 1, and all but max_redemptions_per_code may be null. */
const LIMIT_MAXIMA: Readonly<Record<(typeof LIMIT_FIELDS)[number], number>> = {
  max_redemptions_per_code: 1_000_000,
  max_redemptions: 100_000_000,
  max_redemptions_per_customer: 1000,
};

/** Each limit the resource sends, on its own (PRODUCT.md "Counting": no rule between limits). */
function judgeLimits(resource: Record<string, unknown>, problems: Problems) {
  for (const key of LIMIT_FIELDS) {
    if (!Object.hasOwn(resource, key)) continue;
    const value = resource[key];
    if (value === null && key !== 'max_redemptions_per_code') continue;
    if (!(isInteger(value) && value >= 1 && value <= LIMIT_MAXIMA[key])) problems.must.add(key);
  }
}

/** Decodes a path segment as the gateway does; a malformed escape stays as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

type CodegenRoute =
  | 'getCodeGenerator'
  | 'updateCodeGenerator'
  | 'issueCodes'
  | 'listCodes'
  | 'getCode'
  | 'listCodeRedemptions'
  | 'createIssuanceJob'
  | 'createExport';

export type CodegenTarget =
  | { kind: 'no-route' } // the gateway's 404
  | { kind: 'bad-id' } // 400
  | { kind: 'ok'; route: CodegenRoute; id: number; code?: string };

/** Which operation a request reaches under /v1.0/codegen/{id}…, and with which id and code. */
export function codegenTarget(method: string, path: string): CodegenTarget {
  const { pathname } = new URL(path, 'http://localhost');
  const segments = pathname.split('/').slice(1);
  if (segments[0] !== 'v1.0' || segments[1] !== 'codegen' || segments.length < 3) return { kind: 'no-route' };
  const rest = segments.slice(2);
  if (rest.some((segment) => segment === '')) return { kind: 'no-route' };
  let route: CodegenRoute | undefined;
  if (rest.length === 1 && method === 'GET') route = 'getCodeGenerator';
  else if (rest.length === 1 && method === 'PATCH') route = 'updateCodeGenerator';
  else if (rest.length === 2 && rest[1] === 'codes' && method === 'POST') route = 'issueCodes';
  else if (rest.length === 2 && rest[1] === 'codes' && method === 'GET') route = 'listCodes';
  else if (rest.length === 2 && rest[1] === 'issuance_jobs' && method === 'POST') route = 'createIssuanceJob';
  else if (rest.length === 2 && rest[1] === 'exports' && method === 'POST') route = 'createExport';
  else if (rest.length === 3 && rest[1] === 'codes' && method === 'GET') route = 'getCode';
  else if (rest.length === 4 && rest[1] === 'codes' && rest[3] === 'redemptions' && method === 'GET') route = 'listCodeRedemptions';
  if (!route) return { kind: 'no-route' };
  const id = positiveInteger(decodeSegment(rest[0]!));
  if (id === undefined) return { kind: 'bad-id' };
  return route === 'getCode' || route === 'listCodeRedemptions' ? { kind: 'ok', route, id, code: decodeSegment(rest[2]!) } : { kind: 'ok', route, id };
}

/**
 * The issued code a typed code names: "letters in any case, as a cashier may type them". Only
 * ASCII letters fold (a code's characters are A-Z, 0-9 and -); anything else names no code.
 */
export function codeAsIssued(typed: string, issued: ReadonlySet<string>): string | undefined {
  if (!/^[\x21-\x7e]+$/.test(typed)) return undefined;
  const upper = typed.replace(/[a-z]/g, (c) => c.toUpperCase());
  return issued.has(upper) ? upper : undefined;
}

/**
 * PATCH /v1.0/codegen/{id}: `{"code_generator":{…}}` with `status`, `description`, the
 * terms and the limits; any other key (the seed's fields that cannot change, the read-only ones, unknown ones)
 * answers 422 naming it. The terms sent are judged on their own and with one another here, before
 * the generator is read; `judgePatchWith` then judges them together with the stored ones.
 */
export function judgePatch(bytes: Buffer, contentType: string | undefined): BodyVerdict | Extract<FieldsVerdict, { kind: 'invalid' }> {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed) || !Object.hasOwn(parsed, 'code_generator') || !isObject(parsed.code_generator)) return { kind: 'malformed' };
  const resource = parsed.code_generator;
  const problems = newProblems();
  for (const key of Object.keys(resource)) {
    const value = resource[key];
    if (key === 'status') {
      if (value !== 'active' && value !== 'inactive') problems.must.add(key);
    } else if (key === 'description') {
      if (typeof value !== 'string' || codePoints(value) > 255) problems.must.add(key);
    } else if (!(TERM_FIELDS as readonly string[]).includes(key) && !(LIMIT_FIELDS as readonly string[]).includes(key)) {
      (GENERATOR_FIELDS.includes(key) || READ_ONLY.includes(key) || !isOddKey(key) ? problems.must : problems.may).add(key);
    }
  }
  judgeTerms(resource, DEFAULT_TERMS, problems);
  judgeLimits(resource, problems);
  if (problems.must.size > 0 || problems.may.size > 0) return invalid(problems) as Extract<FieldsVerdict, { kind: 'invalid' }>;
  return { kind: 'valid', value: resource };
}

/**
 * A PATCH whose body passed `judgePatch`, against the generator as stored (as a read shows it):
 * the fields a 422 names when the terms, the stored ones with the sent ones over them, break a
 * rule between terms (PRODUCT.md: "a PATCH is judged together with the stored terms"); else the
 * generator as every read must show it after the 200, and whether anything changed (a moment in
 * another offset, an object's keys in another order change nothing; a list of sites in another
 * order does).
 */
export function judgePatchWith(
  stored: Record<string, unknown>,
  patch: Record<string, unknown>,
): { kind: 'invalid'; fields: Set<string> } | { kind: 'valid'; value: Record<string, unknown>; changed: boolean } {
  const merged: Record<string, unknown> = { ...stored, ...patch, ...termsAsRead(patch) };
  const fields = crossProblems(merged as unknown as Terms);
  if (fields.length > 0) return { kind: 'invalid', fields: new Set(fields.map((field) => `code_generator.${field}`)) };
  const changed = ['status', 'description', ...TERM_FIELDS, ...LIMIT_FIELDS].some((key) => canonicalJson(merged[key]) !== canonicalJson(stored[key]));
  return { kind: 'valid', value: merged, changed };
}

/**
 * `{"count":n}`, n an integer 1–`max`, nothing else: POST /v1.0/codegen/{id}/codes (1,000) and
 * POST /v1.0/codegen/{id}/issuance_jobs (1,000,000).
 */
export function judgeIssue(bytes: Buffer, contentType: string | undefined, max = 1000): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  return judgeMembers(read.parsed, { count: (count) => typeof count === 'number' && Number.isInteger(count) && count >= 1 && count <= max });
}

/**
 * POST /v1.0/codegen/{id}/exports: `{}`, `{"redeemed":true}` or `{"redeemed":false}`, and no body
 * is the same as `{}` (PRODUCT.md, "Bulk"). No body is zero bytes. Where the contract is silent
 * the verdict is `either` (the success, or `otherwise`): a body of JSON's own white space only
 * (space, tab, CR, LF), and no body under a non-JSON Content-Type. Any other character makes it a
 * body, which must then be JSON: a byte-order mark or a no-break space alone is a 400.
 */
export function judgeExport(
  bytes: Buffer,
  contentType: string | undefined,
): BodyVerdict | { kind: 'either'; value: Record<string, unknown>; otherwise: BodyVerdict } {
  const read = envelope(bytes, contentType);
  if (!('verdict' in read)) return judgeMembers(read.parsed, { redeemed: (redeemed) => redeemed === undefined || typeof redeemed === 'boolean' });
  if (bytes.length === 0 && read.verdict.kind === 'malformed') return { kind: 'valid', value: {} };
  if (read.verdict.kind !== 'too-large' && /^[ \t\r\n]*$/.test(bytes.toString('latin1'))) return { kind: 'either', value: {}, otherwise: read.verdict };
  return read.verdict;
}

/** A JSON object of optional members, each judged by its rule: 422 naming the wrong and unknown ones. */
function judgeMembers(parsed: unknown, rules: Record<string, (value: unknown) => boolean>): BodyVerdict {
  if (!isObject(parsed)) return { kind: 'malformed' };
  const wrong = new Set<string>();
  for (const key of Object.keys(parsed)) if (!Object.hasOwn(rules, key)) wrong.add(key);
  for (const [key, rule] of Object.entries(rules)) if (!rule(parsed[key])) wrong.add(key);
  return wrong.size > 0 ? { kind: 'invalid', fields: wrong } : { kind: 'valid', value: parsed };
}

/** The characters a generator's generated part is made of. */
export const ALPHABETS = { tillgate: '23456789ABCDEFGHJKLMNPQRSTUVWXYZ', numeric: '0123456789' } as const;

/** A code as the generator must have made it: its prefix, then code_length characters of its alphabet. */
export function isCodeOf(code: string, generator: { prefix: string; code_length: number; generation_type: keyof typeof ALPHABETS }): boolean {
  if (!code.startsWith(generator.prefix)) return false;
  const generated = code.slice(generator.prefix.length);
  return generated.length === generator.code_length && [...generated].every((c) => ALPHABETS[generator.generation_type].includes(c));
}
