import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC, UUID, type HttpResponse } from '../../support/http.ts';
import { winterPromotion, GENERATOR_FIELDS } from '../../support/fixtures.ts';
import { send, type CoreBody, type CoreQuery } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeGeneratorsOf, eventsOf } from '../../support/records.ts';

/**
 * Reading, listing and changing code generators over HTTP: GET /v1.0/codegen,
 * GET /v1.0/codegen/{id} and PATCH /v1.0/codegen/{id}.
 */
const ctx = useLocalApi();

const winter = winterPromotion;

const READ_CACHE = 'max-age=0, private, must-revalidate';
const WEAK_ETAG = /^W\/"[0-9a-f]{32}"$/;
/** A generator's tag: the hash of the rest, then times_redeemed (functions/http/etags.ts); none redeemed here. */
const GENERATOR_ETAG = /^W\/"[0-9a-f]{32}\.0"$/;
const badId = { errors: [{ message: 'id must be a positive integer of at most 9007199254740991 (2^53 - 1)', field: 'id' }] };
const unauthorized = { errors: [{ message: 'X-Auth-Token header is required' }] };
const unknownToken = { errors: [{ message: 'X-Auth-Token is not a known token; check it, or ask the operator for a token' }] };

const create = async (fields: Partial<typeof winter> = {}, token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: { ...winter, ...fields } } }));
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator as typeof winter & { id: number; account_id: number; created_at: string; updated_at: string };
};
const createMany = async (count: number, fields: (i: number) => Partial<typeof winter> = () => ({})) => {
  const made = [];
  // A few at a time: ids are unique but not in commit order, so sort afterwards.
  for (let start = 0; start < count; start += 10) {
    made.push(...(await Promise.all(Array.from({ length: Math.min(10, count - start) }, (_, i) => create(fields(start + i))))));
  }
  return made.sort((a, b) => a.id - b.id);
};
const get = (id: number, headers: { 'If-None-Match'?: string; 'X-Request-Id'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen/{id}', { params: { path: { id }, header: headers } }));
const list = (query: CoreQuery<'listCodeGenerators'> = {}, token = ctx.account.token, headers: { 'If-None-Match'?: string } = {}) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen', { params: { query, header: headers } }));
const patch = (id: number, body: CoreBody<'updateCodeGenerator'>, headers: { 'If-Match'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.PATCH('/v1.0/codegen/{id}', { params: { path: { id }, header: headers }, body }));
/** Requests no client would send (a bad path id or query, a body the schema refuses, not JSON): raw. */
const getRaw = (id: string) => call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}`, { token: ctx.account.token });
const listRaw = (query: string) => call(ctx.api, 'core', 'GET', `/v1.0/codegen${query}`, { token: ctx.account.token });
const patchRaw = (id: number | string, body: unknown, headers: Record<string, string> = {}) =>
  call(ctx.api, 'core', 'PATCH', `/v1.0/codegen/${id}`, { token: ctx.account.token, body, headers });

/** Every page of a list, following next_cursor; each page checked to be full except the last. */
async function allPages(query: CoreQuery<'listCodeGenerators'>, limit: number, token = ctx.account.token) {
  const pages: HttpResponse[] = [];
  let cursor: string | null = null;
  do {
    const page = await list({ ...query, limit, ...(cursor ? { cursor } : {}) }, token);
    expect(page.status, page.text).toBe(200);
    pages.push(page);
    cursor = page.json.next_cursor;
    if (cursor !== null) expect(page.json.code_generators).toHaveLength(limit);
  } while (cursor !== null);
  return pages;
}

/** What a 4xx must leave unchanged: the generator as read through the API, and the events. */
async function snapshot(id: number) {
  const read = await get(id);
  return { body: read.text, etag: read.headers.get('etag'), events: (await eventsOf(ctx.account.accountId)).length };
}

describe('GET /v1.0/codegen/{id}', () => {
  it('returns the generator: 200, the eleven fields, the terms and the limits as created, read headers', async () => {
    const created = await create();

    const response = await get(created.id, { 'X-Request-Id': 'backoffice-1' });

    expect(response.status).toBe(200);
    expect(response.json).toEqual({ code_generator: created });
    expect(Object.keys(response.json.code_generator)).toEqual(GENERATOR_FIELDS);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe(READ_CACHE);
    expect(response.headers.get('etag')).toMatch(GENERATOR_ETAG);
    expect(response.headers.get('x-request-id')).toBe('backoffice-1');
    expect(response.headers.get('x-runtime')).toMatch(/^\d+\.\d{6}$/);
    expect((await get(created.id)).headers.get('x-request-id')).toMatch(UUID);
  });

  it('answers 304 with no body for a matching If-None-Match, 200 for a stale one', async () => {
    const created = await create();
    const etag = (await get(created.id)).headers.get('etag')!;

    const weak = await get(created.id, { 'If-None-Match': etag });
    const strong = await get(created.id, { 'If-None-Match': etag.replace(/^W\//, '') });
    const stale = await get(created.id, { 'If-None-Match': 'W/"00000000000000000000000000000000"' });

    for (const response of [weak, strong]) {
      expect(response.status).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.get('etag')).toBe(etag);
      expect(response.headers.get('cache-control')).toBe(READ_CACHE);
    }
    expect(stale.status).toBe(200);
    expect(stale.json.code_generator.id).toBe(created.id);
  });

  it.each(['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', '%20'])('400 for the path id "%s"', async (id) => {
    const response = await getRaw(id);
    expect(response.status).toBe(400);
    expect(response.json).toEqual(badId);
  });

  it('404 for an id that does not exist', async () => {
    const created = await create();
    const response = await get(created.id + 1_000_000);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Code generator ${created.id + 1_000_000} not found` }] });
  });

  it("404 for another account's generator, exactly as for a missing one", async () => {
    const created = await create();
    const intruder = await newAccount();
    const response = await get(created.id, {}, intruder.token);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Code generator ${created.id} not found` }] });
  });

  it('401 without a token or with an unknown one', async () => {
    const created = await create();
    const missing = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${created.id}`);
    const unknown = await get(created.id, {}, `tg_${'A'.repeat(43)}`);
    expect([missing.status, unknown.status]).toEqual([401, 401]);
    expect(missing.json).toEqual(unauthorized);
    expect(unknown.json).toEqual(unknownToken);
  });
});

describe('GET /v1.0/codegen', () => {
  it('answers an empty list with next_cursor null for an account without generators', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ code_generators: [], next_cursor: null });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe(READ_CACHE);
    expect(response.headers.get('etag')).toMatch(WEAK_ETAG);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('pages through every generator in ascending id order: full pages, next_cursor null on the last', async () => {
    const made = await createMany(7);

    const pages = await allPages({}, 3);

    expect(pages.map((p) => p.json.code_generators.length)).toEqual([3, 3, 1]);
    expect(pages.at(-1)!.json.next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.json.code_generators)).toEqual(made);
  });

  it('has no empty last page when the items fill the pages exactly', async () => {
    const made = await createMany(4);
    const pages = await allPages({}, 2);
    expect(pages.map((p) => p.json.code_generators.length)).toEqual([2, 2]);
    expect(pages.flatMap((p) => p.json.code_generators.map((g: { id: number }) => g.id))).toEqual(made.map((g) => g.id));
  });

  it('answers 304 to If-None-Match with the ETag of the same page', async () => {
    await createMany(2);
    const first = await list({ limit: 1 });
    const again = await list({ limit: 1 }, ctx.account.token, { 'If-None-Match': first.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('returns 100 generators a page when no limit is given', async () => {
    const made = await createMany(101);

    const first = await list();
    expect(first.status).toBe(200);
    expect(first.json.code_generators).toHaveLength(100);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await list({ cursor: first.json.next_cursor });
    expect(second.json).toEqual({ code_generators: [made[100]], next_cursor: null });
    expect(first.json.code_generators).toEqual(made.slice(0, 100));
  });

  it('filters by store_id and still returns full pages in ascending id order', async () => {
    // Interleaved stores, so a filter applied after reading would leave pages short.
    const made = await createMany(12, (i) => ({ store_id: 1 + (i % 3) }));
    const ofStore2 = made.filter((g) => g.store_id === 2);

    const pages = await allPages({ store_id: 2 }, 3);

    expect(pages.map((p) => p.json.code_generators.length)).toEqual([3, 1]);
    expect(pages.flatMap((p) => p.json.code_generators)).toEqual(ofStore2);
    expect((await list({ store_id: 9 })).json).toEqual({ code_generators: [], next_cursor: null });
  });

  it('never lists the generators of another account', async () => {
    const mine = await createMany(3);
    const other = await newAccount();
    const theirs = await create({}, other.token);

    const my = (await list()).json.code_generators.map((g: { id: number }) => g.id);
    const their = (await list({}, other.token)).json.code_generators.map((g: { id: number }) => g.id);
    const theirStore = (await list({ store_id: winter.store_id }, other.token)).json.code_generators.map((g: { id: number }) => g.id);

    expect(my).toEqual(mine.map((g) => g.id));
    expect(their).toEqual([theirs.id]);
    expect(theirStore).toEqual([theirs.id]);
  });

  describe('400 naming the parameter', () => {
    it.each([
      ['?limit=0', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=1001', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=abc', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=-1', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=1.5', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?limit=', 'limit must be an integer from 1 to 1000', 'limit'],
      ['?store_id=0', 'store_id must be a positive integer of at most 9007199254740991 (2^53 - 1)', 'store_id'],
      ['?store_id=x', 'store_id must be a positive integer of at most 9007199254740991 (2^53 - 1)', 'store_id'],
      ['?store_id=99999999999999999999', 'store_id must be a positive integer of at most 9007199254740991 (2^53 - 1)', 'store_id'],
      ['?cursor=abc', 'cursor is malformed: pass the next_cursor of the previous page as it is', 'cursor'],
      [
        `?cursor=${Buffer.from('{"v":2,"a":1,"f":"code_generators","after":1}').toString('base64url')}`,
        'cursor is malformed: pass the next_cursor of the previous page as it is',
        'cursor',
      ],
      [`?cursor=${'A'.repeat(513)}`, 'cursor must be at most 512 characters', 'cursor'],
      ['?limt=5', 'limt is not a known query parameter', 'limt'],
      ['?limit=1&limit=2', 'limit must be given once', 'limit'],
      ['?store_id=1&store_id=1', 'store_id must be given once', 'store_id'],
    ])('%s', async (query, message, field) => {
      const response = await listRaw(query);
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errors: [{ message, field }] });
    });

    it('for a cursor of another account, without revealing its records', async () => {
      await createMany(3);
      const cursor = (await list({ limit: 1 })).json.next_cursor;
      const intruder = await newAccount();
      await create({}, intruder.token);

      const response = await list({ limit: 1, cursor }, intruder.token);

      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errors: [{ message: 'cursor belongs to another account or to other filters', field: 'cursor' }] });
    });

    it('for a cursor of other filters (another store, no store, or the events feed)', async () => {
      await createMany(4, (i) => ({ store_id: 1 + (i % 2) }));
      const ofStore1 = (await list({ store_id: 1, limit: 1 })).json.next_cursor;
      const unfiltered = (await list({ limit: 1 })).json.next_cursor;
      const foreignFilter = { errors: [{ message: 'cursor belongs to another account or to other filters', field: 'cursor' }] };

      expect((await list({ store_id: 2, limit: 1, cursor: ofStore1 })).json).toEqual(foreignFilter);
      expect((await list({ limit: 1, cursor: ofStore1 })).json).toEqual(foreignFilter);
      expect((await list({ store_id: 1, limit: 1, cursor: unfiltered })).json).toEqual(foreignFilter);
      const feed = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events', { params: { query: { limit: 1, cursor: unfiltered } } }));
      expect(feed.status).toBe(400);
      expect(feed.json).toEqual(foreignFilter);
    });
  });

  it('401 without a token', async () => {
    const response = await call(ctx.api, 'core', 'GET', '/v1.0/codegen');
    expect(response.status).toBe(401);
    expect(response.json).toEqual(unauthorized);
  });
});

describe('PATCH /v1.0/codegen/{id}', () => {
  it('changes status and description: 200 with every field, updated_at advanced, one code_generator.updated event', async () => {
    const created = await create();
    const eventsBefore = await eventsOf(ctx.account.accountId);

    const response = await patch(created.id, { code_generator: { status: 'inactive', description: 'Paused for stocktake' } });

    expect(response.status, response.text).toBe(200);
    const body = response.json.code_generator;
    expect(body).toEqual({ ...created, status: 'inactive', description: 'Paused for stocktake', updated_at: expect.stringMatching(RFC3339_MILLIS_UTC) });
    expect(Date.parse(body.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('etag')).toMatch(GENERATOR_ETAG);

    const read = await get(created.id);
    expect(read.json).toEqual({ code_generator: body });
    // The PATCH answer's ETag is the ETag a GET gives: a client can send it back as If-Match.
    expect(read.headers.get('etag')).toBe(response.headers.get('etag'));

    const events = await eventsOf(ctx.account.accountId);
    expect(events).toHaveLength(eventsBefore.length + 1);
    const updated = events.filter((e) => e.type === 'code_generator.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ resource_id: String(created.id), created_at: body.updated_at });
    const feed = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events'));
    expect(feed.json.events).toContainEqual({
      id: updated[0]!.id,
      type: 'code_generator.updated',
      resource_id: String(created.id),
      created_at: body.updated_at,
    });
  });

  it('changes one field and leaves the other', async () => {
    const created = await create();
    const response = await patch(created.id, { code_generator: { description: '' } });
    expect(response.status).toBe(200);
    expect(response.json.code_generator).toMatchObject({ status: 'active', description: '' });
    const again = await patch(created.id, { code_generator: { status: 'inactive' } });
    expect(again.json.code_generator).toMatchObject({ status: 'inactive', description: '' });
    expect((await eventsOf(ctx.account.accountId)).filter((e) => e.type === 'code_generator.updated')).toHaveLength(2);
  });

  it.each([
    ['the same values', { status: 'active' as const, description: 'Winter promotion' }],
    ['no fields', {}],
  ])('answers 200 and writes nothing for a PATCH that changes no value (%s)', async (_, fields) => {
    const created = await create();
    const before = await snapshot(created.id);

    const response = await patch(created.id, { code_generator: fields });

    expect(response.status).toBe(200);
    expect(response.json).toEqual({ code_generator: created });
    expect(response.headers.get('etag')).toBe(before.etag);
    expect(await snapshot(created.id)).toEqual(before);
  });

  it('succeeds with If-Match holding the current ETag, weak or strong', async () => {
    const created = await create();
    const etag = (await get(created.id)).headers.get('etag')!;

    const weak = await patch(created.id, { code_generator: { description: 'weak' } }, { 'If-Match': etag });
    const current = (await get(created.id)).headers.get('etag')!;
    const strong = await patch(created.id, { code_generator: { description: 'strong' } }, { 'If-Match': current.replace(/^W\//, '') });
    const listed = await patch(created.id, { code_generator: { description: 'listed' } }, { 'If-Match': `"nope", ${strong.headers.get('etag')}` });

    expect([weak.status, strong.status, listed.status]).toEqual([200, 200, 200]);
    expect((await get(created.id)).json.code_generator.description).toBe('listed');
  });

  it('412 for a stale If-Match, and changes nothing', async () => {
    const created = await create();
    const staleEtag = (await get(created.id)).headers.get('etag')!;
    await patch(created.id, { code_generator: { description: 'changed by someone else' } });
    const before = await snapshot(created.id);

    const stale = await patch(created.id, { code_generator: { status: 'inactive' } }, { 'If-Match': staleEtag });
    const made_up = await patch(created.id, { code_generator: { status: 'inactive' } }, { 'If-Match': '"00000000000000000000000000000000"' });

    for (const response of [stale, made_up]) {
      expect(response.status).toBe(412);
      expect(response.json).toEqual({ errors: [{ message: 'If-Match does not match the current ETag of this code generator' }] });
    }
    expect(await snapshot(created.id)).toEqual(before);
  });

  describe('422 naming each field, and changing nothing', () => {
    it.each([
      [
        'prefix',
        { prefix: 'NEW-' },
        [
          {
            message:
              'code_generator.prefix cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.prefix',
          },
        ],
      ],
      [
        'code_length',
        { code_length: 9 },
        [
          {
            message:
              'code_generator.code_length cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.code_length',
          },
        ],
      ],
      [
        'store_id',
        { store_id: 42 },
        [
          {
            message:
              'code_generator.store_id cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.store_id',
          },
        ],
      ],
      [
        'generation_type',
        { generation_type: 'numeric' },
        [
          {
            message:
              'code_generator.generation_type cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.generation_type',
          },
        ],
      ],
      [
        'buffer_type',
        { buffer_type: 'default' },
        [
          {
            message:
              'code_generator.buffer_type cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.buffer_type',
          },
        ],
      ],
      ['id', { id: 1 }, [{ message: 'code_generator.id is read-only and cannot be set', field: 'code_generator.id' }]],
      [
        'updated_at',
        { updated_at: '2030-01-01T00:00:00.000Z' },
        [{ message: 'code_generator.updated_at is read-only and cannot be set', field: 'code_generator.updated_at' }],
      ],
      [
        'times_redeemed',
        { times_redeemed: 0 },
        [{ message: 'code_generator.times_redeemed is read-only and cannot be set', field: 'code_generator.times_redeemed' }],
      ],
      ['an unknown key', { colour: 'red' }, [{ message: 'code_generator.colour is not a known field', field: 'code_generator.colour' }]],
      ['a bad status', { status: 'paused' }, [{ message: 'code_generator.status must be one of "active", "inactive"', field: 'code_generator.status' }]],
      [
        'a description too long',
        { description: 'd'.repeat(256) },
        [{ message: 'code_generator.description must be at most 255 characters', field: 'code_generator.description' }],
      ],
      ['a description not a string', { description: 5 }, [{ message: 'code_generator.description must be a string', field: 'code_generator.description' }]],
      [
        'a valid change beside a forbidden one',
        { status: 'inactive', prefix: 'X', colour: 'red' },
        [
          {
            message:
              'code_generator.prefix cannot be changed; only status, description, discount, minimum_basket, valid_from, valid_until, site_ids, max_redemptions_per_code, max_redemptions and max_redemptions_per_customer can',
            field: 'code_generator.prefix',
          },
          { message: 'code_generator.colour is not a known field', field: 'code_generator.colour' },
        ],
      ],
    ])('%s', async (_, fields, errors) => {
      const created = await create();
      const before = await snapshot(created.id);

      const response = await patchRaw(created.id, { code_generator: fields });

      expect(response.status).toBe(422);
      expect(response.json).toEqual({ errors });
      expect(await snapshot(created.id)).toEqual(before);
    });

    it('422 comes before 404: the body is checked before the generator is looked up', async () => {
      const response = await patchRaw(999_999_999_999, { code_generator: { prefix: 'X' } });
      expect(response.status).toBe(422);
    });
  });

  describe('other failures change nothing', () => {
    it.each([
      ['malformed JSON', '{"code_generator":', 'Request body is not valid JSON'],
      ['an empty body', '', 'Request body is required: a JSON object with a "code_generator" object'],
      ['a JSON array', '[]', 'Request body must be a JSON object with a "code_generator" object'],
      ['no code_generator key', '{"status":"inactive"}', 'Request body must be a JSON object with a "code_generator" object'],
    ])('400 for %s', async (_, body, message) => {
      const created = await create();
      const before = await snapshot(created.id);
      const response = await patchRaw(created.id, body);
      expect(response.status).toBe(400);
      expect(response.json.errors).toHaveLength(1);
      expect(response.json.errors[0].message).toBe(message);
      expect(await snapshot(created.id)).toEqual(before);
    });

    it('400 for a path id that is not a positive integer', async () => {
      for (const id of ['abc', '0', '-3', '2.0']) {
        const response = await patchRaw(id, { code_generator: { status: 'inactive' } });
        expect(response.status).toBe(400);
        expect(response.json).toEqual(badId);
      }
    });

    it('401 without a token', async () => {
      const created = await create();
      const before = await snapshot(created.id);
      const response = await call(ctx.api, 'core', 'PATCH', `/v1.0/codegen/${created.id}`, { body: { code_generator: { status: 'inactive' } } });
      expect(response.status).toBe(401);
      expect(response.json).toEqual(unauthorized);
      expect(await snapshot(created.id)).toEqual(before);
    });

    it('404 for a missing generator, also with If-Match', async () => {
      const created = await create();
      const missing = created.id + 1_000_000;
      for (const headers of [{}, { 'If-Match': '"x"' }]) {
        const response = await patch(missing, { code_generator: { status: 'inactive' } }, headers);
        expect(response.status).toBe(404);
        expect(response.json).toEqual({ errors: [{ message: `Code generator ${missing} not found` }] });
      }
    });

    it("404 for another account's generator, and it stays as it was", async () => {
      const created = await create();
      const before = await snapshot(created.id);
      const intruder = await newAccount();

      const response = await patch(created.id, { code_generator: { status: 'inactive' } }, {}, intruder.token);

      expect(response.status).toBe(404);
      expect(response.json).toEqual({ errors: [{ message: `Code generator ${created.id} not found` }] });
      expect(await snapshot(created.id)).toEqual(before);
      expect(await eventsOf(intruder.accountId)).toEqual([]);
    });

    it('413 for a body over 16 KiB', async () => {
      const created = await create();
      const before = await snapshot(created.id);
      const response = await patchRaw(created.id, { code_generator: { description: 'x'.repeat(17 * 1024) } });
      expect(response.status).toBe(413);
      expect(response.json).toEqual({ errors: [{ message: 'Request body exceeds 16384 bytes' }] });
      expect(await snapshot(created.id)).toEqual(before);
    });

    it('415 for a body with a non-JSON Content-Type', async () => {
      const created = await create();
      const before = await snapshot(created.id);
      const response = await patchRaw(created.id, JSON.stringify({ code_generator: { status: 'inactive' } }), { 'Content-Type': 'text/plain' });
      expect(response.status).toBe(415);
      expect(response.json).toEqual({ errors: [{ message: 'Content-Type must be application/json' }] });
      expect(await snapshot(created.id)).toEqual(before);
    });
  });

  it('keeps the tables exact: one generator, one created and one updated event', async () => {
    const created = await create();
    await patch(created.id, { code_generator: { status: 'inactive' } });
    await patch(created.id, { code_generator: { status: 'inactive' } });
    expect(await codeGeneratorsOf(ctx.account.accountId)).toHaveLength(1);
    expect((await eventsOf(ctx.account.accountId)).map((e) => e.type).sort()).toEqual(['code_generator.created', 'code_generator.updated']);
  });
});
