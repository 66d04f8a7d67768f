import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { hashToken } from '../../../functions/http/tokens.ts';
import { handler as createCodeGenerator } from '../../../functions/codes/create-code-generator.ts';
import { handler as voidTransaction } from '../../../functions/redemption/void-transaction.ts';
import { routes } from '../../../functions/routes.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call } from '../../support/http.ts';
import { invoke } from '../../support/invoke.ts';
import { startTestApi } from '../../support/local-api.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../../support/records.ts';
import { expectClientError, expectStandardHeaders, sendTo } from '../support.ts';

let api: LocalApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const generator = (storeId = 1) => ({ code_generator: { generation_type: 'tillgate', code_length: 8, store_id: storeId } });
const concrete = (path: string) => path.replace('{id}', '1');

describe('tokens', () => {
  it('are stored only as their SHA-256: no item of the api-keys table holds the token', async () => {
    const account = await newAccount();
    const { Item } = await documents.send(new GetCommand({ TableName: tableName('apiKeys'), Key: { token_hash: hashToken(account.token) } }));
    expect(Item).toMatchObject({ token_hash: hashToken(account.token), account_id: account.accountId });
    expect(hashToken(account.token)).toMatch(/^[0-9a-f]{64}$/);

    const { Items = [] } = await documents.send(new ScanCommand({ TableName: tableName('apiKeys') }));
    const stored = JSON.stringify(Items);
    expect(stored).not.toContain(account.token);
    expect(stored).not.toContain(account.token.slice(3));
    expect(Items.some((item) => /tg_[A-Za-z0-9_-]{43}/.test(JSON.stringify(item)))).toBe(false);
  });

  it('are at least 256 bits of randomness: tg_ and 43 base64url characters, all different', async () => {
    const accounts = await Promise.all([newAccount(), newAccount(), newAccount()]);
    for (const { token } of accounts) expect(token).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(new Set(accounts.map((a) => a.token)).size).toBe(3);
  });

  it('are looked up by hash only: a stored hash, or a look-alike of a token, does not authenticate', async () => {
    const account = await newAccount();
    const lookAlikes = [
      hashToken(account.token),
      account.token.toUpperCase(),
      `${account.token}x`,
      account.token.slice(0, -1),
      `${account.token}A`,
      `tg_${'A'.repeat(43)}`,
      "tg_' OR '1'='1",
      'tg_{"$ne":null}',
    ];
    for (const token of lookAlikes) {
      const response = await call(api, 'core', 'GET', '/v1.0/events/1', { token });
      expect(response.status, token).toBe(401);
      // Well-formed look-alikes are unknown; the rest are not even of a token's form.
      const message = /^tg_[A-Za-z0-9_-]{43}$/.test(token)
        ? 'X-Auth-Token is not a known token; check it, or ask the operator for a token'
        : 'X-Auth-Token is malformed: a token is tg_ followed by 43 characters; check that it was copied whole';
      expect(response.json).toEqual({ errors: [{ message }] });
    }
  });
});

describe('tenant isolation', () => {
  it("every route with an id answers another account's record with 404, exactly as an absent one, and changes nothing", async () => {
    const [owner, intruder] = await Promise.all([newAccount(), newAccount()]);
    const created = await call(api, 'core', 'POST', '/v1.0/codegen', { token: owner.token, body: generator() });
    const generatorId: number = created.json.code_generator.id;
    const issued = await call(api, 'core', 'POST', `/v1.0/codegen/${generatorId}/codes`, { token: owner.token, body: { count: 1 } });
    const [code] = issued.json.codes as string[];
    const endpoint = await call(api, 'core', 'POST', '/v1.0/webhook_endpoints', {
      token: owner.token,
      body: { webhook_endpoint: { url: 'https://hooks.example.com/owner' } },
    });
    const endpointId: number = endpoint.json.webhook_endpoint.id;
    // No exports queue in this file: the export is recorded (running) and never written, enough to be read.
    const exported = await call(api, 'core', 'POST', `/v1.0/codegen/${generatorId}/exports`, { token: owner.token, body: {} });
    const exportId: number = exported.json.export.id;
    // Nor an issuance jobs queue: the job is recorded (running) and never run, enough to be read.
    const job = await call(api, 'core', 'POST', `/v1.0/codegen/${generatorId}/issuance_jobs`, { token: owner.token, body: { count: 1 } });
    const jobId: number = job.json.issuance_job.id;
    const before = await Promise.all([eventsOf(owner.accountId), codeGeneratorsOf(owner.accountId)]);
    const ownerEndpoint = await call(api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpointId}`, { token: owner.token });
    const idOf = (path: string) =>
      path.startsWith('/v1.0/events')
        ? before[0][0]!.id
        : path.startsWith('/v1.0/webhook_endpoints')
          ? endpointId
          : path.startsWith('/v1.0/exports')
            ? exportId
            : path.startsWith('/v1.0/issuance_jobs')
              ? jobId
              : generatorId;
    const bodyOf = (operationId: string) =>
      operationId === 'updateCodeGenerator'
        ? { code_generator: { status: 'inactive' } }
        : operationId === 'issueCodes' || operationId === 'createIssuanceJob'
          ? { count: 1 }
          : operationId === 'updateWebhookEndpoint'
            ? { webhook_endpoint: { status: 'disabled' } }
            : undefined;

    const withId = routes.filter((r) => r.path.includes('{id}'));
    expect(withId.map((r) => r.operationId).sort()).toEqual([
      'createExport',
      'createIssuanceJob',
      'deleteEvent',
      'deleteWebhookEndpoint',
      'getCode',
      'getCodeGenerator',
      'getEvent',
      'getExport',
      'getIssuanceJob',
      'getWebhookEndpoint',
      'issueCodes',
      'listCodeRedemptions',
      'listCodes',
      'listWebhookDeliveries',
      'retryWebhookDelivery',
      'rotateWebhookSecret',
      'updateCodeGenerator',
      'updateWebhookEndpoint',
    ]);
    for (const route of withId) {
      const id = idOf(route.path);
      const absent = id + 10_000_000;
      const path = (target: number) => route.path.replace('{id}', String(target)).replace('{code}', code!).replace('{event_id}', String(before[0][0]!.id));
      const body = bodyOf(route.operationId);
      const theirs = await call(api, route.host, route.method, path(id), { token: intruder.token, body });
      const none = await call(api, route.host, route.method, path(absent), { token: intruder.token, body });
      expect(theirs.status, route.operationId).toBe(404);
      expect(none.status, route.operationId).toBe(404);
      expect(theirs.text, route.operationId).toBe(none.text.replaceAll(String(absent), String(id)));
      expect([...theirs.headers.keys()].sort()).toEqual([...none.headers.keys()].sort());
    }
    expect(await Promise.all([eventsOf(owner.accountId), codeGeneratorsOf(owner.accountId)])).toEqual(before);
    const after = await call(api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpointId}`, { token: owner.token });
    expect(after.text).toBe(ownerEndpoint.text);
  });

  it("another account's writes never touch the first's: same void ids and the same Idempotency-Key make records of their own", async () => {
    const [owner, other] = await Promise.all([newAccount(), newAccount()]);
    const voidBody = { transaction: { site_id: 'shared-site', pos_transaction_id: 'shared-1' } };
    const first = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token: owner.token, body: voidBody });
    const keyed = await call(api, 'core', 'POST', '/v1.0/codegen', { token: owner.token, body: generator(1), headers: { 'Idempotency-Key': 'shared-key' } });
    const before = await Promise.all([voidsOf(owner.accountId), codeGeneratorsOf(owner.accountId), eventsOf(owner.accountId)]);

    const otherVoid = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token: other.token, body: voidBody });
    const otherSameKey = await call(api, 'core', 'POST', '/v1.0/codegen', {
      token: other.token,
      body: generator(1),
      headers: { 'Idempotency-Key': 'shared-key' },
    });
    const otherDifferentBody = await call(api, 'core', 'POST', '/v1.0/codegen', {
      token: other.token,
      body: generator(2),
      headers: { 'Idempotency-Key': 'shared-key' },
    });

    expect(otherVoid.status).toBe(200);
    expect(otherVoid.headers.get('idempotent-replayed')).toBeNull();
    expect(otherVoid.text).not.toBe(first.text);
    expect(otherSameKey.status).toBe(201);
    expect(otherSameKey.headers.get('idempotent-replayed')).toBeNull();
    expect(otherSameKey.json.code_generator).toMatchObject({ account_id: other.accountId });
    expect(otherSameKey.json.code_generator.id).not.toBe(keyed.json.code_generator.id);
    expect(otherDifferentBody.status).toBe(409);
    expect(await Promise.all([voidsOf(owner.accountId), codeGeneratorsOf(owner.accountId), eventsOf(owner.accountId)])).toEqual(before);
    expect(await voidsOf(other.accountId)).toHaveLength(1);
    expect(await codeGeneratorsOf(other.accountId)).toHaveLength(1);
  });
});

describe('request bodies over the limit', () => {
  const posts = routes.filter((r) => r.method === 'POST');

  it.each(posts.map((r) => [r.operationId, r] as const))('%s: 16 KiB + 1 byte of invalid JSON is a 413, not a 400', async (_, route) => {
    const account = await newAccount();
    const body = `{${'x'.repeat(16 * 1024)}`;
    expect(Buffer.byteLength(body)).toBe(16 * 1024 + 1);
    // Path parameters filled with well-formed values: the size is checked before anything is read.
    const path = route.path.replace('{id}', '1').replace('{event_id}', '1');
    const response = await sendTo(api, route.host, {
      method: 'POST',
      path,
      headers: ['X-Auth-Token', account.token, 'Content-Type', 'application/json'],
      body,
    });
    expect(response.status).toBe(413);
    expectClientError(route.host, response);
    const message = route.host === 'core' ? response.json.errors[0].message : response.json.transaction.errors[0].message;
    expect(message).toBe('Request body exceeds 16384 bytes');
  });

  it('counts bytes, not characters: 16 KiB of characters that are 2 bytes each in UTF-8 is over the limit', async () => {
    const account = await newAccount();
    const body = JSON.stringify({ transaction: { site_id: 's', pos_transaction_id: 'p', note: 'é'.repeat(8200) } });
    expect(body.length).toBeLessThan(16 * 1024);
    const response = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token: account.token, body });
    expect(response.status).toBe(413);
  });

  it.each([
    ['createCodeGenerator', createCodeGenerator, '/v1.0/codegen'],
    ['voidTransaction', voidTransaction, '/v2.0/voided_transactions'],
  ] as const)('%s: an oversized body is refused before it is parsed (JSON.parse never sees it)', async (operationId, handler, path) => {
    const account = await newAccount();
    const root = operationId === 'voidTransaction' ? 'transaction' : 'code_generator';
    const body = JSON.stringify({ [root]: { padding: 'x'.repeat(17_000) } });
    const parse = vi.spyOn(JSON, 'parse');

    const response = await invoke(handler, operationId, path, { headers: { 'X-Auth-Token': account.token }, body });

    expect(response.statusCode).toBe(413);
    expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > 16 * 1024)).toEqual([]);
  });
});

describe('response headers', () => {
  it('every route, and the gateway, answers with nosniff and the JSON type, and without Server or X-Powered-By banners', async () => {
    const account = await newAccount();
    const created = await call(api, 'core', 'POST', '/v1.0/codegen', { token: account.token, body: generator() });
    expect(created.status).toBe(201);
    const [event] = await eventsOf(account.accountId);
    const requests = [
      ...routes.flatMap((route) => {
        const path = route.path.replace('{id}', String(event!.id));
        const body =
          route.method === 'POST'
            ? route.host === 'pos'
              ? '{"transaction":{"site_id":"a","pos_transaction_id":"b"}}'
              : JSON.stringify(generator())
            : undefined;
        return [
          { host: route.host, method: route.method, path, headers: ['X-Auth-Token', account.token, 'Content-Type', 'application/json'], body },
          { host: route.host, method: route.method, path: concrete(route.path), headers: [], body },
          { host: route.host, method: route.method, path, headers: ['X-Auth-Token', account.token, 'Content-Type', 'text/plain'], body: '{' },
        ];
      }),
      { host: 'core' as const, method: 'GET', path: '/', headers: [], body: undefined },
      { host: 'pos' as const, method: 'PUT', path: '/v2.0/voided_transactions', headers: [], body: undefined },
      { host: 'core' as const, method: 'GET', path: '/v1.0/events/abc', headers: ['X-Auth-Token', account.token], body: undefined },
    ];
    const statuses = new Set<number>();
    for (const r of requests) {
      const response = await sendTo(api, r.host, { method: r.method, path: r.path, headers: r.headers, body: r.body });
      statuses.add(response.status);
      expectStandardHeaders(response);
      if (response.status >= 400) expect(response.json).toBeDefined();
    }
    // The walk met successes and several kinds of errors.
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 201, 400, 401, 404]));
  });
});
