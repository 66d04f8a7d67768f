import { codePoints, envelope, isObject, parseRoot, type BodyVerdict, type ResourceVerdict } from '../http/oracle.ts';

/**
 * What PRODUCT.md says the answers of the till's routes must be (a void, a redemption, a check),
 * written from the contract and independently of the service's validators, so that
 * redemption/fuzz.test.ts compares two readings of the contract, not one with itself; a model of
 * who holds which code (TillModel) judges a valid redemption.
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

export interface RedemptionBody {
  site_id: string;
  pos_transaction_id: string;
  codes: string[];
}

/**
 * POST /v2.0/redeemed_codes and /v2.0/validated_codes: `{"transaction":{…}}` read as a void is
 * (unknown keys ignored, null absent), `site_id` and `pos_transaction_id` strings of 1–128
 * characters, the other void fields strings of at most 128, and `codes` an array of 1–10
 * strings of 1–64 characters. Invalid fields all answer 422 (pos errors name no field).
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
  if (wrong.size > 0) return { kind: 'invalid', fields: wrong };
  return { kind: 'valid', value: { site_id: resource.site_id, pos_transaction_id: resource.pos_transaction_id, codes } };
}

/** What a till's shop holds, as the fuzzer has made it: codes, who holds them, voided transactions. */
export interface TillModel {
  /** The caller's issued codes (as issued) and their generator. */
  readonly codes: ReadonlyMap<string, { generatorId: number; active: boolean }>;
  /** Code → the transaction (site/pos JSON) holding it. */
  readonly holders: Map<string, string>;
  /** Transaction (site/pos JSON) → the codes it holds. */
  readonly held: Map<string, string[]>;
  readonly voided: ReadonlySet<string>;
}

export type RedemptionVerdict = { kind: 'success'; codes: string[]; fresh: string[] } | { kind: 'refused'; status: 409 | 422; messageIds: string[] };

/**
 * The answer PRODUCT.md gives a valid redemption (or check) in a known state: each distinct code
 * (ASCII letters folded, listed twice counts once) in order; 422 if any is not the account's,
 * else 409 if any fails or the transaction was voided or would hold more than 50 codes.
 */
export function judgeTill(body: RedemptionBody, model: TillModel): RedemptionVerdict {
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
  const ids: string[] = [];
  const fresh: string[] = [];
  // The 50-code bound counts every code the request would add, whatever its generator's status.
  let adding = 0;
  let notFound = false;
  for (const code of distinct) {
    if (code.issued === undefined) {
      ids.push('code_not_found');
      notFound = true;
      continue;
    }
    const holder = model.holders.get(code.issued);
    if (holder === me) continue;
    // An inactive generator is named before a code held by another transaction (PRODUCT.md's order).
    if (holder !== undefined) ids.push(model.codes.get(code.issued)!.active ? 'code_already_redeemed' : 'code_generator_inactive');
    else {
      if (model.codes.get(code.issued)!.active) fresh.push(code.issued);
      else ids.push('code_generator_inactive');
      adding++;
    }
  }
  const voided = model.voided.has(me);
  const tooMany = (model.held.get(me)?.length ?? 0) + adding > 50;
  if (voided) ids.unshift('transaction_voided');
  if (tooMany) ids.push('too_many_codes');
  if (ids.length > 0) return { kind: 'refused', status: notFound ? 422 : 409, messageIds: ids };
  return { kind: 'success', codes: distinct.map((code) => code.issued!), fresh };
}
