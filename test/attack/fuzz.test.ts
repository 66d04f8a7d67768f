import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents } from '../../functions/runtime/clients.ts';
import { tableName } from '../../functions/runtime/config.ts';
import { issueToken } from '../../functions/http/tokens.ts';
import type { HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import { newAccount } from '../support/accounts.ts';
import { call } from '../support/http.ts';
import { startTestApi } from '../support/local-api.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../support/records.ts';
import {
  MAX_BODY_BYTES,
  eventPathTarget,
  generatorFingerprint,
  isJsonContentType,
  judgeCodeGenerator,
  judgeVoid,
  trimOws,
} from './oracle.ts';
import { expectClientError, expectStandardHeaders, fuzzRuns, fuzzSeed, gatewayAnswer, sendTo, type RawResponse } from './support.ts';

/**
 * Property-based attacks on every route through the local HTTP server. Each property sends one
 * generated request, checks the answer against the contract (oracle.ts), and checks the tables:
 * a failed request writes nothing, a successful one writes exactly its record and one event.
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; scale with FUZZ_RUNS=<runs per route>.
 */
const seed = fuzzSeed();
const numRuns = fuzzRuns(400);
console.log(`fuzz: seed ${seed}, ${numRuns} runs per route (replay: FUZZ_SEED=${seed} npx vitest run test/attack/fuzz.test.ts)`);
fc.configureGlobal({ seed, numRuns, endOnFailure: false });

type Account = Awaited<ReturnType<typeof newAccount>>;
let api: LocalApi;
let owner: Account;
let stranger: Account;
let revokedToken: string;

beforeAll(async () => {
  api = await startTestApi();
  [owner, stranger] = await Promise.all([newAccount(), newAccount()]);
  const revoked = await issueToken(owner.accountId, 'revoked for fuzzing', 'all');
  await documents.send(
    new UpdateCommand({
      TableName: tableName('apiKeys'),
      Key: { token_hash: revoked.key.token_hash },
      UpdateExpression: 'SET revoked_at = :now',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    }),
  );
  revokedToken = revoked.token;
});
afterAll(() => api.close());

// ---------------------------------------------------------------- headers

/** How the request presents its token; `expected` says which account it authenticates, if any. */
type TokenChoice =
  | 'owner'
  | 'owner-lower-case-name'
  | 'owner-twice'
  | 'stranger'
  | 'missing'
  | 'empty'
  | 'garbage'
  | 'well-formed-unknown'
  | 'revoked'
  | 'two-different'
  | 'two-different-case';

const tokenChoice: fc.Arbitrary<TokenChoice> = fc.oneof(
  { arbitrary: fc.constant('owner' as const), weight: 12 },
  {
    arbitrary: fc.constantFrom<TokenChoice>(
      'owner-lower-case-name',
      'owner-twice',
      'stranger',
      'missing',
      'empty',
      'garbage',
      'well-formed-unknown',
      'revoked',
      'two-different',
      'two-different-case',
    ),
    weight: 5,
  },
);

/** Characters a header value may carry on the wire (Node refuses the rest). */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength });

function tokenHeaders(choice: TokenChoice, garbage: string): string[] {
  const unknown = `tg_${'A'.repeat(43)}`;
  switch (choice) {
    case 'owner':
      return ['X-Auth-Token', owner.token];
    case 'owner-lower-case-name':
      return ['x-auth-token', owner.token];
    case 'owner-twice':
      return ['X-Auth-Token', owner.token, 'X-Auth-Token', owner.token];
    case 'stranger':
      return ['X-Auth-Token', stranger.token];
    case 'missing':
      return [];
    case 'empty':
      return ['X-Auth-Token', ''];
    case 'garbage':
      return ['X-Auth-Token', garbage];
    case 'well-formed-unknown':
      return ['X-Auth-Token', unknown];
    case 'revoked':
      return ['X-Auth-Token', revokedToken];
    case 'two-different':
      return ['X-Auth-Token', stranger.token, 'X-Auth-Token', owner.token];
    case 'two-different-case':
      return ['X-Auth-Token', stranger.token, 'x-auth-token', owner.token];
  }
}

const authenticated = (choice: TokenChoice): Account | undefined =>
  ['owner', 'owner-lower-case-name', 'owner-twice'].includes(choice) ? owner : choice === 'stranger' ? stranger : undefined;

const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 10 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset="utf-8"',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset = utf-16',
      'application/json; charset = "utf-8"',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '',
      'json',
    ),
    weight: 4,
  },
  { arbitrary: headerText(40), weight: 1 },
);

const requestId = fc.oneof(
  fc.constant(undefined),
  fc.uuid(),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/),
  headerText(200),
  fc.constantFrom('', '-starts-with-dash', 'a'.repeat(128), 'a'.repeat(129), '../../etc/passwd', '<script>', 'id with spaces'),
);

interface HeaderChoice {
  token: TokenChoice;
  garbage: string;
  contentType: string | undefined;
  requestId: string | undefined;
  secondRequestId: boolean;
}

const headerChoice: fc.Arbitrary<HeaderChoice> = fc.record({
  token: tokenChoice,
  garbage: headerText(80),
  contentType,
  requestId,
  secondRequestId: fc.boolean(),
});

function rawHeaders(choice: HeaderChoice, extra: string[] = []): string[] {
  const headers = [...tokenHeaders(choice.token, choice.garbage), ...extra];
  if (choice.contentType !== undefined) headers.push('Content-Type', choice.contentType);
  if (choice.requestId !== undefined) {
    headers.push('X-Request-Id', choice.requestId);
    if (choice.secondRequestId) headers.push('X-Request-Id', 'second-request-id');
  }
  return headers;
}

/** The function (not the gateway) answered: the request id is the well-formed one sent, or new. */
function expectRequestIdHandled(choice: HeaderChoice, response: RawResponse) {
  if (choice.requestId === undefined || choice.secondRequestId) return;
  const sent = trimOws(choice.requestId);
  if (/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(sent)) expect(response.headers['x-request-id']).toBe(sent);
  else expect(response.headers['x-request-id']).not.toBe(sent);
}

// ---------------------------------------------------------------- body values

/** Raw JSON text of a value meant to upset a validator. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'null',
    'true',
    '[]',
    '{}',
    '""',
    '"8"',
    '8.0',
    '8.5',
    '-0',
    '0',
    '-1',
    '1e1',
    '1E400',
    '-1e400',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '123456789012345678901234567890',
    '0.1e1',
    '"tillgate "',
    '"TILLGATE"',
    '"\\u0000"',
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '"\\ud83d\\ude00"',
    '"A\\u0301"',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '["tillgate"]',
  ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 300 }).map((s) => JSON.stringify(s)),
  fc.integer().map(String),
  fc.double().filter(Number.isFinite).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
);

const keyNames = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'id', 'account_id', 'created_at', 'updated_at', ''),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

/** Inserts `"key": value` as the first member of the object at the start of `objectText`. */
const withMember = (objectText: string, key: string, valueText: string) =>
  objectText === '{}' ? `{${JSON.stringify(key)}:${valueText}}` : `{${JSON.stringify(key)}:${valueText},${objectText.slice(1)}`;

/** Replaces (or adds) one member of a flat object given as JSON text. */
function setMember(resource: Record<string, unknown>, key: string, valueText: string): string {
  const rest = { ...resource };
  delete rest[key];
  return withMember(JSON.stringify(rest), key, valueText);
}

const nested = (depth: number, open: string, close: string, inner = '0') => open.repeat(depth) + inner + close.repeat(depth);

/** Bodies for a resource under `root`, built from valid resources: valid, mutated, reshaped, broken. */
function bodies(root: string, valid: fc.Arbitrary<Record<string, unknown>>, fields: string[]): fc.Arbitrary<string> {
  const wrap = (resourceText: string) => `{${JSON.stringify(root)}:${resourceText}}`;
  return fc.oneof(
    { arbitrary: valid.map((r) => wrap(JSON.stringify(r))), weight: 6 },
    // one field given a hostile value, or dropped
    {
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...fields), hostileValue)
        .map(([r, key, value]) => wrap(setMember(r, key, value))),
      weight: 8,
    },
    { arbitrary: fc.tuple(valid, fc.constantFrom(...fields)).map(([r, key]) => wrap(JSON.stringify({ ...r, [key]: undefined }))), weight: 2 },
    // an extra, odd key inside the resource
    { arbitrary: fc.tuple(valid, keyNames, hostileValue).map(([r, key, value]) => wrap(withMember(JSON.stringify(r), key, value))), weight: 4 },
    // odd keys and values beside the resource, or a duplicated root key
    {
      arbitrary: fc
        .tuple(valid, keyNames, hostileValue)
        .map(([r, key, value]) => withMember(wrap(JSON.stringify(r)), key === root ? `${key}_` : key, value)),
      weight: 2,
    },
    { arbitrary: valid.map((r) => `{${JSON.stringify(root)}:{"x":1},${wrap(JSON.stringify(r)).slice(1)}`), weight: 1 },
    // wrong top-level shapes
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 3 },
    { arbitrary: hostileValue.map((v) => wrap(v)), weight: 2 },
    { arbitrary: valid.map((r) => JSON.stringify([{ [root]: r }])), weight: 1 },
    // not JSON at all
    { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 2 },
    { arbitrary: valid.chain((r) => fc.integer({ min: 0, max: 60 }).map((cut) => wrap(JSON.stringify(r)).slice(0, cut))), weight: 2 },
    { arbitrary: valid.map((r) => `\ufeff${wrap(JSON.stringify(r))}`), weight: 1 },
    { arbitrary: valid.map((r) => `${wrap(JSON.stringify(r))},`), weight: 1 },
    { arbitrary: fc.constantFrom('', ' ', '\n', 'null', 'NaN', '{', '{"a":1,}', "{'a':1}", '[1,2'), weight: 1 },
    // deep nesting, inside the resource and at the top
    {
      arbitrary: fc
        .tuple(valid, fc.integer({ min: 100, max: 5000 }), fc.boolean())
        .map(([r, depth, arrays]) => wrap(withMember(JSON.stringify(r), 'nested', arrays ? nested(depth, '[', ']') : nested(depth, '{"a":', '}')))),
      weight: 1,
    },
    { arbitrary: fc.integer({ min: 100, max: 8000 }).map((depth) => nested(depth, '[', ']')), weight: 1 },
    // sizes around the 16 KiB limit, padded with one-, two- and four-byte characters
    {
      arbitrary: fc
        .tuple(valid, fc.integer({ min: -4, max: 4 }), fc.constantFrom('a', 'é', '😀', ' '), fc.constantFrom(...fields))
        .map(([r, delta, unit, key]) => padTo(wrap(JSON.stringify(r)), MAX_BODY_BYTES + delta, unit, key === 'store_id' ? 'zz' : key)),
      weight: 2,
    },
    { arbitrary: fc.integer({ min: MAX_BODY_BYTES + 1, max: 200_000 }).map((n) => `{"${root}":"${'x'.repeat(n)}"}`), weight: 1 },
  );
}

/**
 * Pads a body to exactly `bytes` UTF-8 bytes: the padding sits in whitespace (when `unit` is a
 * space) or in a string member named `key`, so the JSON stays well-formed.
 */
function padTo(body: string, bytes: number, unit: string, key: string): string {
  const size = (text: string) => Buffer.byteLength(text, 'utf8');
  if (unit === ' ') return body + ' '.repeat(Math.max(0, bytes - size(body)));
  const open = `${body.slice(0, -2)},${JSON.stringify(key)}:"`;
  const close = `"${body.slice(-2)}`;
  let room = bytes - size(open) - size(close);
  let padding = '';
  const unitBytes = size(unit);
  padding = unit.repeat(Math.max(0, Math.floor(room / unitBytes)));
  room -= size(padding);
  padding += 'a'.repeat(Math.max(0, room));
  return open + padding + close;
}

// ---------------------------------------------------------------- table checks


// ---------------------------------------------------------------- the properties

const post = (host: HostId, path: string) => ({ host, path });

describe('fuzzing every route through the local server', { timeout: 180_000 }, () => {
  it(`POST /v1.0/codegen: ${numRuns} generated requests, 4xx or a correct 201, nothing written on failure`, async () => {
    const { host, path } = post('core', '/v1.0/codegen');
    const account = await newAccount();
    owner = account;
    /** First answers per account and Idempotency-Key. */
    const keys = new Map<string, { fingerprint: string; text: string }>();
    let generators = 0;
    const validGenerator = fc.record(
      {
        generation_type: fc.constantFrom('tillgate', 'numeric'),
        code_length: fc.integer({ min: 4, max: 32 }),
        store_id: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constant(Number.MAX_SAFE_INTEGER)),
        buffer_type: fc.constant('default'),
        description: fc.string({ unit: 'binary', maxLength: 255 }),
        prefix: fc.stringMatching(/^[A-Z0-9-]{0,16}$/),
        status: fc.constantFrom('active', 'inactive'),
      },
      { requiredKeys: ['generation_type', 'code_length', 'store_id'] },
    );
    const fields = ['generation_type', 'code_length', 'store_id', 'buffer_type', 'description', 'prefix', 'status'];
    const idempotencyKey = fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 6 },
      { arbitrary: fc.constantFrom('key-1', 'key-2', 'key-3'), weight: 3 },
      { arbitrary: fc.oneof(headerText(300), fc.constantFrom('', 'has space', 'k'.repeat(255), 'k'.repeat(256))), weight: 1 },
    );
    // Methods with no route on these paths (GET /v1.0/codegen is the list and PATCH
    // /v1.0/codegen/1 the update, both fuzzed in fuzz-new-routes.test.ts).
    const method = fc.oneof({ arbitrary: fc.constant('POST'), weight: 20 }, { arbitrary: fc.constantFrom('PUT', 'DELETE', 'OPTIONS'), weight: 1 });
    const pathVariant = fc.oneof(
      { arbitrary: fc.constant(path), weight: 20 },
      { arbitrary: fc.constantFrom(`${path}?x=1`, `${path}/`, '/v1.0/CODEGEN', '/v2.0/codegen', '/v1.0/codegen/1'), weight: 1 },
    );

    await fc.assert(
      fc.asyncProperty(headerChoice, bodies('code_generator', validGenerator, fields), idempotencyKey, method, pathVariant, async (h, body, key, verb, url) => {
        const headers = rawHeaders(h, key === undefined ? [] : ['Idempotency-Key', key]);
        const response = await sendTo(api, host, { method: verb, path: url, headers, body });
        const caller = authenticated(h.token);
        const routed = verb === 'POST' && new URL(url, 'http://x').pathname === path;
        const bytes = Buffer.byteLength(body, 'utf8');

        let expected: number | 'created-or-replayed';
        let fingerprint: string | undefined;
        if (!routed) expected = gatewayAnswer(host, verb, url) ?? 404;
        else if (!caller) expected = 401;
        else if (bytes > MAX_BODY_BYTES) expected = 413;
        else if (h.contentType !== undefined && !isJsonContentType(trimOws(h.contentType))) expected = 415;
        else {
          const verdict = judgeCodeGenerator(body);
          if (verdict.kind === 'malformed') expected = 400;
          else if (verdict.kind === 'invalid') expected = 422;
          else if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(trimOws(key))) expected = 400;
          else {
            expected = 'created-or-replayed';
            fingerprint = generatorFingerprint(verdict.value);
          }
        }

        if (expected !== 'created-or-replayed') {
          expect(response.status, `${verb} ${url} ${body.slice(0, 200)} → ${response.text.slice(0, 300)}`).toBe(expected);
          expectClientError(host, response, verb);
          if (routed) expectRequestIdHandled(h, response);
          expect(await codeGeneratorsOf(account.accountId)).toHaveLength(generators);
          return;
        }

        if (!caller) throw new Error('unreachable: a success needs a caller');
        const keyId = key === undefined ? undefined : `${caller.accountId}#${trimOws(key)}`;
        const stored = keyId === undefined ? undefined : keys.get(keyId);
        if (stored && stored.fingerprint !== fingerprint) {
          expect(response.status, response.text).toBe(409);
          expectClientError(host, response);
        } else if (stored) {
          expect(response.status, response.text).toBe(201);
          expect(response.text).toBe(stored.text);
          expect(response.headers['idempotent-replayed']).toBe('true');
        } else {
          expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(201);
          expectStandardHeaders(response);
          const created = response.json.code_generator;
          expect(created).toMatchObject({ ...JSON.parse(fingerprint!), account_id: caller.accountId });
          expect(response.headers.location).toBe(`/v1.0/codegen/${created.id}`);
          if (caller === owner) generators += 1;
          if (keyId !== undefined) keys.set(keyId, { fingerprint: fingerprint!, text: response.text });
        }
        expectRequestIdHandled(h, response);
        expect(await codeGeneratorsOf(account.accountId)).toHaveLength(generators);
      }),
    );

    // Every generator the owner got has exactly one creation event, and nothing else was written.
    const [records, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(records).toHaveLength(generators);
    expect(events.map((e) => e.resource_id).sort()).toEqual(records.map((r) => String(r.id)).sort());
    expect(events.every((e) => e.type === 'code_generator.created')).toBe(true);
    console.log(`fuzz createCodeGenerator: ${numRuns} runs, ${generators} generators created`);
  });

  it(`POST /v2.0/voided_transactions: ${numRuns} generated requests, 4xx or a correct 200, nothing written on failure`, async () => {
    const host: HostId = 'pos';
    const path = '/v2.0/voided_transactions';
    const account = await newAccount();
    owner = account;
    const voided = new Map<string, string>();
    const idText = fc.oneof(
      { arbitrary: fc.constantFrom('1', '2', 'site-1', '1234'), weight: 3 },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 128 }), weight: 1 },
    );
    const optionalText = fc.string({ unit: 'binary', maxLength: 128 });
    const validVoid = fc.record(
      {
        site_id: idText,
        pos_transaction_id: idText,
        occurred_at: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
        business_date: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
        register_id: optionalText,
        operator_id: optionalText,
        till_id: fc.constant(null),
        table_id: optionalText,
        posagent_version: optionalText,
        pos_vendor: optionalText,
        pos_version: optionalText,
        receipt_id: optionalText,
        unknown_future_field: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['site_id', 'pos_transaction_id'] },
    );
    const fields = ['site_id', 'pos_transaction_id', 'occurred_at', 'business_date', 'register_id', 'receipt_id', 'till_id'];
    const method = fc.oneof({ arbitrary: fc.constant('POST'), weight: 20 }, { arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), weight: 1 });
    let events = 0;

    await fc.assert(
      fc.asyncProperty(headerChoice, bodies('transaction', validVoid, fields), method, async (h, body, verb) => {
        const response = await sendTo(api, host, { method: verb, path, headers: rawHeaders(h), body });
        const caller = authenticated(h.token);
        const bytes = Buffer.byteLength(body, 'utf8');
        let expected: number | 'voided' | 'undecided';
        let voidKey: string | undefined;
        if (verb !== 'POST') expected = gatewayAnswer(host, verb, path) ?? 404;
        else if (!caller) expected = 401;
        else if (bytes > MAX_BODY_BYTES) expected = 413;
        else if (h.contentType !== undefined && !isJsonContentType(trimOws(h.contentType))) expected = 415;
        else {
          const verdict = judgeVoid(body);
          if (verdict.kind === 'malformed') expected = 400;
          else if (verdict.kind === 'invalid') expected = 422;
          else if (verdict.kind === 'undecided') expected = 'undecided';
          else {
            expected = 'voided';
            voidKey = JSON.stringify([caller.accountId, verdict.value.site_id, verdict.value.pos_transaction_id]);
          }
        }
        if (expected === 'undecided') expected = response.status === 422 ? 422 : 'voided';

        if (expected !== 'voided') {
          expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(expected);
          expectClientError(host, response, verb);
          if (verb === 'POST') expectRequestIdHandled(h, response);
          expect(await eventsOf(account.accountId)).toHaveLength(events);
          return;
        }

        expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(200);
        expectStandardHeaders(response);
        expectRequestIdHandled(h, response);
        expect(response.json.transaction.errors).toEqual([]);
        const first = voidKey ? voided.get(voidKey) : undefined;
        if (first !== undefined) {
          expect(response.text).toBe(first);
        } else {
          voided.set(voidKey!, response.text);
          if (caller === owner) events += 1;
        }
        expect(await eventsOf(account.accountId)).toHaveLength(events);
      }),
    );

    const records = await voidsOf(account.accountId);
    const ownerPrefix = `[${account.accountId},`;
    expect(records.map((r) => r.transaction_key).sort()).toEqual([...voided.keys()].filter((k) => k.startsWith(ownerPrefix)).sort());
    const recorded = await eventsOf(account.accountId);
    expect(recorded.map((e) => e.id).sort()).toEqual(records.map((r) => r.event_id).sort());
    console.log(`fuzz voidTransaction: ${numRuns} runs, ${records.length} voids recorded`);
  });

  it(`GET and DELETE /v1.0/events/{id}: ${2 * numRuns} generated requests (both routes), 4xx or the caller's live event`, async () => {
    const account = await newAccount();
    owner = account;
    // Events to find and delete: the owner's, and one of the stranger's.
    for (let i = 0; i < 8; i++) {
      await call(api, 'core', 'POST', '/v1.0/codegen', {
        token: account.token,
        body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: i + 1 } },
      });
    }
    await call(api, 'core', 'POST', '/v1.0/codegen', {
      token: stranger.token,
      body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 1 } },
    });
    const live = new Map((await eventsOf(account.accountId)).map((e) => [e.id, e]));
    const strangersLive = new Map((await eventsOf(stranger.accountId)).map((e) => [e.id, e]));
    const strangers = [...strangersLive.keys()];
    const ownIds = [...live.keys()];
    const deleted = new Set<number>();
    const liveOf = (caller: Account) => (caller === owner ? live : strangersLive);

    const id = fc.oneof(
      { arbitrary: fc.constantFrom(...ownIds, ...strangers).map(String), weight: 6 },
      { arbitrary: fc.constantFrom(...ownIds).map((n) => `%3${String(n)[0]}${String(n).slice(1)}`), weight: 1 },
      { arbitrary: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map(String), weight: 2 },
      {
        arbitrary: fc.constantFrom(
          '0',
          '-1',
          '00',
          '01',
          '+1',
          '1.0',
          '1e3',
          '0x10',
          '9007199254740991',
          '9007199254740992',
          '99999999999999999',
          '1'.repeat(400),
          '%20',
          '%2F',
          '1%2F2',
          '%00',
          '%',
          '%zz',
          '%E0%A4%A',
          '%F0%9F%98%80',
          '..',
          '.',
          '%2e%2e',
          '1;drop',
          'null',
          'undefined',
          '__proto__',
          'constructor',
          '1?x=1',
          '1#frag',
        ),
        weight: 3,
      },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent), weight: 2 },
      { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
    );
    const method = fc.oneof(
      { arbitrary: fc.constantFrom('GET', 'DELETE'), weight: 20 },
      { arbitrary: fc.constantFrom('POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'), weight: 2 },
    );
    const body = fc.option(fc.oneof(fc.string({ maxLength: 50 }), fc.constant('x'.repeat(MAX_BODY_BYTES + 1))), { nil: undefined });

    await fc.assert(
      fc.asyncProperty(headerChoice, id, method, body, async (h, idText, verb, text) => {
        const path = `/v1.0/events/${idText}`;
        const response = await sendTo(api, 'core', { method: verb, path, headers: rawHeaders(h), body: text });
        const caller = authenticated(h.token);
        const target = eventPathTarget(path);
        let expected: number;
        const isEventRoute = verb === 'GET' || verb === 'DELETE';
        if (!isEventRoute || target.kind === 'no-route') expected = gatewayAnswer('core', verb, path) ?? 404;
        else if (!caller) expected = 401;
        else if (target.kind === 'bad-id') expected = 400;
        else if (liveOf(caller).has(target.id) && !deleted.has(target.id)) expected = 200;
        else expected = 404;

        expect(response.status, `${verb} ${path} → ${response.text}`).toBe(expected);
        if (expected !== 200) {
          expectClientError('core', response, verb);
          if (isEventRoute && target.kind !== 'no-route') expectRequestIdHandled(h, response);
        } else {
          expectStandardHeaders(response);
          expectRequestIdHandled(h, response);
          const event = liveOf(caller!).get((target as { id: number }).id)!;
          if (verb === 'GET') {
            expect(response.json).toEqual({
              event: { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at },
            });
          } else {
            expect(response.text).toBe(' ');
            deleted.add(event.id);
          }
        }
        const ownerDeleted = [...deleted].filter((d) => live.has(d)).length;
        expect(await eventsOf(account.accountId)).toHaveLength(live.size - ownerDeleted);
      }),
      { numRuns: 2 * numRuns },
    );

    const strangerDeleted = [...deleted].filter((d) => strangersLive.has(d)).length;
    expect(await eventsOf(stranger.accountId)).toHaveLength(strangers.length - strangerDeleted);
    console.log(`fuzz getEvent/deleteEvent: ${2 * numRuns} runs, ${deleted.size} of ${live.size + strangers.length} events acknowledged`);
  });
});
