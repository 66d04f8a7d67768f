import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { newAccount } from '../../support/accounts.ts';
import { call } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { eventsOf } from '../../support/records.ts';

let eventId: number;
let generatorId: number;

const ctx = useLocalApi();

/** Each test starts with an account that has one event: its generator's creation. */
beforeEach(async () => {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 8, store_id: 1 } } }),
  );
  generatorId = created.json.code_generator.id;
  const [first] = await eventsOf(ctx.account.accountId);
  eventId = first!.id;
});

const get = (id: number, token = ctx.account.token, headers: { 'If-None-Match'?: string } = {}) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/events/{id}', { params: { path: { id }, header: headers } }));
const remove = (id: number, token = ctx.account.token) => send(ctx.api, token, ({ core }) => core.DELETE('/v1.0/events/{id}', { params: { path: { id } } }));
/** An id no client would send (not a positive integer): raw. */
const getRaw = (id: string) => call(ctx.api, 'core', 'GET', `/v1.0/events/${id}`, { token: ctx.account.token });
const removeRaw = (id: string) => call(ctx.api, 'core', 'DELETE', `/v1.0/events/${id}`, { token: ctx.account.token });

describe('GET /v1.0/events/{id}', () => {
  it('returns the event: 200 with id, type, resource_id and created_at', async () => {
    const response = await get(eventId);

    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      event: {
        id: eventId,
        type: 'code_generator.created',
        resource_id: String(generatorId),
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(response.headers.get('etag')).toMatch(/^W\/"[0-9a-f]{32}"$/);
  });

  it('answers 304 with no body when If-None-Match holds the current ETag', async () => {
    const first = await get(eventId);
    const etag = first.headers.get('etag')!;

    const strong = await get(eventId, ctx.account.token, { 'If-None-Match': etag.replace(/^W\//, '') });
    const listed = await get(eventId, ctx.account.token, { 'If-None-Match': `"other", ${etag}` });
    const stale = await get(eventId, ctx.account.token, { 'If-None-Match': 'W/"stale"' });

    expect(strong.status).toBe(304);
    expect(strong.text).toBe('');
    expect(strong.headers.get('etag')).toBe(etag);
    // What a 304 carries (RFC 9110 §15.4.5): validators and caching, no representation metadata.
    expect(strong.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(strong.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(strong.headers.get('content-type')).toBeNull();
    expect(strong.headers.get('content-length')).toBeNull();
    expect(listed.status).toBe(304);
    expect(stale.status).toBe(200);
  });

  it.each(['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', '%20'])('400 for id "%s"', async (id) => {
    const response = await getRaw(id);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errors: [{ message: 'id must be a positive integer of at most 9007199254740991 (2^53 - 1)', field: 'id' }] });
  });

  it('404 for an id that does not exist', async () => {
    const response = await get(eventId + 1_000_000);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Event ${eventId + 1_000_000} not found` }] });
  });

  it("404 for another account's event, exactly as if it did not exist", async () => {
    const intruder = await newAccount();
    const response = await get(eventId, intruder.token);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Event ${eventId} not found` }] });
  });

  it('404 for an expired event that the database has not yet removed', async () => {
    const expiredId = eventId + 500_000;
    await documents.send(
      new PutCommand({
        TableName: tableName('events'),
        Item: {
          id: expiredId,
          account_id: ctx.account.accountId,
          type: 'transaction.voided',
          resource_id: 'S1/1',
          created_at: '2026-01-01T00:00:00.000Z',
          expires_at: Math.floor(Date.now() / 1000) - 1,
        },
      }),
    );
    expect((await get(expiredId)).status).toBe(404);
    expect((await remove(expiredId)).status).toBe(404);
  });

  it('401 without a valid token', async () => {
    const response = await call(ctx.api, 'core', 'GET', `/v1.0/events/${eventId}`);
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ errors: [{ message: 'X-Auth-Token header is required' }] });
  });
});

describe('DELETE /v1.0/events/{id}', () => {
  it('acknowledges the event: 200 with a one-byte body, and the event is gone', async () => {
    const response = await remove(eventId);

    expect(response.status).toBe(200);
    expect(response.text).toBe(' ');
    expect(response.headers.get('content-length')).toBe('1');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await get(eventId)).status).toBe(404);
    expect(await eventsOf(ctx.account.accountId)).toEqual([]);
  });

  it('404 for a second DELETE of the same id', async () => {
    await remove(eventId);
    const again = await remove(eventId);
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ errors: [{ message: `Event ${eventId} not found` }] });
  });

  it("404 for another account's event, and deletes nothing", async () => {
    const intruder = await newAccount();
    const response = await remove(eventId, intruder.token);

    expect(response.status).toBe(404);
    expect((await get(eventId)).status).toBe(200);
    expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
  });

  it('lets exactly one of 10 parallel DELETEs of one event succeed', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => remove(eventId)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(404)]);
  });

  it('400 for an id that is not a positive integer, 401 without a token', async () => {
    expect((await removeRaw('x')).status).toBe(400);
    expect((await call(ctx.api, 'core', 'DELETE', `/v1.0/events/${eventId}`)).status).toBe(401);
    expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
  });
});

describe('routes API Gateway does not have', () => {
  it.each([
    ['core', 'GET', '/v1.0/nothing'],
    ['core', 'PUT', '/v1.0/events/1/extra'],
    ['core', 'GET', '/v1.0'],
  ] as const)('404 on the %s host for %s %s, in the host error shape', async (host, method, path) => {
    const response = await call(ctx.api, host, method, path, { token: ctx.account.token });
    expect(response.status).toBe(404);
    const errors = host === 'core' ? response.json.errors : response.json.transaction.errors;
    expect(errors).toEqual([{ message: 'No route for this method and path' }]);
  });

  // The local server names the other host when a path is under its version prefix.
  it.each([
    ['core', 'POST', '/v2.0/voided_transactions', 'POST /v2.0/voided_transactions is served by the pos host'],
    ['core', 'GET', '/v2.0/anything', 'paths under /v2.0 are served by the pos host'],
    ['pos', 'GET', '/v1.0/events/1', 'GET /v1.0/events/{id} is served by the core host'],
    ['pos', 'POST', '/v1.0/events/1', 'paths under /v1.0 are served by the core host'],
  ] as const)('404 on the %s host for %s %s names the other host', async (host, method, path, hint) => {
    const response = await call(ctx.api, host, method, path, { token: ctx.account.token });
    expect(response.status).toBe(404);
    const other = host === 'core' ? 'pos' : 'core';
    const errors = host === 'core' ? response.json.errors : response.json.transaction.errors;
    expect(errors).toEqual([{ message: `No route for this method and path: ${hint} (${ctx.api.urls[other]} here), not the ${host} host` }]);
  });
});
