import fc from 'fast-check';
import { expect } from 'vitest';
import type { HostId } from '../../../functions/routes.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { openCursor, sealCursor } from '../../support/cursors.ts';
import { call } from '../../support/http.ts';
import { checkAgainstOpenApi } from '../../support/openapi.ts';
import { codeGeneratorsOf, eventsOf } from '../../support/records.ts';
import { MAX_BODY_BYTES, judgeListQuery, type BodyVerdict, type QueryVerdict } from '../http/oracle.ts';
import { expectClientError, expectStandardHeaders, sendTo, type RawResponse } from '../support.ts';

/**
 * The shop the fuzzers of codes/, redemption/ and events/ attack: two accounts with code
 * generators (stores 1 and 2, one inactive), issued codes and real list cursors (openShop), and
 * the arbitraries that need them: tokens of the two accounts, the lists' query strings and
 * cursors, the path ids and codes under /v1.0/codegen/{id}, and request bodies as bytes
 * (hostile members, odd keys, deep nesting, sizes around 16 KiB, bytes that are not UTF-8).
 * Every answer is also checked against the OpenAPI document (expectDocumented).
 */
export type Account = Awaited<ReturnType<typeof newAccount>>;
interface Generator {
  id: number;
  account_id: number;
  store_id: number;
  status: string;
  prefix: string;
  code_length: number;
  generation_type: 'tillgate' | 'numeric';
  description: string;
  updated_at: string;
}

let api: LocalApi;
export let owner: Account;
export let stranger: Account;
/** Generators by account, in creation order. */
export const generators = new Map<number, Generator[]>();
/** Issued codes by generator id. */
export const issued = new Map<number, Set<string>>();
/** Real cursors: the text, whose it is, the filter it was made under, and the index its page starts at. */
interface RealCursor {
  route: 'events' | 'codegen';
  account: number;
  storeId?: number;
  start: number;
  text: string;
}
const cursors: RealCursor[] = [];

export const core: HostId = 'core';

/** Every answer: OpenAPI-documented status, headers and body, as `call()` checks. */
export function expectDocumented(method: string, sent: string, response: RawResponse) {
  // The client sends the path as a URL does (dot segments resolved, no fragment): judge that path.
  const { pathname, search } = new URL(sent, 'http://localhost');
  const path = pathname + search;
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  checkAgainstOpenApi(core, method, path, { status: response.status, headers, text: response.text });
}

export async function createGenerator(account: Account, body: Record<string, unknown>): Promise<Generator> {
  const response = await call(api, core, 'POST', '/v1.0/codegen', { token: account.token, body: { code_generator: body } });
  expect(response.status, response.text).toBe(201);
  const generator = response.json.code_generator as Generator;
  generators.set(account.accountId, [...(generators.get(account.accountId) ?? []), generator]);
  return generator;
}

async function issue(account: Account, generator: Generator, count: number) {
  const response = await call(api, core, 'POST', `/v1.0/codegen/${generator.id}/codes`, { token: account.token, body: { count } });
  expect(response.status, response.text).toBe(201);
  const set = issued.get(generator.id) ?? new Set<string>();
  for (const code of response.json.codes as string[]) set.add(code);
  issued.set(generator.id, set);
}

/** Pages through a list with a small limit and keeps every cursor it is given. */
async function collectCursors(route: 'events' | 'codegen', account: Account, storeId?: number) {
  const base = route === 'events' ? '/v1.0/events' : '/v1.0/codegen';
  const filter = storeId === undefined ? '' : `&store_id=${storeId}`;
  let cursor: string | null = null;
  let start = 0;
  for (const limit of [1, 2, 1, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]) {
    const path: string = `${base}?limit=${limit}${filter}${cursor ? `&cursor=${cursor}` : ''}`;
    const response = await call(api, core, 'GET', path, { token: account.token });
    expect(response.status, response.text).toBe(200);
    start += (response.json[route === 'events' ? 'events' : 'code_generators'] as unknown[]).length;
    cursor = response.json.next_cursor;
    if (!cursor) return;
    cursors.push({ route, account: account.accountId, storeId, start, text: cursor });
  }
}

/** The owner: stores 1 and 2, one inactive generator, a small numeric one; the stranger: store 1. Codes issued, cursors collected. */
export async function openShop(localApi: LocalApi): Promise<void> {
  api = localApi;
  [owner, stranger] = await Promise.all([newAccount(), newAccount()]);
  // The owner: stores 1 and 2, one inactive generator, a small numeric one; the stranger: store 1.
  for (let i = 0; i < 5; i++) await createGenerator(owner, { generation_type: 'tillgate', code_length: 8, prefix: 'FZ-', store_id: 1 });
  for (let i = 0; i < 3; i++) await createGenerator(owner, { generation_type: 'numeric', code_length: 4, store_id: 2, description: `n${i}` });
  await createGenerator(owner, { generation_type: 'tillgate', code_length: 6, store_id: 1, status: 'inactive' });
  for (let i = 0; i < 3; i++) await createGenerator(stranger, { generation_type: 'tillgate', code_length: 8, prefix: 'FZ-', store_id: 1 });
  await issue(owner, generators.get(owner.accountId)![0]!, 6);
  await issue(owner, generators.get(owner.accountId)![5]!, 4);
  await issue(stranger, generators.get(stranger.accountId)![0]!, 6);
  for (const account of [owner, stranger]) {
    await collectCursors('events', account);
    await collectCursors('codegen', account);
    await collectCursors('codegen', account, 1);
  }
  await collectCursors('codegen', owner, 2);
}

// ---------------------------------------------------------------- shared arbitraries

export type TokenChoice = 'owner' | 'stranger' | 'missing' | 'garbage' | 'two-different';
export const tokenChoice: fc.Arbitrary<TokenChoice> = fc.oneof(
  { arbitrary: fc.constant('owner' as const), weight: 14 },
  { arbitrary: fc.constantFrom<TokenChoice>('stranger', 'stranger', 'missing', 'garbage', 'two-different'), weight: 3 },
);
export function tokenHeaders(choice: TokenChoice): string[] {
  switch (choice) {
    case 'owner':
      return ['X-Auth-Token', owner.token];
    case 'stranger':
      return ['X-Auth-Token', stranger.token];
    case 'missing':
      return [];
    case 'garbage':
      return ['X-Auth-Token', `tg_${'A'.repeat(43)}`];
    case 'two-different':
      return ['X-Auth-Token', stranger.token, 'x-auth-token', owner.token];
  }
}
export const callerOf = (choice: TokenChoice): Account | undefined => (choice === 'owner' ? owner : choice === 'stranger' ? stranger : undefined);

export const requestId = fc.option(fc.oneof(fc.uuid(), fc.constantFrom('fuzz-1', '-bad', 'a'.repeat(129), 'x y')), { nil: undefined });
export function expectRequestId(sent: string | undefined, response: RawResponse) {
  if (sent !== undefined && /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(sent)) expect(response.headers['x-request-id']).toBe(sent);
  else if (sent !== undefined) expect(response.headers['x-request-id']).not.toBe(sent);
}

const hostileNumberText = fc.constantFrom(
  '0',
  '00',
  '01',
  '-1',
  '+1',
  '1.5',
  '1.0',
  '1e2',
  '1e3',
  '0x10',
  ' 5',
  '5 ',
  '',
  '١٢',
  '５',
  '𝟓',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '99999999999999999999999',
  '1'.repeat(300),
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '__proto__',
  '[]',
);

/** A query value as sent: plain, fully percent-encoded, or with `+` for spaces. */
function encodeValue(value: string, style: number): string {
  // Fully encoded, a 5,000-character cursor triples and, with a second one, the request line
  // passes the 16 KiB Node's HTTP server (and any gateway) allows: a 431 from the transport, not
  // an answer of the API. Long values are sent plainly encoded. (FUZZ_SEED=2090112009)
  if (style === 1 && value.length <= 1000) return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
  if (style === 2) return encodeURIComponent(value).replace(/%20/g, '+');
  return encodeURIComponent(value);
}

// ---------------------------------------------------------------- query strings

/** `arbitrary` with weight `present`, else null with weight `absent`. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: absent }, { arbitrary, weight: present });

interface QueryPart {
  name: string;
  value: string;
  /** 0 plain, 1 every byte percent-encoded, 2 spaces as +, 3 the name percent-encoded too */
  style: number;
}

function cursorArbitrary(route: 'events' | 'codegen'): fc.Arbitrary<string> {
  const real = cursors.filter((c) => c.route === route).map((c) => c.text);
  const any = cursors.map((c) => c.text);
  // A real cursor opened with the tests' cursor key, changed as an object, sealed again: a
  // well-sealed cursor of another account or filter, or of an odd position.
  const reencode = (text: string, change: (content: any) => unknown) => {
    const [a, f, after] = openCursor(text) as [number, string, number];
    const changed = change({ v: 1, a, f, after }) as any;
    return sealCursor(changed && typeof changed === 'object' && !Array.isArray(changed) && changed.v === 1 ? [changed.a, changed.f, changed.after] : changed);
  };
  // The old, plain form (base64url JSON): never a cursor now.
  const plain = (text: string) => {
    const [a, f, after] = openCursor(text) as [number, string, number];
    return Buffer.from(JSON.stringify({ v: 1, a, f, after })).toString('base64url');
  };
  const mine = real.filter((t) => cursors.find((c) => c.text === t)!.account === owner.accountId);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 8 },
    { arbitrary: fc.constantFrom(...any), weight: 2 },
    // flipped, dropped or added characters
    {
      arbitrary: fc.tuple(fc.constantFrom(...real), fc.nat(), fc.constantFrom('A', 'z', '0', '_', '-', '=', '+', '/', '.', '')).map(([t, at, c]) => {
        const i = at % t.length;
        return t.slice(0, i) + c + t.slice(i + 1);
      }),
      weight: 4,
    },
    // re-encoded JSON: another account, another filter, odd positions and versions
    {
      arbitrary: fc
        .tuple(
          fc.constantFrom(...mine),
          fc.constantFrom<(c: any) => unknown>(
            (c) => ({ ...c, a: stranger.accountId }),
            (c) => ({ ...c, a: String(c.a) }),
            (c) => ({ ...c, f: c.f === 'events' ? 'code_generators' : 'events' }),
            (c) => ({ ...c, f: `${c.f}?store_id=3` }),
            (c) => ({ ...c, f: 'code_generators?store_id=1' }),
            (c) => ({ ...c, after: 0 }),
            (c) => ({ ...c, after: -1 }),
            (c) => ({ ...c, after: 1.5 }),
            (c) => ({ ...c, after: String(c.after) }),
            (c) => ({ ...c, after: 2 ** 53 }),
            (c) => ({ ...c, after: null }),
            (c) => ({ ...c, v: 2 }),
            (c) => ({ ...c, extra: { __proto__: { polluted: true } } }),
            (c) => [c],
            () => null,
            () => 'cursor',
            (c) => ({ ...c, a: undefined }),
          ),
        )
        .map(([t, change]) => reencode(t, change)),
      weight: 4,
    },
    { arbitrary: fc.constantFrom(...mine).map(plain), weight: 1 },
    {
      arbitrary: fc.oneof(
        fc.constantFrom('', '!!!', '====', 'null', 'e30', 'W10', '%', '\u0000', 'é'.repeat(10), 'A'.repeat(512), 'A'.repeat(513), 'A'.repeat(5000)),
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.base64String({ maxLength: 200 }),
      ),
      weight: 3,
    },
  );
}

function queryArbitrary(route: 'events' | 'codegen'): fc.Arbitrary<string> {
  const limit = fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 1000 }).map(String), weight: 4 },
    { arbitrary: fc.constantFrom('1', '2', '3', '1000', '999'), weight: 3 },
    { arbitrary: hostileNumberText, weight: 3 },
    { arbitrary: fc.integer({ min: 1001, max: 2 ** 31 }).map(String), weight: 1 },
  );
  const storeId = fc.oneof({ arbitrary: fc.constantFrom('1', '2', '3', '999'), weight: 4 }, { arbitrary: hostileNumberText, weight: 2 });
  const unknownName = fc.oneof(
    fc.constantFrom(
      'limt',
      'offset',
      'LIMIT',
      'Limit',
      'Cursor',
      'page',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'limit ',
      'cursor[]',
      'store_id',
      'storeId',
      'a',
    ),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }),
  );
  const part = (name: fc.Arbitrary<string>, value: fc.Arbitrary<string>): fc.Arbitrary<QueryPart> =>
    fc.record({ name, value, style: fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.constantFrom(1, 2, 3), weight: 1 }) });
  const parts = fc.record({
    limit: sometimes(part(fc.constant('limit'), limit), 1, 1),
    storeId: sometimes(part(fc.constant('store_id'), storeId), route === 'codegen' ? 1 : 1, route === 'codegen' ? 1 : 12),
    cursor: sometimes(part(fc.constant('cursor'), cursorArbitrary(route)), 1, 1),
    unknown: sometimes(part(unknownName, fc.string({ maxLength: 10 })), 1, 8),
    repeat: sometimes(fc.constantFrom('limit', 'cursor', 'store_id'), 1, 10),
    order: fc.nat(),
  });
  return parts.map(({ limit, storeId, cursor, unknown, repeat, order }) => {
    const list = [limit, storeId, cursor, unknown].filter((p): p is QueryPart => p !== null);
    const again = repeat && list.find((p) => p.name === repeat);
    if (again) list.push({ ...again, style: 0 });
    if (list.length > 1) list.push(...list.splice(0, order % list.length));
    const text = list
      .map(({ name, value, style }) => `${style === 3 ? encodeValue(name, 1) : encodeURIComponent(name)}=${encodeValue(value, style)}`)
      .join('&');
    return text === '' ? '' : `?${text}`;
  });
}

/** What a cursor is, as far as the test knows: real and the caller's for these filters, foreign, or neither. */
const cursorKindFor =
  (route: 'events' | 'codegen', caller: Account) =>
  (text: string, storeId: number | undefined): 'own' | 'foreign' | 'tampered' => {
    const real = cursors.find((c) => c.text === text);
    if (real) return real.route === route && real.account === caller.accountId && real.storeId === storeId ? 'own' : 'foreign';
    const content = openCursor(text);
    // Sealed again under another account or filter: the server must tell.
    const filter = route === 'events' ? 'events' : storeId === undefined ? 'code_generators' : `code_generators?store_id=${storeId}`;
    if (Array.isArray(content) && content.length === 3 && (content[0] !== caller.accountId || content[1] !== filter)) return 'foreign';
    return 'tampered';
  };

/** The property of a list route: `numRuns` generated query strings, 400 naming the parameter or the right page. */
export async function listProperty(route: 'events' | 'codegen', numRuns: number) {
  const base = route === 'events' ? '/v1.0/events' : '/v1.0/codegen';
  const itemsKey = route === 'events' ? 'events' : 'code_generators';
  const allowed = route === 'events' ? ['limit', 'cursor'] : ['limit', 'cursor', 'store_id'];
  // Lists are read-only: the expected pages come from the tables, read once.
  const recordsOf = new Map<number, { id: number; store_id?: number }[]>();
  for (const account of [owner, stranger]) {
    const records = route === 'events' ? await eventsOf(account.accountId) : await codeGeneratorsOf(account.accountId);
    recordsOf.set(
      account.accountId,
      (records as { id: number; store_id?: number }[]).sort((a, b) => a.id - b.id),
    );
  }
  let pages = 0;
  let refused = 0;

  await fc.assert(
    fc.asyncProperty(tokenChoice, queryArbitrary(route), requestId, async (token, query, rid) => {
      const path = `${base}${query}`;
      const headers = [...tokenHeaders(token), ...(rid === undefined ? [] : ['X-Request-Id', rid])];
      const response = await sendTo(api, core, { method: 'GET', path, headers });
      const where = `GET ${path} (${token}) → ${response.status} ${response.text.slice(0, 300)}`;
      expectDocumented('GET', path, response);
      const caller = callerOf(token);
      if (!caller) {
        expect(response.status, where).toBe(401);
        expectClientError(core, response);
        return;
      }
      expectRequestId(rid, response);
      const verdict: QueryVerdict = judgeListQuery(query.slice(1), allowed, cursorKindFor(route, caller));
      if (verdict.kind === 'bad' || (verdict.kind === 'either' && response.status !== 200)) {
        expect(response.status, where).toBe(400);
        expectClientError(core, response);
        const fields = (response.json.errors as { field?: string }[]).map((e) => e.field);
        expect(fields.length, where).toBeGreaterThan(0);
        for (const field of fields) expect([...verdict.fields], where).toContain(field);
        refused += 1;
        return;
      }
      expect(response.status, where).toBe(200);
      expectStandardHeaders(response);
      pages += 1;
      const items = response.json[itemsKey] as { id: number; account_id?: number; store_id?: number }[];
      const all = recordsOf.get(caller.accountId)!.filter((r) => verdict.storeId === undefined || r.store_id === verdict.storeId);
      const ids = all.map((r) => r.id);
      const got = items.map((i) => i.id);
      if (route === 'codegen') for (const item of items) expect(item.account_id, where).toBe(caller.accountId);
      // A page is a run of the caller's records in ascending id order, full unless it is the last.
      const start = got.length === 0 ? ids.length : ids.indexOf(got[0]!);
      expect(start, where).toBeGreaterThanOrEqual(0);
      expect(got, where).toEqual(ids.slice(start, start + got.length));
      if (response.json.next_cursor === null) expect(start + got.length, where).toBe(ids.length);
      else {
        expect(got.length, where).toBe(verdict.limit);
        expect(start + got.length, where).toBeLessThan(ids.length);
      }
      if (verdict.kind === 'ok') {
        const real = verdict.cursor === undefined ? { start: 0 } : cursors.find((c) => c.text === verdict.cursor)!;
        expect(got, where).toEqual(ids.slice(real.start, real.start + verdict.limit));
      }
    }),
    { numRuns },
  );
  console.log(`fuzz ${base}: ${numRuns} runs, ${pages} pages, ${refused} refused with 400`);
}

// ---------------------------------------------------------------- path parameters

/** An id written as a path segment: the first digit percent-encoded (`%31…`), which names the same id. */
export const encodedId = (id: number) => `%3${String(id)[0]}${String(id).slice(1)}`;

/**
 * Path ids that name no record: any positive integer (past every id made), and, with weight 6 of
 * 7, ids that are not positive integers (signs, zeros, exponents, other digits, encoded slashes,
 * dot segments, any string, numbers past 2^53).
 */
export const strangeIds: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map(String), weight: 1 },
  {
    arbitrary: fc.oneof(
      hostileNumberText.map(encodeURIComponent),
      fc.constantFrom('%2F', '1%2F2', '%20', '%00', '%', '%zz', '%E0%A4%A', '%F0%9F%98%80', '..', '.', '%2e%2e', '1;x', '1?x=1', '1#f', '1%3F'),
    ),
    weight: 4,
  },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encodeURIComponent), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
);

export function idArbitrary(): fc.Arbitrary<string> {
  const own = generators.get(owner.accountId)!.map((g) => g.id);
  const theirs = generators.get(stranger.accountId)!.map((g) => g.id);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...own, ...theirs).map(String), weight: 8 },
    { arbitrary: fc.constantFrom(...own).map(encodedId), weight: 1 },
    { arbitrary: strangeIds, weight: 7 },
  );
}

export function codeArbitrary(): fc.Arbitrary<string> {
  const all = [...issued.values()].flatMap((set) => [...set]);
  const mixCase = (code: string, mask: number) => [...code].map((c, i) => ((mask >> i) & 1 ? c.toLowerCase() : c)).join('');
  return fc.oneof(
    { arbitrary: fc.tuple(fc.constantFrom(...all), fc.nat()).map(([code, mask]) => encodeURIComponent(mixCase(code, mask))), weight: 8 },
    { arbitrary: fc.constantFrom(...all).map((code) => code.replace('-', '%2D')), weight: 1 },
    { arbitrary: fc.stringMatching(/^FZ-[2-9A-HJ-NP-Z]{8}$/), weight: 2 },
    {
      arbitrary: fc
        .constantFrom(
          '..',
          '.',
          '%2e%2e',
          '%2F',
          'FZ-%2F..',
          '..%2F..%2Fevents',
          '%00',
          '%',
          'é',
          'ß',
          '%C3%9F',
          'ı',
          'FZ-ıııııııı',
          '%EF%BC%A6Z',
          'A'.repeat(48),
          'A'.repeat(49),
          'A'.repeat(2000),
          'A'.repeat(6000),
          '-',
          '--------',
          'null',
          '__proto__',
          'constructor',
          "FZ-'OR'1'='1",
          '*',
        )
        .map((c) => (/%/.test(c) ? c : encodeURIComponent(c))),
      weight: 4,
    },
    {
      arbitrary: fc.tuple(fc.constantFrom(...all), fc.constantFrom('%00', '%20', ' ', '\t', '%0A', 'é', '-', 'A')).map(([c, x]) => c + encodeURI(x)),
      weight: 2,
    },
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent), weight: 2 },
  );
}

// ---------------------------------------------------------------- bodies

export const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'json',
    ),
    weight: 4,
  },
);

/** Raw JSON text of a value meant to upset a validator. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'null',
    'true',
    'false',
    '[]',
    '{}',
    '""',
    '"1"',
    '1.0',
    '1.5',
    '-0',
    '0',
    '-1',
    '1e3',
    '1E400',
    '1000',
    '1001',
    '9007199254740993',
    '"active "',
    '"ACTIVE"',
    '"inactive"',
    '"active"',
    '"\\u0000"',
    '"\\ud800"',
    '{"__proto__":{"polluted":true}}',
    '["active"]',
  ),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 300 }).map((s) => JSON.stringify(s)),
  fc.integer({ min: -5, max: 1005 }).map(String),
);

const keyNames = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'toString',
    'id',
    'account_id',
    'created_at',
    'updated_at',
    'generation_type',
    'buffer_type',
    'code_length',
    'prefix',
    'store_id',
    'codes',
    'code_generator_id',
    'issued_at',
    'Status',
    '',
  ),
  fc.string({ unit: 'binary', maxLength: 16 }),
);

const withMember = (objectText: string, key: string, valueText: string) =>
  objectText === '{}' ? `{${JSON.stringify(key)}:${valueText}}` : `{${JSON.stringify(key)}:${valueText},${objectText.slice(1)}`;
const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}0${close.repeat(depth)}`;

/** Pads JSON object text to exactly `bytes` UTF-8 bytes with a string member (or trailing spaces). */
function padTo(objectText: string, bytes: number, unit: string, key: string): string {
  const size = (text: string) => Buffer.byteLength(text, 'utf8');
  if (unit === ' ') return objectText + ' '.repeat(Math.max(0, bytes - size(objectText)));
  const open = objectText === '{}' ? `{${JSON.stringify(key)}:"` : `${objectText.slice(0, -1)},${JSON.stringify(key)}:"`;
  const close = '"}';
  let room = bytes - size(open) - size(close);
  const padding = unit.repeat(Math.max(0, Math.floor(room / size(unit))));
  room -= size(padding);
  return open + padding + 'a'.repeat(Math.max(0, room)) + close;
}

/** Bytes that are not UTF-8, spliced into valid JSON text inside its first string, or anywhere. */
const notUtf8 = fc.constantFrom([0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]);
function spliceBytes(text: string, bytes: readonly number[], where: number): Buffer {
  const buffer = Buffer.from(text, 'utf8');
  const quote = buffer.indexOf(0x22, buffer.indexOf(0x3a)); // the first string value, if any
  const at = quote >= 0 && where % 2 === 0 ? quote + 1 : where % (buffer.length + 1);
  return Buffer.concat([buffer.subarray(0, at), Buffer.from(bytes), buffer.subarray(at)]);
}

/**
 * Bodies built from a valid object (wrapped under `root` when given): valid, one member hostile,
 * extra or read-only keys, wrong shapes, not JSON, deeply nested, around 16 KiB, not UTF-8.
 */
export function bodies(root: string | undefined, valid: fc.Arbitrary<Record<string, unknown>>, fields: string[]): fc.Arbitrary<Buffer> {
  const wrap = (resourceText: string) => (root ? `{${JSON.stringify(root)}:${resourceText}}` : resourceText);
  const set = (r: Record<string, unknown>, key: string, value: string) => {
    const rest = { ...r };
    delete rest[key];
    return withMember(JSON.stringify(rest), key, value);
  };
  const text = fc.oneof(
    { arbitrary: valid.map((r) => wrap(JSON.stringify(r))), weight: 8 },
    { arbitrary: fc.tuple(valid, fc.constantFrom(...fields), hostileValue).map(([r, k, v]) => wrap(set(r, k, v))), weight: 8 },
    { arbitrary: fc.tuple(valid, keyNames, hostileValue).map(([r, k, v]) => wrap(withMember(JSON.stringify(r), k, v))), weight: 5 },
    { arbitrary: fc.tuple(valid, keyNames, hostileValue).map(([r, k, v]) => withMember(wrap(JSON.stringify(r)), k === root ? `${k}_` : k, v)), weight: 2 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 2 },
    { arbitrary: hostileValue.map((v) => wrap(v)), weight: 2 },
    { arbitrary: valid.map((r) => JSON.stringify([root ? { [root]: r } : r])), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 100 }), weight: 1 },
    { arbitrary: valid.chain((r) => fc.integer({ min: 0, max: 30 }).map((cut) => wrap(JSON.stringify(r)).slice(0, cut))), weight: 1 },
    { arbitrary: fc.constantFrom('', ' ', 'null', '{', '{"count":1,}', "{'count':1}", '\ufeff{"count":1}', '{"count":1}{"count":2}'), weight: 1 },
    {
      arbitrary: fc
        .tuple(valid, fc.integer({ min: 100, max: 4000 }), fc.boolean(), fc.constantFrom('nested', ...fields))
        .map(([r, depth, arrays, key]) => wrap(set(r, key, arrays ? nested(depth, '[', ']') : nested(depth, '{"a":', '}')))),
      weight: 1,
    },
    { arbitrary: fc.integer({ min: 100, max: 6000 }).map((depth) => nested(depth, '[', ']')), weight: 1 },
    {
      arbitrary: fc
        .tuple(valid, fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'é', '😀', ' '), fc.constantFrom('description', 'padding'))
        .map(([r, delta, unit, key]) => padTo(wrap(JSON.stringify(r)), MAX_BODY_BYTES + delta, unit, key)),
      weight: 2,
    },
    {
      // the description itself near 16 KiB: over 255 characters, so a 422 when it fits
      arbitrary: fc.tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'é', '😀')).map(([delta, unit]) => {
        const inner = padTo('{}', MAX_BODY_BYTES + delta - (root ? Buffer.byteLength(wrap('{}')) - 2 : 0), unit, 'description');
        return wrap(inner);
      }),
      weight: 1,
    },
  );
  return fc.oneof(
    { arbitrary: text.map((t) => Buffer.from(t, 'utf8')), weight: 12 },
    { arbitrary: fc.tuple(valid, notUtf8, fc.nat()).map(([r, bytes, at]) => spliceBytes(wrap(JSON.stringify(r)), bytes, at)), weight: 1 },
  );
}

/** The expected status of a body route once the token passed: from the body, then existence, then state. */
export function bodyStatus(verdict: BodyVerdict, exists: boolean, stateConflict: number | undefined): number | 'success' {
  switch (verdict.kind) {
    case 'too-large':
      return 413;
    case 'media-type':
      return 415;
    case 'malformed':
      return 400;
    case 'invalid':
      return 422;
    case 'valid':
      if (!exists) return 404;
      return stateConflict ?? 'success';
  }
}

/** A code generator's fields as every read answers them, sorted: the seed's eleven, the promotion terms, its limits and times_redeemed. */
export const GENERATOR_FIELDS = [
  'account_id',
  'buffer_type',
  'code_length',
  'created_at',
  'description',
  'discount',
  'generation_type',
  'id',
  'max_redemptions',
  'max_redemptions_per_code',
  'max_redemptions_per_customer',
  'minimum_basket',
  'prefix',
  'site_ids',
  'status',
  'store_id',
  'times_redeemed',
  'updated_at',
  'valid_from',
  'valid_until',
];

export const eventsSummary = async (account: Account) => (await eventsOf(account.accountId)).map((e) => `${e.id}:${e.type}:${e.resource_id}`).sort();
