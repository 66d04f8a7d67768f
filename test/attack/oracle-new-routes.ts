/**
 * What PRODUCT.md ("Beyond the seed") says the answers of the new routes must be, written from
 * the contract and independently of the service's schemas and validators, so that the fuzz tests
 * of fuzz-new-routes.test.ts compare two readings of the contract, not one with itself.
 */
export const MAX_BODY_BYTES = 16 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const codePoints = (text: string) => [...text].length;

/** A positive integer written plainly: ASCII digits, no sign, no leading zero, within 2^53 − 1. */
function positiveInteger(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text) || text.startsWith('0')) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** `limit`: an integer 1–1000, written plainly. */
function pageLimit(text: string): number | undefined {
  const value = positiveInteger(text);
  return value !== undefined && value <= 1000 ? value : undefined;
}

/** Decodes a path segment as the gateway does; a malformed escape stays as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

type CodegenRoute = 'getCodeGenerator' | 'updateCodeGenerator' | 'issueCodes' | 'listCodes' | 'getCode';

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
  else if (rest.length === 3 && rest[1] === 'codes' && method === 'GET') route = 'getCode';
  if (!route) return { kind: 'no-route' };
  const id = positiveInteger(decodeSegment(rest[0]!));
  if (id === undefined) return { kind: 'bad-id' };
  return route === 'getCode' ? { kind: 'ok', route, id, code: decodeSegment(rest[2]!) } : { kind: 'ok', route, id };
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

// ---------------------------------------------------------------- query strings

export type QueryVerdict =
  /** 400 naming one of `fields` (all of `must` are wrong; `may` are wrong or not). */
  | { kind: 'bad'; fields: Set<string> }
  /** Only `may` parameters (tampered cursors) are in doubt: a 400 naming them, or a safe page. */
  | { kind: 'either'; fields: Set<string>; limit: number; storeId?: number }
  | { kind: 'ok'; limit: number; storeId?: number; cursor?: string };

/**
 * Judges a query string of a list route. `cursorKind` says what the test knows of the cursor it
 * sent: `own` (a real cursor of the caller for exactly these filters), `foreign` (another
 * account's, or other filters', real or re-encoded), `tampered` (the server may or may not tell).
 */
export function judgeListQuery(
  search: string,
  allowed: readonly string[],
  cursorKind: (cursor: string, storeId: number | undefined) => 'own' | 'foreign' | 'tampered',
): QueryVerdict {
  const pairs = [...new URLSearchParams(search)];
  const counts = new Map<string, number>();
  for (const [name] of pairs) counts.set(name, (counts.get(name) ?? 0) + 1);
  const must = new Set<string>();
  const may = new Set<string>();
  const values = new Map(pairs);
  for (const [name, count] of counts) if (count > 1 || !allowed.includes(name)) must.add(name);

  const limitText = values.get('limit');
  const limit = limitText === undefined ? 100 : pageLimit(limitText);
  if (limit === undefined && !must.has('limit')) must.add('limit');
  const storeText = allowed.includes('store_id') ? values.get('store_id') : undefined;
  const storeId = storeText === undefined ? undefined : positiveInteger(storeText);
  if (storeText !== undefined && storeId === undefined) must.add('store_id');
  const cursor = values.get('cursor');
  if (cursor !== undefined && !must.has('cursor')) {
    const kind = cursorKind(cursor, storeId);
    if (kind === 'foreign') must.add('cursor');
    if (kind === 'tampered') may.add('cursor');
  }
  if (must.size > 0) return { kind: 'bad', fields: new Set([...must, ...may]) };
  if (may.size > 0) return { kind: 'either', fields: may, limit: limit!, storeId };
  return { kind: 'ok', limit: limit!, storeId, cursor };
}

// ---------------------------------------------------------------- bodies

export type BodyVerdict =
  | { kind: 'too-large' } // 413
  | { kind: 'media-type' } // 415
  | { kind: 'malformed' } // 400
  | { kind: 'invalid'; fields: Set<string> } // 422 naming these fields
  | { kind: 'valid'; value: Record<string, unknown> };

/** `application/json` or `application/…+json`, with no charset or a UTF-8 one; absent reads as JSON. */
function jsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const [type = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (!(type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type))) return false;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0) continue;
    const name = parameter.slice(0, at).trim();
    const charset = parameter.slice(at + 1).trim().replace(/^"(.*)"$/, '$1');
    if (name === 'charset' && charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/** Size, content type, UTF-8 and JSON, in the contract's order; the parsed JSON when all pass. */
function envelope(bytes: Buffer, contentType: string | undefined): { verdict: BodyVerdict } | { parsed: unknown } {
  if (bytes.length > MAX_BODY_BYTES) return { verdict: { kind: 'too-large' } };
  if (!jsonMediaType(contentType?.trim())) return { verdict: { kind: 'media-type' } };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { verdict: { kind: 'malformed' } };
  }
  try {
    return { parsed: JSON.parse(text) };
  } catch {
    return { verdict: { kind: 'malformed' } };
  }
}

/** PATCH /v1.0/codegen/{id}: `{"code_generator":{…}}`, only `status` and `description`. */
export function judgePatch(bytes: Buffer, contentType: string | undefined): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed) || !Object.hasOwn(parsed, 'code_generator') || !isObject(parsed.code_generator)) return { kind: 'malformed' };
  const resource = parsed.code_generator;
  const wrong = new Set<string>();
  for (const key of Object.keys(resource)) {
    const value = resource[key];
    if (key === 'status') {
      if (value !== 'active' && value !== 'inactive') wrong.add(`code_generator.${key}`);
    } else if (key === 'description') {
      if (typeof value !== 'string' || codePoints(value) > 255) wrong.add(`code_generator.${key}`);
    } else wrong.add(`code_generator.${key}`);
  }
  return wrong.size > 0 ? { kind: 'invalid', fields: wrong } : { kind: 'valid', value: resource };
}

/** POST /v1.0/codegen/{id}/codes: `{"count":n}`, n an integer 1–1000, nothing else. */
export function judgeIssue(bytes: Buffer, contentType: string | undefined): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed)) return { kind: 'malformed' };
  const wrong = new Set<string>();
  for (const key of Object.keys(parsed)) if (key !== 'count') wrong.add(key);
  const count = parsed.count;
  if (!(typeof count === 'number' && Number.isInteger(count) && count >= 1 && count <= 1000)) wrong.add('count');
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

// ---------------------------------------------------------------- redemption at the till

const VOID_FIELDS = ['occurred_at', 'business_date', 'register_id', 'operator_id', 'till_id', 'table_id', 'posagent_version', 'pos_vendor', 'pos_version', 'receipt_id'];

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
    else if (key === 'occurred_at' && !/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$/.test(value)) wrong.add(`transaction.${key}`);
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

export type RedemptionVerdict =
  | { kind: 'success'; codes: string[]; fresh: string[] }
  | { kind: 'refused'; status: 409 | 422; messageIds: string[] };

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
    if (holder !== undefined) ids.push('code_already_redeemed');
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
