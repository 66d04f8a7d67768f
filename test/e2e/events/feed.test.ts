import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC, UUID, type HttpResponse } from '../../support/http.ts';
import { send, type CoreQuery } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { eventsOf } from '../../support/records.ts';

/** The events feed, GET /v1.0/events: the account's live events, a queue drained with DELETE. */
const ctx = useLocalApi();

interface FeedEvent {
  id: number;
  type: string;
  resource_id: string;
  created_at: string;
}

const READ_CACHE = 'max-age=0, private, must-revalidate';
const feed = (query: CoreQuery<'listEvents'> = {}, token = ctx.account.token, headers: { 'If-None-Match'?: string } = {}) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/events', { params: { query, header: headers } }));
/** A query no client would send (out of range, mistyped, unknown, repeated): raw. */
const feedRaw = (query: string) => call(ctx.api, 'core', 'GET', `/v1.0/events${query}`, { token: ctx.account.token });
const acknowledge = (id: number, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.DELETE('/v1.0/events/{id}', { params: { path: { id } } }));

const createGenerator = async (storeId = 1, token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 8, store_id: storeId } } }),
  );
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator.id as number;
};
const createGenerators = async (count: number) => {
  for (let start = 0; start < count; start += 10) await Promise.all(Array.from({ length: Math.min(10, count - start) }, () => createGenerator()));
};

/** Every page of the feed, checked to be full except the last. */
async function drainPages(limit: number, token = ctx.account.token) {
  const pages: HttpResponse[] = [];
  let cursor: string | null = null;
  do {
    const page = await feed({ limit, ...(cursor ? { cursor } : {}) }, token);
    expect(page.status, page.text).toBe(200);
    pages.push(page);
    cursor = page.json.next_cursor;
    if (cursor !== null) expect(page.json.events).toHaveLength(limit);
  } while (cursor !== null);
  return pages;
}
const allEvents = async (token = ctx.account.token): Promise<FeedEvent[]> => (await drainPages(1000, token)).flatMap((p) => p.json.events);

describe('GET /v1.0/events', () => {
  it('answers an empty feed for an account without events', async () => {
    const response = await feed();
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ events: [], next_cursor: null });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe(READ_CACHE);
    expect(response.headers.get('etag')).toMatch(/^W\/"[0-9a-f]{32}"$/);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('lists the events of creates, voids, patches and issuances, each as GET /v1.0/events/{id} shows it', async () => {
    const generatorId = await createGenerator();
    const voided = await send(ctx.api, ctx.account.token, ({ pos }) =>
      pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'S-7', pos_transaction_id: 'T-99' } } }),
    );
    expect(voided.status).toBe(200);
    const patched = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.PATCH('/v1.0/codegen/{id}', { params: { path: { id: generatorId } }, body: { code_generator: { description: 'new' } } }),
    );
    expect(patched.status).toBe(200);
    const issued = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generatorId } }, body: { count: 2 } }),
    );
    expect(issued.status).toBe(201);

    const events = await allEvents();

    expect(events.map(({ type, resource_id }) => ({ type, resource_id })).sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'code_generator.created', resource_id: String(generatorId) },
      { type: 'code_generator.updated', resource_id: String(generatorId) },
      { type: 'codes.issued', resource_id: String(generatorId) },
      { type: 'transaction.voided', resource_id: 'S-7/T-99' },
    ]);
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
    expect(events.find((e) => e.type === 'transaction.voided')!.id).toBe(voided.json.transaction.display_messages[0].message_content.event_id);
    expect(events.find((e) => e.type === 'codes.issued')!.created_at).toBe(issued.json.issued_at);
    expect(events.find((e) => e.type === 'code_generator.updated')!.created_at).toBe(patched.json.code_generator.updated_at);
    for (const event of events) {
      expect(Object.keys(event)).toEqual(['id', 'type', 'resource_id', 'created_at']);
      expect(event.created_at).toMatch(RFC3339_MILLIS_UTC);
      expect((await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events/{id}', { params: { path: { id: event.id } } }))).json).toEqual({
        event,
      });
    }
  });

  it('pages in ascending id order: full pages, next_cursor null on the last', async () => {
    await createGenerators(7);
    const stored = (await eventsOf(ctx.account.accountId)).map((e) => e.id).sort((a, b) => a - b);

    const pages = await drainPages(3);

    expect(pages.map((p) => p.json.events.length)).toEqual([3, 3, 1]);
    expect(pages.at(-1)!.json.next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.json.events.map((e: FeedEvent) => e.id))).toEqual(stored);
  });

  it('returns 100 events a page when no limit is given', async () => {
    await createGenerators(101);
    const stored = (await eventsOf(ctx.account.accountId)).map((e) => e.id).sort((a, b) => a - b);

    const first = await feed();
    expect(first.json.events).toHaveLength(100);
    expect(first.json.events.map((e: FeedEvent) => e.id)).toEqual(stored.slice(0, 100));
    const second = await feed({ cursor: first.json.next_cursor });
    expect(second.json.events.map((e: FeedEvent) => e.id)).toEqual([stored[100]]);
    expect(second.json.next_cursor).toBeNull();
  });

  it('answers 304 for a matching If-None-Match, 200 once the feed changed', async () => {
    await createGenerator();
    const first = await feed();
    const etag = first.headers.get('etag')!;
    expect((await feed({}, ctx.account.token, { 'If-None-Match': etag })).status).toBe(304);
    await createGenerator();
    expect((await feed({}, ctx.account.token, { 'If-None-Match': etag })).status).toBe(200);
  });

  it('is a queue: acknowledged events leave the feed, the others stay', async () => {
    await createGenerators(4);
    const [a, b, c, d] = await allEvents();

    expect((await acknowledge(a!.id)).status).toBe(200);
    expect((await acknowledge(c!.id)).status).toBe(200);

    expect(await allEvents()).toEqual([b, d]);
    expect((await acknowledge(b!.id)).status).toBe(200);
    expect((await acknowledge(d!.id)).status).toBe(200);
    expect((await feed()).json).toEqual({ events: [], next_cursor: null });
  });

  it('a cursor still works after the events it pointed past are acknowledged', async () => {
    await createGenerators(5);
    const first = await feed({ limit: 2 });
    for (const event of first.json.events) await acknowledge(event.id);

    const rest = await feed({ limit: 2, cursor: first.json.next_cursor });

    expect(rest.status).toBe(200);
    expect(rest.json.events).toHaveLength(2);
    expect(rest.json.events[0].id).toBeGreaterThan(first.json.events[1].id);
  });

  it('leaves out expired events that the database has not yet removed, and still fills its pages', async () => {
    await createGenerators(3);
    const live = (await eventsOf(ctx.account.accountId)).map((e) => e.id).sort((a, b) => a - b);
    // Expired events between and around the live ones.
    for (const id of [live[0]! + 1_000_000, live[0]! - 1, live[1]! + 1, live[2]! + 1]) {
      await documents.send(
        new PutCommand({
          TableName: tableName('events'),
          Item: {
            account_id: ctx.account.accountId,
            id,
            type: 'transaction.voided',
            resource_id: 'S/old',
            created_at: '2026-01-01T00:00:00.000Z',
            expires_at: Math.floor(Date.now() / 1000) - 1,
          },
        }),
      );
    }

    const pages = await drainPages(2);

    expect(pages.map((p) => p.json.events.length)).toEqual([2, 1]);
    expect(pages.flatMap((p) => p.json.events.map((e: FeedEvent) => e.id))).toEqual(live);
  });

  it('never shows the events of another account', async () => {
    await createGenerators(2);
    const other = await newAccount();
    const theirs = await createGenerator(1, other.token);

    const mine = await allEvents();
    const their = await allEvents(other.token);

    expect(mine).toHaveLength(2);
    expect(their.map((e) => e.resource_id)).toEqual([String(theirs)]);
    expect(mine.map((e) => e.id)).not.toContain(their[0]!.id);
  });

  describe('400 naming the parameter', () => {
    const malformed = 'cursor is malformed: pass the next_cursor of the previous page as it is';
    it.each([
      ['?limit=0', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=1001', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=ten', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=01', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?cursor=', 'cursor must not be empty', 'cursor'],
      ['?cursor=!!!', malformed, 'cursor'],
      [`?cursor=${Buffer.from('[]').toString('base64url')}`, malformed, 'cursor'],
      [`?cursor=${Buffer.from('{"v":1,"a":1,"f":"events","after":-5}').toString('base64url')}`, malformed, 'cursor'],
      [`?cursor=${Buffer.from('{"v":1,"a":1,"f":"events","after":"7"}').toString('base64url')}`, malformed, 'cursor'],
      ['?store_id=1', 'store_id is not a known query parameter', 'store_id'],
      ['?after=5', 'after is not a known query parameter', 'after'],
      ['?limit=5&limit=5', 'limit must be given once', 'limit'],
      ['?cursor=a&cursor=b', 'cursor must be given once', 'cursor'],
    ])('%s', async (query, message, field) => {
      const response = await feedRaw(query);
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errors: [{ message, field }] });
    });

    it('for a cursor of another account, whatever that account holds', async () => {
      await createGenerators(3);
      const cursor = (await feed({ limit: 1 })).json.next_cursor;
      const intruder = await newAccount();
      const empty = await feed({ limit: 1, cursor }, intruder.token);
      await createGenerator(1, intruder.token);
      const withEvents = await feed({ limit: 1, cursor }, intruder.token);

      for (const response of [empty, withEvents]) {
        expect(response.status).toBe(400);
        expect(response.json).toEqual({ errors: [{ message: 'cursor belongs to another account or to other filters', field: 'cursor' }] });
      }
    });

    it('for a cursor of the generator list', async () => {
      await createGenerators(2);
      const cursor = (await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen', { params: { query: { limit: 1 } } }))).json.next_cursor;
      const response = await feed({ cursor });
      expect(response.status).toBe(400);
      expect(response.json.errors[0].field).toBe('cursor');
    });
  });

  it('401 without a token, and the account is not revealed', async () => {
    const response = await call(ctx.api, 'core', 'GET', '/v1.0/events');
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ errors: [{ message: 'X-Auth-Token header is required' }] });
  });
});
