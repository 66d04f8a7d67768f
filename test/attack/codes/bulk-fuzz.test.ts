import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { issueToken } from '../../../functions/http/tokens.ts';
import type { HostId } from '../../../functions/routes.ts';
import { scanAll } from '../../../local/dynamodb.ts';
import type { LocalApi } from '../../../local/server.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { startTestApi, type Around } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { eventsOf } from '../../support/records.ts';
import { authenticated, callers, expectRequestIdHandled, headerChoice, headerText, openCallers, rawHeaders, type Account } from '../fuzz/requests.ts';
import { bodies, encodedId, expectDocumented, strangeIds } from '../fuzz/shop.ts';
import { idPathTarget, trimOws, type BodyVerdict } from '../http/oracle.ts';
import { expectClientError, expectStandardHeaders, fuzzRuns, fuzzSeed, gatewayAnswer, sendTo, type RawResponse } from '../support.ts';
import { codegenTarget, judgeExport, judgeIssue } from './oracle.ts';

// A small code quota (read by the functions when they load), so that jobs of 1 to 20 codes meet it.
vi.hoisted(() => {
  process.env.ACCOUNT_CODE_QUOTA = '45';
});

/**
 * Property-based attacks on the four bulk routes (PRODUCT.md, "Bulk") through the local server:
 * POST /v1.0/codegen/{id}/issuance_jobs, POST /v1.0/codegen/{id}/exports, GET
 * /v1.0/issuance_jobs/{id} and GET /v1.0/exports/{id}. Every header is generated
 * (fuzz/requests.ts: the token in eleven ways, plus the account's own tokens of scope `pos`, 403,
 * and `core`; the content type; the request id), and so are the path ids (the caller's
 * generators, another account's, an earlier account's, ids of a job or an export where a
 * generator is meant and the other way round, the first digit percent-encoded, and
 * fuzz/shop.ts's strange ids: any string, signs, exponents, numbers past 2^53), the bodies
 * (fuzz/shop.ts's hostile bodies around `{"count":n}` and `{"redeemed":b}`, and counts of 0,
 * negative, fractional, 1,000,000, 1,000,001, strings, any JSON value, extra keys; the export's
 * `redeemed` with any value, no body, white space, a lone byte-order mark) and Idempotency-Key
 * values (sent again with the same body, or another). Each answer is judged by an oracle written
 * from the contract (codes/oracle.ts, http/oracle.ts): the status in the contract's order, the
 * core error body naming the field, the standard headers, the request id, the OpenAPI document;
 * and the tables are read back after every request and compared with a model of the accounts: a
 * refused request starts no job and no export, reserves no quota and writes no event; an accepted
 * one exactly one job (one more running job, its count taken from the quota) or one export.
 *
 * The jobs and exports the properties start stay `running`: the queue workers run (the routes
 * send their messages to the local queues as in AWS), but drop the messages of every account
 * not in `released`, so no worker writes codes for them and the model of running jobs (at most
 * 3 per account, then 409) and of the quota (ACCOUNT_CODE_QUOTA=45) stays exact. The GET property
 * releases one account for a moment, so that it also reads completed jobs and exports.
 *
 * Would catch (each checked by breaking the handler: docs/testing.md, "The bulk fuzzer"): a count
 * out of 1–1,000,000 or of the wrong type accepted; a job started before the checks (a refused
 * request that reserved quota, raised the running count or left a job or export behind); a 4th
 * running job, or a job past the quota, accepted; an inactive generator's job accepted, or its
 * export refused; another account's generator, job or export answered other than 404; an
 * Idempotency-Key replay that starts a second job or export or answers other than the first
 * 202 byte for byte, or a different body under the key not refused; a body that is not JSON
 * (a lone byte-order mark) read as no body; a 202 or a read whose body, Location or headers
 * are not the contract's; any 5xx.
 *
 * The properties keep state (the model, the tables), so a failure is reported as found, not
 * shrunk (`endOnFailure`): a smaller example replayed on the changed tables would not fail alike.
 * Replay a failure with FUZZ_SEED=<seed printed below>; scale with FUZZ_RUNS=<runs per property>.
 * Budget: under 15 s for the file on the shared 2-core machine.
 */
const seed = fuzzSeed();
const jobRuns = fuzzRuns(40);
const numRuns = fuzzRuns(30);
console.log(
  `fuzz bulk: seed ${seed}, ${jobRuns} runs for POST issuance_jobs, ${numRuns} per other property (replay: FUZZ_SEED=${seed} npx vitest run test/attack/codes/bulk-fuzz.test.ts)`,
);
fc.configureGlobal({ seed, numRuns, endOnFailure: false });

const core: HostId = 'core';
const QUOTA = 45;
const MAX_RUNNING_JOBS = 3;

// ---------------------------------------------------------------- the shops and their model

interface Generator {
  id: number;
  status: string;
  /** How many distinct codes its shape makes. */
  space: number;
}

/** An account, its tokens of scope pos and core, its generators, and what the tables must hold for it. */
interface Shop {
  account: Account;
  posToken: string;
  coreToken: string;
  active: Generator;
  numeric: Generator;
  inactive: Generator;
  /** Codes taken from the quota (running jobs included). */
  reserved: number;
  running: number;
  /** Jobs and exports as every read must show them, by id. */
  jobs: Map<number, Record<string, any>>;
  exports: Map<number, Record<string, any>>;
  /** What each export was asked for (`redeemed`, or undefined for all codes). */
  filters: Map<number, boolean | undefined>;
  events: string[];
  /** First 202 per route and Idempotency-Key: the request it answered and the answer. */
  keys: Map<string, { request: string; text: string; location: string }>;
}

let api: LocalApi;
let workers: LocalWebhooks;
/** Accounts whose job and export messages the workers handle; every other account's are dropped (answered as handled). */
const released = new Set<number>();
const shops = new Map<number, Shop>();
/** Every job and export id made, in any account: ids of the other kind, and another account's. */
const madeJobs: number[] = [];
const madeExports: number[] = [];
/** Generators of accounts that no longer make requests. */
const earlierGenerators: number[] = [];

const around: Around = (handler) => async (event, context) => {
  const records = (event as unknown as SQSEvent).Records;
  if (!records?.[0]?.eventSourceARN?.match(/:(issuanceJobs|exports)$/)) return handler(event, context);
  const kept = records.filter((record) => released.has((JSON.parse(record.body) as { account_id: number }).account_id));
  if (kept.length === 0) return undefined as never;
  return handler({ ...(event as object), Records: kept } as never, context);
};

beforeAll(async () => {
  api = await startTestApi();
  workers = await startTestWebhooks({ streams: false, around });
  await openCallers();
});
afterAll(async () => {
  await workers?.close();
  await api?.close();
});

const summary = async (accountId: number) => (await eventsOf(accountId)).map((e) => `${e.id}:${e.type}:${e.resource_id}`).sort();

async function newGenerator(token: string, fields: Record<string, unknown>): Promise<Generator> {
  const response = await call(api, core, 'POST', '/v1.0/codegen', { token, body: { code_generator: { store_id: 3, ...fields } } });
  expect(response.status, response.text).toBe(201);
  const { id, status, generation_type: type, code_length: length } = response.json.code_generator;
  return { id, status, space: (type === 'numeric' ? 10 : 32) ** length };
}

/** A fresh account with its three generators (an active one, a numeric one of 10,000 codes, an inactive one). */
async function openShop(): Promise<Shop> {
  const account = await newAccount();
  const [pos, coreToken] = await Promise.all([issueToken(account.accountId, 'fuzz till', 'pos'), issueToken(account.accountId, 'fuzz office', 'core')]);
  const active = await newGenerator(account.token, { generation_type: 'tillgate', code_length: 8, prefix: 'BJ-' });
  const numeric = await newGenerator(account.token, { generation_type: 'numeric', code_length: 4 });
  const inactive = await newGenerator(account.token, { generation_type: 'tillgate', code_length: 8, status: 'inactive' });
  const shop: Shop = {
    account,
    posToken: pos.token,
    coreToken: coreToken.token,
    active,
    numeric,
    inactive,
    reserved: 0,
    running: 0,
    jobs: new Map(),
    exports: new Map(),
    filters: new Map(),
    events: await summary(account.accountId),
    keys: new Map(),
  };
  shops.set(account.accountId, shop);
  return shop;
}

const shopOf = (account: Account | undefined) => (account ? shops.get(account.accountId) : undefined);

/** The owner and the stranger of fuzz/requests.ts's tokens become these shops' accounts. */
function enter(owner: Shop, stranger: Shop) {
  callers.owner = owner.account;
  callers.stranger = stranger.account;
}

/** The account's running jobs and the codes it took from its quota (one consistent BatchGetItem). */
async function countersOf(accountId: number): Promise<{ running: number; reserved: number }> {
  const table = tableName('counters');
  const [running, reserved] = [`issuance-jobs-running#${accountId}`, `codes-issued#${accountId}`];
  const { Responses } = await documents.send(
    new BatchGetCommand({ RequestItems: { [table]: { Keys: [{ name: running }, { name: reserved }], ConsistentRead: true } } }),
  );
  const item = (name: string) => Responses?.[table]?.find((i) => i.name === name);
  return { running: Number(item(running)?.running ?? 0), reserved: Number(item(reserved)?.issued ?? 0) };
}

async function exportRecordsOf(accountId: number): Promise<Record<string, any>[]> {
  const { Items } = await documents.send(
    new QueryCommand({
      TableName: tableName('exports'),
      KeyConditionExpression: 'account_id = :a',
      ExpressionAttributeValues: { ':a': accountId },
      ConsistentRead: true,
    }),
  );
  return Items ?? [];
}

/** The account's job items (a Scan of the counters table: at a change of account and at the end, not per request). */
const jobRecordsOf = (accountId: number) =>
  scanAll(documents, {
    TableName: tableName('counters'),
    FilterExpression: 'begins_with(#name, :prefix)',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: { ':prefix': `issuance-job#${accountId}#` },
  });

/** The tables hold what the model says: the running jobs, the quota taken, the exports (with their filters), the events. */
async function expectTables(where: string, shop: Shop, jobsToo = false) {
  const id = shop.account.accountId;
  const [{ running, reserved }, exportRecords, events, jobRecords] = await Promise.all([
    countersOf(id),
    exportRecordsOf(id),
    summary(id),
    jobsToo ? jobRecordsOf(id) : undefined,
  ]);
  expect({ running, reserved }, `${where}: the running jobs and the quota taken of account ${id}`).toEqual({ running: shop.running, reserved: shop.reserved });
  expect(exportRecords.map((r) => [r.id, r.redeemed]).sort(), `${where}: the exports of account ${id}`).toEqual(
    [...shop.filters].map(([exportId, redeemed]) => [exportId, redeemed]).sort(),
  );
  expect(events, `${where}: the events of account ${id}`).toEqual(shop.events);
  if (jobRecords) expect(jobRecords.map((r) => r.id).sort(), `${where}: the jobs of account ${id}`).toEqual([...shop.jobs.keys()].sort());
}

// ---------------------------------------------------------------- shared arbitraries

/** The token as fuzz/requests.ts presents it, or the owner account's own token of scope pos (403) or core. */
const scopeChoice = fc.oneof(
  { arbitrary: fc.constant('as-chosen' as const), weight: 12 },
  { arbitrary: fc.constantFrom('pos' as const, 'core' as const), weight: 2 },
);
type ScopeChoice = 'as-chosen' | 'pos' | 'core';

type HeaderChoice = Parameters<typeof rawHeaders>[0];

function tokenOf(h: HeaderChoice, scope: ScopeChoice, extra: string[]) {
  if (scope === 'as-chosen') return { headers: rawHeaders(h, extra), caller: authenticated(h.token), forbidden: false };
  const shop = shopOf(callers.owner)!;
  // The token headers of the choice replaced by the account's other token.
  const headers = rawHeaders({ ...h, token: 'missing' }, ['X-Auth-Token', scope === 'pos' ? shop.posToken : shop.coreToken, ...extra]);
  return { headers, caller: scope === 'core' ? shop.account : undefined, forbidden: scope === 'pos' };
}

/**
 * Headers as fuzz/requests.ts generates them, or, as often, the owner's token and a JSON content
 * type with the generated request id: most requests a client sends are well-formed, and those
 * reach the checks after the token and the body.
 */
const headers = fc.oneof(
  headerChoice,
  headerChoice.map((h) => ({ ...h, token: 'owner' as const, contentType: 'application/json' })),
);

/** Bodies as a client sends them (a valid value), fuzz/shop.ts's hostile bodies around one, and the route's own. */
const bodiesOf = (valid: fc.Arbitrary<Record<string, unknown>>, field: string, ...own: fc.WeightedArbitrary<Buffer>[]) =>
  fc.oneof(
    { arbitrary: valid.map((value) => Buffer.from(JSON.stringify(value))), weight: 3 },
    { arbitrary: bodies(undefined, valid, [field]), weight: 3 },
    ...own,
  );

/** Where a path id comes from: resolved at run time, as the accounts, jobs and exports change. */
type IdKind = 'active' | 'numeric' | 'inactive' | 'theirs' | 'earlier' | 'job' | 'export' | 'encoded';
const generatorIdChoice = fc.oneof(
  { arbitrary: fc.constantFrom<IdKind>('active', 'numeric').map((kind) => ({ kind, strange: '' })), weight: 10 },
  {
    arbitrary: fc.constantFrom<IdKind>('inactive', 'theirs', 'earlier', 'job', 'export', 'encoded').map((kind) => ({ kind, strange: '' })),
    weight: 4,
  },
  { arbitrary: strangeIds.map((strange) => ({ kind: undefined, strange })), weight: 3 },
);

/** The path id of a generator: the caller's (the owner's for a caller of no account), another's, or no generator at all. */
function generatorId(choice: { kind: IdKind | undefined; strange: string }, caller: Account | undefined, pick: number): string {
  const owner = shopOf(caller) ?? shopOf(callers.owner)!;
  const other = shopOf(caller === callers.stranger ? callers.owner : callers.stranger)!;
  const any = <T>(list: T[], fallback: T) => (list.length === 0 ? fallback : list[pick % list.length]!);
  switch (choice.kind) {
    case undefined:
      return choice.strange;
    case 'active':
    case 'numeric':
    case 'inactive':
      return String(owner[choice.kind].id);
    case 'encoded':
      return encodedId(owner.active.id);
    case 'theirs':
      return String(other.active.id);
    case 'earlier':
      return String(any(earlierGenerators, other.numeric.id));
    case 'job':
      return String(any(madeJobs, 9_007_199_254_740_000));
    case 'export':
      return String(any(madeExports, 9_007_199_254_740_001));
  }
}

const idempotencyKey = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 6 },
  { arbitrary: fc.constantFrom('key-1', 'key-2', ' key-1', 'key-3'), weight: 3 },
  { arbitrary: fc.oneof(headerText(300), fc.constantFrom('', 'has space', 'k'.repeat(255), 'k'.repeat(256))), weight: 1 },
);
/** After a 202 under a key, the client sometimes sends the key again: the same body, or another. */
const followUp = fc.constantFrom('none' as const, 'none' as const, 'same' as const, 'other' as const);
const method = (route: string) =>
  fc.oneof({ arbitrary: fc.constant(route), weight: 20 }, { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'), weight: 1 });

/** A 422 names `must` and only fields the verdict allows. */
function expectFields(where: string, response: RawResponse, fields: Set<string>, must: string | undefined) {
  const named = (response.json.errors as { field?: string }[]).map((e) => e.field);
  expect(named.length, where).toBeGreaterThan(0);
  for (const field of named) expect([...fields], where).toContain(field);
  if (must !== undefined) expect(named, where).toContain(must);
}

/** Every answer: documented, with the standard headers, an error with no ETag; the function's (`routed`) with the request id. */
function expectAnswer(where: string, verb: string, path: string, response: RawResponse, h: HeaderChoice, routed: boolean) {
  expect(response.status, where).toBeLessThan(500);
  expectDocumented(verb, path, response);
  if (routed) expectRequestIdHandled(h, response);
  if (response.status >= 400) {
    expectClientError(core, response, verb);
    expect(response.headers.etag, where).toBeUndefined();
  } else if (response.status !== 304) expectStandardHeaders(response);
}

const BODY_STATUS: Record<string, number | undefined> = { 'too-large': 413, 'media-type': 415, malformed: 400, invalid: 422 };

/** The status a POST under /v1.0/codegen/{id}/… must get before its generator is read: undefined when it passes. */
function beforeTheRecord(
  target: ReturnType<typeof codegenTarget>,
  verb: string,
  path: string,
  token: { caller: Account | undefined; forbidden: boolean },
  body: { kind: string },
  key: string | undefined,
): { status: number; either?: number } | undefined {
  if (target.kind === 'no-route') return { status: gatewayAnswer(core, verb, path) ?? 404 };
  if (token.forbidden) return { status: 403 };
  if (!token.caller) return { status: 401 };
  const bodyStatus = BODY_STATUS[body.kind];
  // PRODUCT.md orders the body's checks, not the path id among them: either may answer first.
  if (target.kind === 'bad-id') return bodyStatus === undefined ? { status: 400 } : { status: 400, either: bodyStatus };
  if (bodyStatus !== undefined) return { status: bodyStatus };
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(trimOws(key))) return { status: 400 };
  return undefined;
}

/** What one create route (jobs or exports) adds to the shared driver below. */
interface CreateRoute {
  readonly route: 'issuance_jobs' | 'exports';
  /** The root of its 202's body. */
  readonly root: 'issuance_job' | 'export';
  readonly bodies: fc.Arbitrary<Buffer>;
  /** The body's verdict; `status` is the answer, for where the contract allows two readings. */
  judge(bytes: Buffer, contentType: string | undefined, status: number): BodyVerdict;
  /** The refusal for the caller's own generator after the Idempotency-Key's replay (`replayFirst`) or before it, as the route checks its state. */
  refusal(shop: Shop, generator: Generator, value: Record<string, unknown>): { reason: string; replayFirst: boolean } | undefined;
  /** The 202's record, all fields but id and created_at, for this value. */
  expected(generator: Generator, value: Record<string, unknown>): Record<string, unknown>;
  /** The model after a 202. */
  accept(shop: Shop, record: Record<string, any>, value: Record<string, unknown>): void;
  /** A body for the key sent again: the same request, or another. */
  again(value: Record<string, unknown>, same: boolean): Record<string, unknown>;
}

/** Messages that tell the 409s apart (the contract: every message names the actual fault). */
const CONFLICTS: Record<string, RegExp> = {
  '409 inactive': /inactive/,
  '409 space': /distinct codes/,
  '409 key': /Idempotency-Key/,
  '409 quota': /quota/,
  '409 running': /running/,
};

/**
 * The property of a create route: generated requests to POST /v1.0/codegen/{id}/<route>, each
 * judged in the contract's order (the route, the token and its scope, the path id, the body,
 * the Idempotency-Key's form, the generator, its state, the key's earlier request, the route's
 * own limits), then the tables read back. `owner` and `stranger` are the shops at the start;
 * `beforeEach` may hand the owner's requests to another shop (the jobs' route does, when an
 * account is full).
 */
async function createProperty(spec: CreateRoute, runs: number, shopsNow: () => { owner: Shop; stranger: Shop }, beforeEach = async () => {}) {
  const statuses = new Map<string, number>();
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(
      headers,
      scopeChoice,
      generatorIdChoice,
      fc.nat(),
      spec.bodies,
      idempotencyKey,
      method('POST'),
      followUp,
      async (h, scope, idChoice, pick, bytes, key, verb, again) => {
        await beforeEach();
        const token = tokenOf(h, scope, key === undefined ? [] : ['Idempotency-Key', key]);
        const path = `/v1.0/codegen/${generatorId(idChoice, token.caller, pick)}/${spec.route}`;
        const response = await sendTo(api, core, { method: verb, path, headers: token.headers, body: bytes });
        const where = `${verb} ${path} (${h.token}/${scope}, ${h.contentType}, key ${key}) ${JSON.stringify(bytes.toString('utf8').slice(0, 200))} → ${response.status} ${response.text.slice(0, 300)}`;
        const target = codegenTarget(verb, path);
        const verdict = spec.judge(bytes, h.contentType, response.status);
        const early = beforeTheRecord(target, verb, path, token, verdict, key);
        const shop = shopOf(token.caller);
        let reason: string;
        if (early) {
          reason = String(early.status);
          if (early.either !== undefined && response.status === early.either) reason = `${early.either} (body before id)`;
          else expect(response.status, where).toBe(early.status);
        } else {
          const value = (verdict as { value: Record<string, unknown> }).value;
          const generator = [shop!.active, shop!.numeric, shop!.inactive].find((g) => String(g.id) === String(target.kind === 'ok' && target.id));
          const keyId = key === undefined ? undefined : `${spec.route}#${trimOws(key)}`;
          const stored = keyId === undefined ? undefined : shop!.keys.get(keyId);
          const request = JSON.stringify({ id: generator?.id, ...value });
          const refusal = generator && spec.refusal(shop!, generator, value);
          if (!generator) reason = '404';
          else if (refusal && !refusal.replayFirst) reason = refusal.reason;
          else if (stored) reason = stored.request === request ? 'replay' : '409 key';
          else reason = refusal?.reason ?? '202';
          if (CONFLICTS[reason]) {
            expect(response.status, where).toBe(409);
            expect(response.json.errors[0].message, where).toMatch(CONFLICTS[reason]!);
          } else if (reason === '404') expect(response.status, where).toBe(404);
          else if (reason === 'replay') {
            expect(response.status, where).toBe(202);
            expect(response.text, where).toBe(stored!.text);
            expect(response.headers.location, where).toBe(stored!.location);
            expect(response.headers['idempotent-replayed'], where).toBe('true');
          } else {
            expect(response.status, where).toBe(202);
            const record = response.json[spec.root];
            expect(response.json, where).toEqual({ [spec.root]: { id: record.id, created_at: record.created_at, ...spec.expected(generator!, value) } });
            expect(Number.isSafeInteger(record.id) && record.id > 0 && !madeJobs.includes(record.id) && !madeExports.includes(record.id), where).toBe(true);
            expect(record.created_at, where).toMatch(RFC3339_MILLIS_UTC);
            const location = `/v1.0/${spec.route}/${record.id}`;
            expect(response.headers.location, where).toBe(location);
            const read = await call(api, core, 'GET', location, { token: shop!.account.token });
            expect(read.json, where).toEqual(response.json);
            spec.accept(shop!, record, value);
            accepted += 1;
            if (keyId !== undefined) shop!.keys.set(keyId, { request, text: response.text, location });
          }
        }
        statuses.set(reason, (statuses.get(reason) ?? 0) + 1);
        expectAnswer(where, verb, path, response, h, target.kind !== 'no-route');
        if (response.status === 422 && verdict.kind === 'invalid')
          expectFields(where, response, verdict.fields, verdict.fields.has('count') ? 'count' : undefined);
        // What a request past the token could have written: the caller's account. (A 401, 403 or a
        // gateway's answer, rightly given, ran no handler: nothing to read.)
        if (shop && !token.forbidden && target.kind !== 'no-route') await expectTables(where, shop);

        // The key sent again: the first 202 byte for byte, or 409 for another body; nothing started either way.
        const first = reason === '202' && key !== undefined ? shop!.keys.get(`${spec.route}#${trimOws(key)}`) : undefined;
        if (again === 'none' || !first) return;
        const { id, ...value } = JSON.parse(first.request) as { id: number } & Record<string, unknown>;
        const body = spec.again(value, again === 'same');
        const retry = await sendTo(api, core, {
          method: 'POST',
          path: `/v1.0/codegen/${id}/${spec.route}`,
          headers: [...token.headers.filter((_, i, all) => all[i - (i % 2)] !== 'Content-Type'), 'Content-Type', 'application/json'],
          body: JSON.stringify(body),
        });
        const retryWhere = `again (${again}) ${JSON.stringify(body)} → ${retry.status} ${retry.text.slice(0, 300)} (first: ${first.text})`;
        expect(retry.status, retryWhere).toBe(again === 'same' ? 202 : 409);
        if (again === 'same') {
          expect(retry.text, retryWhere).toBe(first.text);
          expect(retry.headers['idempotent-replayed'], retryWhere).toBe('true');
        } else expectClientError(core, retry, 'POST');
        await expectTables(retryWhere, shop!);
      },
    ),
    { numRuns: runs, endOnFailure: true },
  );
  const { owner, stranger } = shopsNow();
  await Promise.all([owner, stranger].map((shop) => expectTables('at the end', shop, true)));
  return `${accepted} started, answers ${JSON.stringify(Object.fromEntries(statuses))}`;
}

// ---------------------------------------------------------------- the properties

describe('fuzzing the bulk routes through the local server', { timeout: 120_000 }, () => {
  it(`POST /v1.0/codegen/{id}/issuance_jobs: ${jobRuns} generated requests, 4xx starting nothing or a 202 starting exactly one job`, async () => {
    let owner = await openShop();
    const stranger = await openShop();
    enter(owner, stranger);
    // One export of the owner's, so that its id is there to be sent as a generator's.
    const exported = await call(api, core, 'POST', `/v1.0/codegen/${owner.active.id}/exports`, { token: owner.account.token });
    expect(exported.status, exported.text).toBe(202);
    owner.exports.set(exported.json.export.id, exported.json.export);
    owner.filters.set(exported.json.export.id, undefined);
    madeExports.push(exported.json.export.id);

    const validJob = fc.record({ count: fc.integer({ min: 1, max: 20 }) });
    const countText = fc.oneof(
      fc.constantFrom('0', '-1', '-0', '0.5', '1.5', '20.0', '1e1', '1000000', '1000001', '1e6', '10001', '1000000.5', '"5"', 'null', 'true', '[5]', '{"n":5}'),
      fc.constantFrom('9007199254740993', '-1000001', '4.0e0', '1E400', '"1000000"', '" 5"'),
      fc.integer({ min: -3, max: 25 }).map(String),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    );
    const extraKey = fc.option(
      fc.tuple(
        fc.constantFrom('code_generator_id', 'redeemed', 'counts', 'Count', '__proto__', 'filter', 'issued', 'status'),
        fc.constantFrom('1', 'null', '{}', 'true'),
      ),
      { nil: undefined },
    );
    const countBodies = fc
      .tuple(countText, extraKey)
      .map(([count, extra]) => Buffer.from(`{${extra ? `${JSON.stringify(extra[0])}:${extra[1]},` : ''}"count":${count}}`));
    let accounts = 2;
    /** The owner's refusals for its 3 running jobs or its quota: after two, the next runs go to a fresh account. */
    let full = 0;

    const outcome = await createProperty(
      {
        route: 'issuance_jobs',
        root: 'issuance_job',
        bodies: bodiesOf(
          validJob,
          'count',
          { arbitrary: countBodies, weight: 2 },
          // Just past the bounds and not an integer, often: the counts a broken check lets through.
          { arbitrary: fc.constantFrom('0', '-1', '1000001', '0.5').map((count) => Buffer.from(`{"count":${count}}`)), weight: 3 },
        ),
        judge: (bytes, contentType) => judgeIssue(bytes, contentType, 1_000_000),
        refusal(shop, generator, { count }) {
          const n = count as number;
          if (generator.status === 'inactive') return { reason: '409 inactive', replayFirst: false };
          if (n > generator.space) return { reason: '409 space', replayFirst: false };
          // The key's replay comes before the account's limits: the first 202 again, whatever runs now.
          const limit = shop.reserved + n > QUOTA ? '409 quota' : shop.running >= MAX_RUNNING_JOBS ? '409 running' : undefined;
          if (limit && shop === owner) full += 1;
          return limit ? { reason: limit, replayFirst: true } : undefined;
        },
        expected: (generator, { count }) => ({ code_generator_id: generator.id, count, issued: 0, status: 'running', error: null, completed_at: null }),
        accept(shop, job, { count }) {
          shop.jobs.set(job.id, job);
          shop.running += 1;
          shop.reserved += count as number;
          madeJobs.push(job.id);
        },
        again: ({ count }, same) => ({ count: same ? count : ((count as number) % 20) + 1 }),
      },
      jobRuns,
      () => ({ owner, stranger }),
      async () => {
        if (!((owner.running === MAX_RUNNING_JOBS || owner.reserved > QUOTA - 5) && full >= 2)) return;
        await expectTables('the owner leaving', owner, true);
        earlierGenerators.push(owner.active.id, owner.numeric.id, owner.inactive.id);
        owner = await openShop();
        enter(owner, stranger);
        accounts += 1;
        full = 0;
      },
    );
    console.log(`fuzz POST issuance_jobs: ${jobRuns} runs in ${accounts} accounts, ${outcome}`);
  });

  it(`POST /v1.0/codegen/{id}/exports: ${numRuns} generated requests, 4xx starting nothing or a 202 starting exactly one export`, async () => {
    const owner = await openShop();
    const stranger = await openShop();
    enter(owner, stranger);
    // A job under a key the property sends too: keys are kept per route.
    const job = await call(api, core, 'POST', `/v1.0/codegen/${owner.active.id}/issuance_jobs`, {
      token: owner.account.token,
      body: { count: 1 },
      headers: { 'Idempotency-Key': 'key-1' },
    });
    expect(job.status, job.text).toBe(202);
    owner.jobs.set(job.json.issuance_job.id, job.json.issuance_job);
    owner.running += 1;
    owner.reserved += 1;
    madeJobs.push(job.json.issuance_job.id);

    const validExport = fc.oneof(fc.constant({}), fc.record({ redeemed: fc.boolean() }));
    const filterBodies = fc
      .tuple(
        fc.oneof(
          fc.constantFrom('true', 'false', 'null', '"true"', '"false"', '1', '0', '[]', '{}', '[true]', '"redeemed"', '"yes"'),
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        ),
        fc.option(fc.constantFrom('filter', 'status', 'Redeemed', 'redeemed ', 'count', 'code_generator_id', '__proto__'), { nil: undefined }),
      )
      .map(([value, extra]) => Buffer.from(`{${extra ? `${JSON.stringify(extra)}:true,` : ''}"redeemed":${value}}`));
    const blankBodies = fc
      .constantFrom('', '', ' ', '\t\r\n', '\ufeff', '\u00a0', '\u2028', '{}', ' {} ', 'null', '[]', '""', '\ufeff{}')
      .map((text) => Buffer.from(text, 'utf8'));

    const outcome = await createProperty(
      {
        route: 'exports',
        root: 'export',
        bodies: bodiesOf(validExport, 'redeemed', { arbitrary: filterBodies, weight: 2 }, { arbitrary: blankBodies, weight: 2 }),
        judge(bytes, contentType, status) {
          const judged = judgeExport(bytes, contentType);
          // Where the contract is silent (white space only, no body under another type), the answer says which reading holds.
          if (judged.kind !== 'either') return judged;
          return status === BODY_STATUS[judged.otherwise.kind] ? judged.otherwise : { kind: 'valid', value: judged.value };
        },
        // An inactive generator's codes can be exported too; exports have no limit of their own.
        refusal: () => undefined,
        expected: (generator) => ({
          code_generator_id: generator.id,
          status: 'running',
          rows: 0,
          error: null,
          completed_at: null,
          download_url: null,
          expires_at: null,
        }),
        accept(shop, made, { redeemed }) {
          shop.exports.set(made.id, made);
          shop.filters.set(made.id, redeemed as boolean | undefined);
          madeExports.push(made.id);
        },
        again: ({ redeemed }, same) => (same ? (redeemed === undefined ? {} : { redeemed }) : { redeemed: redeemed !== true }),
      },
      numRuns,
      () => ({ owner, stranger }),
    );
    console.log(`fuzz POST exports: ${numRuns} runs, ${outcome}`);
  });

  it(`GET /v1.0/issuance_jobs/{id} and /v1.0/exports/{id}: ${numRuns} generated requests, 4xx or the caller's job or export as it is, running or completed`, async () => {
    const owner = await openShop();
    const stranger = await openShop();
    enter(owner, stranger);
    const start = async (shop: Shop, kind: 'job' | 'export', body: object) => {
      const path = `/v1.0/codegen/${shop.active.id}/${kind === 'job' ? 'issuance_jobs' : 'exports'}`;
      const response = await call(api, core, 'POST', path, { token: shop.account.token, body });
      expect(response.status, response.text).toBe(202);
      const record = response.json[kind === 'job' ? 'issuance_job' : 'export'];
      (kind === 'job' ? shop.jobs : shop.exports).set(record.id, record);
      (kind === 'job' ? madeJobs : madeExports).push(record.id);
      return record.id as number;
    };
    /** Reads until it no longer runs (bounded; a loaded machine's 503 is read again). */
    const ended = async (shop: Shop, kind: 'job' | 'export', id: number) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const read = await call(api, core, 'GET', `/v1.0/${kind === 'job' ? 'issuance_jobs' : 'exports'}/${id}`, { token: shop.account.token });
        const record = read.json?.[kind === 'job' ? 'issuance_job' : 'export'];
        if (read.status === 200 && record.status !== 'running') return record;
        if (read.status !== 200 && read.status !== 503) throw new Error(`${kind} ${id}: ${read.status} ${read.text}`);
        if (Date.now() > deadline) throw new Error(`${kind} ${id} still running after 30 s: ${read.text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // Completed: a job of 3 codes and an export of the owner's (the workers handle its messages).
    released.add(owner.account.accountId);
    const doneJob = await start(owner, 'job', { count: 3 });
    const doneExport = await start(owner, 'export', { redeemed: false });
    const [job, made] = await Promise.all([ended(owner, 'job', doneJob), ended(owner, 'export', doneExport)]);
    released.delete(owner.account.accountId);
    expect(job).toMatchObject({ status: 'completed', issued: 3, error: null });
    expect(made).toMatchObject({ status: 'completed', error: null });
    owner.jobs.set(doneJob, job);
    owner.exports.set(doneExport, made);
    // Running: one of each, the owner's and the stranger's.
    for (const shop of [owner, stranger]) {
      await start(shop, 'job', { count: 2 });
      await start(shop, 'export', {});
    }
    const eventsBefore = await Promise.all([owner, stranger].map((s) => summary(s.account.accountId)));

    const recordChoice = fc.oneof(
      {
        arbitrary: fc.constantFrom('own-job', 'own-export', 'their-job', 'their-export', 'generator', 'encoded').map((kind) => ({ kind, strange: '' })),
        weight: 10,
      },
      { arbitrary: strangeIds.map((strange) => ({ kind: 'strange', strange })), weight: 3 },
    );
    const ifNoneMatch = fc.oneof({ arbitrary: fc.constant('none'), weight: 6 }, { arbitrary: fc.constantFrom('last', 'last', 'other'), weight: 3 });
    /** The weak ETag of each record's last 200, by path. */
    const tags = new Map<string, string>();
    const statuses = new Map<number, number>();
    const ids = (map: Map<number, unknown>) => [...map.keys()];

    await fc.assert(
      fc.asyncProperty(
        headers,
        scopeChoice,
        fc.constantFrom('issuance_jobs', 'exports'),
        recordChoice,
        fc.nat(),
        method('GET'),
        ifNoneMatch,
        async (h, scope, collection, choice, pick, verb, condition) => {
          const ownShop = shopOf(h.token === 'stranger' ? stranger.account : owner.account)!;
          const theirShop = ownShop === owner ? stranger : owner;
          const one = (list: number[]) => list[pick % list.length]!;
          const id = {
            'own-job': () => String(one(ids(ownShop.jobs))),
            'own-export': () => String(one(ids(ownShop.exports))),
            'their-job': () => String(one(ids(theirShop.jobs))),
            'their-export': () => String(one(ids(theirShop.exports))),
            generator: () => String(ownShop.active.id),
            encoded: () => encodedId(one([...ids(ownShop.jobs), ...ids(ownShop.exports)])),
            strange: () => choice.strange,
          }[choice.kind]!();
          const path = `/v1.0/${collection}/${id}`;
          const tag = condition === 'last' ? tags.get(path) : condition === 'other' ? 'W/"0123456789abcdef"' : undefined;
          const token = tokenOf(h, scope, tag === undefined ? [] : ['If-None-Match', tag]);
          const response = await sendTo(api, core, { method: verb, path, headers: token.headers });
          const where = `${verb} ${path} (${h.token}/${scope}, If-None-Match ${tag}) → ${response.status} ${response.text.slice(0, 300)}`;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          const target = idPathTarget(collection, path);
          const routed = target.kind !== 'no-route' && gatewayAnswer(core, verb, path) === undefined;
          expectAnswer(where, verb, path, response, h, routed);
          if (!routed) return void expect(response.status, where).toBe(gatewayAnswer(core, verb, path) ?? 404);
          if (token.forbidden) return void expect(response.status, where).toBe(403);
          if (!token.caller) return void expect(response.status, where).toBe(401);
          if (target.kind === 'bad-id') return void expect(response.status, where).toBe(400);
          const shop = shopOf(token.caller)!;
          const record = (collection === 'issuance_jobs' ? shop.jobs : shop.exports).get((target as { id: number }).id);
          if (!record) return void expect(response.status, where).toBe(404);
          const completedExport = collection === 'exports' && record.status === 'completed';
          // A read of an unchanged record under its last tag is 304; a completed export's URL is signed afresh, so its body may differ.
          if (tag !== undefined && condition === 'last' && !(completedExport && response.status === 200)) {
            expect(response.status, where).toBe(304);
            return;
          }
          expect(response.status, where).toBe(200);
          expect(response.headers.etag, where).toMatch(/^W\/".+"$/);
          tags.set(path, response.headers.etag as string);
          if (collection === 'issuance_jobs') return void expect(response.json, where).toEqual({ issuance_job: record });
          if (!completedExport) return void expect(response.json, where).toEqual({ export: record });
          // Completed: a URL on the local S3, path-style on 127.0.0.1, valid 15 minutes; the file kept 7 days.
          const read = response.json.export;
          expect(read, where).toEqual({ ...record, download_url: read.download_url });
          expect(read.download_url, where).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[^?]+\/[^?]+\?.*X-Amz-Expires=900(&|$)/);
          expect(Date.parse(read.expires_at) - Date.parse(read.completed_at), where).toBe(7 * 86_400_000);
        },
      ),
      { endOnFailure: true },
    );
    // Reads write nothing.
    expect(await Promise.all([owner, stranger].map((s) => summary(s.account.accountId)))).toEqual(eventsBefore);
    console.log(`fuzz GET issuance_jobs and exports: ${numRuns} runs, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
