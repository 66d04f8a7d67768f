import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { expect } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { issueToken } from '../../../functions/http/tokens.ts';
import { newAccount } from '../../support/accounts.ts';
import { MAX_BODY_BYTES, trimOws } from '../http/oracle.ts';
import type { RawResponse } from '../support.ts';

/**
 * Requests whose every header is generated, for the fuzzers of codes/, redemption/ and events/:
 * the token presented in eleven ways (the owner's, another account's, none, empty, garbage,
 * unknown, revoked, repeated or two different ones), the content type, the request id; and
 * bodies as text, built from a valid resource under its root key and then mutated, reshaped,
 * broken, deeply nested or padded around the 16 KiB limit.
 */
export type Account = Awaited<ReturnType<typeof newAccount>>;

/** The accounts a generated token belongs to: `owner` is set anew by each property. */
interface Callers {
  owner: Account;
  stranger: Account;
  revokedToken: string;
}
export const callers = {} as Callers;

/** Two accounts, and a revoked token of the first. */
export async function openCallers(): Promise<void> {
  [callers.owner, callers.stranger] = await Promise.all([newAccount(), newAccount()]);
  const revoked = await issueToken(callers.owner.accountId, 'revoked for fuzzing', 'all');
  await documents.send(
    new UpdateCommand({
      TableName: tableName('apiKeys'),
      Key: { token_hash: revoked.key.token_hash },
      UpdateExpression: 'SET revoked_at = :now',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    }),
  );
  callers.revokedToken = revoked.token;
}

// ---------------------------------------------------------------- headers

/** How the request presents its token; `expected` says which account it authenticates, if any. */
export type TokenChoice =
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
export const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x21, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength,
  });

function tokenHeaders(choice: TokenChoice, garbage: string): string[] {
  const unknown = `tg_${'A'.repeat(43)}`;
  switch (choice) {
    case 'owner':
      return ['X-Auth-Token', callers.owner.token];
    case 'owner-lower-case-name':
      return ['x-auth-token', callers.owner.token];
    case 'owner-twice':
      return ['X-Auth-Token', callers.owner.token, 'X-Auth-Token', callers.owner.token];
    case 'stranger':
      return ['X-Auth-Token', callers.stranger.token];
    case 'missing':
      return [];
    case 'empty':
      return ['X-Auth-Token', ''];
    case 'garbage':
      return ['X-Auth-Token', garbage];
    case 'well-formed-unknown':
      return ['X-Auth-Token', unknown];
    case 'revoked':
      return ['X-Auth-Token', callers.revokedToken];
    case 'two-different':
      return ['X-Auth-Token', callers.stranger.token, 'X-Auth-Token', callers.owner.token];
    case 'two-different-case':
      return ['X-Auth-Token', callers.stranger.token, 'x-auth-token', callers.owner.token];
  }
}

export const authenticated = (choice: TokenChoice): Account | undefined =>
  ['owner', 'owner-lower-case-name', 'owner-twice'].includes(choice) ? callers.owner : choice === 'stranger' ? callers.stranger : undefined;

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

export const headerChoice: fc.Arbitrary<HeaderChoice> = fc.record({
  token: tokenChoice,
  garbage: headerText(80),
  contentType,
  requestId,
  secondRequestId: fc.boolean(),
});

export function rawHeaders(choice: HeaderChoice, extra: string[] = []): string[] {
  const headers = [...tokenHeaders(choice.token, choice.garbage), ...extra];
  if (choice.contentType !== undefined) headers.push('Content-Type', choice.contentType);
  if (choice.requestId !== undefined) {
    headers.push('X-Request-Id', choice.requestId);
    if (choice.secondRequestId) headers.push('X-Request-Id', 'second-request-id');
  }
  return headers;
}

/** The function (not the gateway) answered: the request id is the well-formed one sent, or new. */
export function expectRequestIdHandled(choice: HeaderChoice, response: RawResponse) {
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
export function textBodies(root: string, valid: fc.Arbitrary<Record<string, unknown>>, fields: string[]): fc.Arbitrary<string> {
  const wrap = (resourceText: string) => `{${JSON.stringify(root)}:${resourceText}}`;
  return fc.oneof(
    { arbitrary: valid.map((r) => wrap(JSON.stringify(r))), weight: 6 },
    // one field given a hostile value, or dropped
    {
      arbitrary: fc.tuple(valid, fc.constantFrom(...fields), hostileValue).map(([r, key, value]) => wrap(setMember(r, key, value))),
      weight: 8,
    },
    { arbitrary: fc.tuple(valid, fc.constantFrom(...fields)).map(([r, key]) => wrap(JSON.stringify({ ...r, [key]: undefined }))), weight: 2 },
    // an extra, odd key inside the resource
    { arbitrary: fc.tuple(valid, keyNames, hostileValue).map(([r, key, value]) => wrap(withMember(JSON.stringify(r), key, value))), weight: 4 },
    // odd keys and values beside the resource, or a duplicated root key
    {
      arbitrary: fc.tuple(valid, keyNames, hostileValue).map(([r, key, value]) => withMember(wrap(JSON.stringify(r)), key === root ? `${key}_` : key, value)),
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
