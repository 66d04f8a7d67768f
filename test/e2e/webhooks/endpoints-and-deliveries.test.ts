import '../../support/webhooks/env.ts';
import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { send, type CoreBody, type CoreQuery } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { useWebhookPipeline } from '../../support/local-webhooks.ts';
import { EVENT_TYPES } from '../../../functions/data/event-types.ts';

/**
 * Webhooks end to end: the endpoint routes over HTTP, and deliveries driven by DynamoDB Local's
 * stream through the local queue to a real receiver on 127.0.0.1 that verifies every one with
 * `standardwebhooks`. Retry schedule 1,1,1 s and a 1.5 s attempt time-out (test/support/webhooks/env.ts).
 */
const ctx = useLocalApi();
const pipeline = useWebhookPipeline();

const WHSEC = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
let paths = 0;
const newPath = () => `/hooks/${process.pid}-${++paths}`;

interface Created {
  id: number;
  url: string;
  secret: string;
  path: string;
  body: any;
}

async function register(fields: Omit<CoreBody<'createWebhookEndpoint'>['webhook_endpoint'], 'url'> = {}, token = ctx.account.token): Promise<Created> {
  const path = newPath();
  const response = await send(ctx.api, token, ({ core }) =>
    core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url: `${pipeline.receiver.url}${path}`, ...fields } } }),
  );
  expect(response.status, response.text).toBe(201);
  const endpoint = response.json.webhook_endpoint;
  pipeline.receiver.secrets(path, [endpoint.secret]);
  return { id: endpoint.id, url: endpoint.url, secret: endpoint.secret, path, body: response.json };
}

const createGenerator = async (token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator.id as number;
};

/** The account's latest events through the feed, to learn the ids the deliveries must carry. */
const events = async (token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) => core.GET('/v1.0/events'));
  return response.json.events as { id: number; type: string; resource_id: string; created_at: string }[];
};

const deliveries = async (id: number, token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) => core.GET('/v1.0/webhook_endpoints/{id}/deliveries', { params: { path: { id } } }));
  expect(response.status, response.text).toBe(200);
  return response.json.deliveries as any[];
};

const readEndpoint = (id: number, headers: { 'If-None-Match'?: string } = {}) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/webhook_endpoints/{id}', { params: { path: { id }, header: headers } }));
const listEndpoints = (query: CoreQuery<'listWebhookEndpoints'> = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/webhook_endpoints', { params: { query } }));
const createEndpoint = (endpoint: CoreBody<'createWebhookEndpoint'>['webhook_endpoint'], headers: { 'Idempotency-Key'?: string } = {}) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/webhook_endpoints', { params: { header: headers }, body: { webhook_endpoint: endpoint } }));
const deleteEndpoint = (id: number) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.DELETE('/v1.0/webhook_endpoints/{id}', { params: { path: { id } } }));
const retryDelivery = (id: number, eventId: number) =>
  send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry', { params: { path: { id, event_id: eventId } } }),
  );
const rotateSecret = (id: number) =>
  send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/webhook_endpoints/{id}/rotate_secret', { params: { path: { id } } }));

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook endpoint routes', () => {
  it('creates an endpoint: 201, Location, the secret once, defaults, no event written', async () => {
    const before = await events();
    const created = await register({ description: 'ERP' });
    const endpoint = created.body.webhook_endpoint;
    expect(Object.keys(endpoint)).toEqual(['id', 'url', 'event_types', 'description', 'status', 'secret', 'created_at', 'updated_at']);
    expect(endpoint).toMatchObject({ url: `${pipeline.receiver.url}${created.path}`, event_types: ['*'], description: 'ERP', status: 'enabled' });
    expect(endpoint.secret).toMatch(WHSEC);
    const keyBytes = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64').length;
    expect(keyBytes).toBeGreaterThanOrEqual(24);
    expect(keyBytes).toBeLessThanOrEqual(64);
    expect(endpoint.created_at).toMatch(RFC3339_MILLIS_UTC);
    expect(endpoint.updated_at).toBe(endpoint.created_at);
    expect(await events()).toEqual(before);

    const read = await readEndpoint(created.id);
    expect(read.status).toBe(200);
    const { secret: _secret, ...withoutSecret } = endpoint;
    expect(read.json).toEqual({ webhook_endpoint: withoutSecret });
    expect(read.text).not.toContain(created.secret);
    const etag = read.headers.get('etag')!;
    const again = await readEndpoint(created.id, { 'If-None-Match': etag });
    expect(again.status).toBe(304);
  });

  it('answers Location /v1.0/webhook_endpoints/{id}', async () => {
    const response = await createEndpoint({ url: 'https://hooks.example.com/tillgate', event_types: ['transaction.voided'] });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/v1.0/webhook_endpoints/${response.json.webhook_endpoint.id}`);
  });

  it('lists endpoints in ascending id order without secrets, in full pages', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await register());
    const first = await listEndpoints({ limit: 3 });
    expect(first.status).toBe(200);
    expect(first.json.webhook_endpoints.map((e: any) => e.id)).toEqual(made.slice(0, 3).map((e) => e.id));
    const second = await listEndpoints({ limit: 3, cursor: first.json.next_cursor });
    expect(second.json.webhook_endpoints.map((e: any) => e.id)).toEqual(made.slice(3).map((e) => e.id));
    expect(second.json.next_cursor).toBeNull();
    for (const made1 of made) {
      expect(first.text + second.text).not.toContain(made1.secret);
    }
    expect(first.text).not.toContain('"secret"');
  });

  it('refuses an 11th endpoint with 409, also when 14 creates race', async () => {
    const results = await Promise.all(Array.from({ length: 14 }, () => createEndpoint({ url: 'https://hooks.example.com/race' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(4);
    const conflict = results.find((r) => r.status === 409)!;
    expect(conflict.json).toEqual({ errors: [{ message: 'An account has at most 10 webhook endpoints: delete one before creating another' }] });
    const list = await listEndpoints();
    expect(list.json.webhook_endpoints).toHaveLength(10);
    // A delete frees a place.
    const id = list.json.webhook_endpoints[0].id;
    expect((await deleteEndpoint(id)).status).toBe(200);
    expect((await createEndpoint({ url: 'https://hooks.example.com/x' })).status).toBe(201);
  });

  it('replays an Idempotency-Key without the secret, and refuses the key with another body', async () => {
    const request = (url: string) => createEndpoint({ url }, { 'Idempotency-Key': 'erp-hook-1' });
    const first = await request('https://hooks.example.com/a');
    expect(first.status).toBe(201);
    const replay = await request('https://hooks.example.com/a');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const { secret, ...rest } = first.json.webhook_endpoint;
    expect(secret).toMatch(WHSEC);
    expect(replay.json).toEqual({ webhook_endpoint: rest });
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect((await request('https://hooks.example.com/b')).status).toBe(409);
    const list = await listEndpoints();
    expect(list.json.webhook_endpoints).toHaveLength(1);
  });

  it('validates fields with 422 naming them', async () => {
    const post = (fields: unknown) =>
      call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', { token: ctx.account.token, body: { webhook_endpoint: fields } });
    const cases: [unknown, string][] = [
      [{}, 'webhook_endpoint.url'],
      [{ url: 'ftp://hooks.example.com/' }, 'webhook_endpoint.url'],
      [{ url: 'not a url' }, 'webhook_endpoint.url'],
      [{ url: `https://hooks.example.com/${'a'.repeat(2048)}` }, 'webhook_endpoint.url'],
      [{ url: 'https://user:pw@hooks.example.com/' }, 'webhook_endpoint.url'],
      [{ url: 'https://hooks.example.com/', event_types: [] }, 'webhook_endpoint.event_types'],
      [{ url: 'https://hooks.example.com/', event_types: ['codes.issued', 'codes.issued'] }, 'webhook_endpoint.event_types'],
      [{ url: 'https://hooks.example.com/', event_types: ['codes.nope'] }, 'webhook_endpoint.event_types'],
      [{ url: 'https://hooks.example.com/', event_types: ['*', 'codes.issued'] }, 'webhook_endpoint.event_types'],
      [{ url: 'https://hooks.example.com/', description: 'x'.repeat(256) }, 'webhook_endpoint.description'],
      [{ url: 'https://hooks.example.com/', status: 'paused' }, 'webhook_endpoint.status'],
      [{ url: 'https://hooks.example.com/', secret: 'whsec_AAAA' }, 'webhook_endpoint.secret'],
      [{ url: 'https://hooks.example.com/', id: 5 }, 'webhook_endpoint.id'],
      [{ url: 'https://hooks.example.com/', color: 'red' }, 'webhook_endpoint.color'],
    ];
    for (const [fields, field] of cases) {
      const response = await post(fields);
      expect(response.status, JSON.stringify(fields)).toBe(422);
      expect(
        response.json.errors.map((e: any) => e.field),
        JSON.stringify(fields),
      ).toContain(field);
    }
  });

  it('lists every problem of a body with 422, those of the schema and of the URL and event_types rules together, one per field', async () => {
    const post = (fields: unknown) =>
      call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', { token: ctx.account.token, body: { webhook_endpoint: fields } });
    const MIXED_TYPES = 'webhook_endpoint.event_types must be ["*"] alone or a list of event types without "*"';
    const cases: [unknown, { field: string; message: string }[]][] = [
      // An unknown key and a URL the rules refuse.
      [
        { url: 'ftp://hooks.example.com/', color: 'red' },
        [
          { field: 'webhook_endpoint.color', message: 'webhook_endpoint.color is not a known field' },
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must be an https:// or http:// URL' },
        ],
      ],
      // A wrong type in another field, a URL and event types the rules refuse.
      [
        { url: 'https://user:pw@hooks.example.com/', event_types: ['*', 'codes.issued'], description: 7 },
        [
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must not contain a user name or password' },
          { field: 'webhook_endpoint.event_types', message: MIXED_TYPES },
          { field: 'webhook_endpoint.description', message: 'webhook_endpoint.description must be a string' },
        ],
      ],
      // Keys that must not be sent first, in the client's order; then the fields in their order.
      [
        { status: 'paused', color: 'red', url: 'https://10.0.0.1/', id: 5, event_types: ['*', 'codes.issued'] },
        [
          { field: 'webhook_endpoint.color', message: 'webhook_endpoint.color is not a known field' },
          { field: 'webhook_endpoint.id', message: 'webhook_endpoint.id is read-only and cannot be set' },
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must not point at a private address (10.0.0.1)' },
          { field: 'webhook_endpoint.event_types', message: MIXED_TYPES },
          { field: 'webhook_endpoint.status', message: 'webhook_endpoint.status must be one of "enabled", "disabled"' },
        ],
      ],
      // A field its schema refuses is not judged by the rules as well: one entry for each.
      [
        { url: `ftp://hooks.example.com/${'a'.repeat(2048)}`, event_types: ['*', 'codes.nope'], color: 'red' },
        [
          { field: 'webhook_endpoint.color', message: 'webhook_endpoint.color is not a known field' },
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must be at most 2048 characters' },
          {
            field: 'webhook_endpoint.event_types',
            message: `webhook_endpoint.event_types must be one of ${[...EVENT_TYPES, '*'].map((type) => `"${type}"`).join(', ')}`,
          },
        ],
      ],
    ];
    for (const [fields, errors] of cases) {
      const response = await post(fields);
      const label = JSON.stringify(fields).slice(0, 200);
      expect(response.status, label).toBe(422);
      expect(response.json.errors, label).toEqual(errors);
    }
    const list = await listEndpoints();
    expect(list.json.webhook_endpoints).toEqual([]);
  });

  it('lists every problem of a PATCH body with 422 the same way, and changes nothing', async () => {
    const created = await register();
    const patch = (fields: unknown) =>
      call(ctx.api, 'core', 'PATCH', `/v1.0/webhook_endpoints/${created.id}`, { token: ctx.account.token, body: { webhook_endpoint: fields } });
    const cases: [unknown, { field: string; message: string }[]][] = [
      [
        { url: 'https://10.0.0.1/', created_at: 'x' },
        [
          { field: 'webhook_endpoint.created_at', message: 'webhook_endpoint.created_at is read-only and cannot be set' },
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must not point at a private address (10.0.0.1)' },
        ],
      ],
      [
        { color: 'red', event_types: ['*', 'codes.issued'], status: 'paused', url: 'not a url' },
        [
          { field: 'webhook_endpoint.color', message: 'webhook_endpoint.color is not a known field' },
          { field: 'webhook_endpoint.url', message: 'webhook_endpoint.url must be an absolute https:// or http:// URL' },
          { field: 'webhook_endpoint.event_types', message: 'webhook_endpoint.event_types must be ["*"] alone or a list of event types without "*"' },
          { field: 'webhook_endpoint.status', message: 'webhook_endpoint.status must be one of "enabled", "disabled"' },
        ],
      ],
    ];
    for (const [fields, errors] of cases) {
      const response = await patch(fields);
      expect(response.status, JSON.stringify(fields)).toBe(422);
      expect(response.json.errors, JSON.stringify(fields)).toEqual(errors);
    }
    const read = await readEndpoint(created.id);
    expect(read.json.webhook_endpoint).toEqual({ ...created.body.webhook_endpoint, secret: undefined });
  });

  it('changes fields with PATCH and If-Match, 412 on a stale tag, nothing on a no-op', async () => {
    const created = await register();
    const read = await readEndpoint(created.id);
    const etag = read.headers.get('etag')!;
    const patch = (body: unknown, headers: Record<string, string> = {}) =>
      call(ctx.api, 'core', 'PATCH', `/v1.0/webhook_endpoints/${created.id}`, { token: ctx.account.token, body: { webhook_endpoint: body }, headers });
    const noop = await patch({ status: 'enabled' });
    expect(noop.status).toBe(200);
    expect(noop.text).toBe(read.text);
    const changed = await patch({ description: 'Back office', event_types: ['codes.issued'] }, { 'If-Match': etag });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.webhook_endpoint).toMatchObject({ description: 'Back office', event_types: ['codes.issued'] });
    expect(changed.json.webhook_endpoint.updated_at > read.json.webhook_endpoint.updated_at).toBe(true);
    expect(changed.text).not.toContain('secret');
    const stale = await patch({ description: 'x' }, { 'If-Match': etag });
    expect(stale.status).toBe(412);
    expect((await patch({ url: 'https://10.0.0.1/' })).status).toBe(422);
    expect((await patch({ created_at: 'x' })).status).toBe(422);
  });

  it('deletes with a one-space 200, then 404; 404 across accounts; 400 on a bad id', async () => {
    const created = await register();
    const other = await newAccount();
    for (const [method, path] of [
      ['GET', `/v1.0/webhook_endpoints/${created.id}`],
      ['PATCH', `/v1.0/webhook_endpoints/${created.id}`],
      ['DELETE', `/v1.0/webhook_endpoints/${created.id}`],
      ['POST', `/v1.0/webhook_endpoints/${created.id}/rotate_secret`],
      ['GET', `/v1.0/webhook_endpoints/${created.id}/deliveries`],
    ] as const) {
      const response = await call(ctx.api, 'core', method, path, {
        token: other.token,
        ...(method === 'PATCH' ? { body: { webhook_endpoint: { description: 'x' } } } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect((await listEndpoints({}, other.token)).json.webhook_endpoints).toEqual([]);
    const deleted = await deleteEndpoint(created.id);
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe(' ');
    expect((await deleteEndpoint(created.id)).status).toBe(404);
    expect((await readEndpoint(created.id)).status).toBe(404);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/webhook_endpoints/0', { token: ctx.account.token })).status).toBe(400);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/webhook_endpoints/01', { token: ctx.account.token })).status).toBe(400);
    expect((await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints/7/deliveries/x/retry', { token: ctx.account.token })).status).toBe(400);
  });
});

describe('deliveries', () => {
  it('delivers each event type to the endpoints that subscribe to it, signed, with the event as data', async () => {
    const all = await register();
    const created = await register({ event_types: ['code_generator.created'] });
    const issued = await register({ event_types: ['codes.issued', 'code_generator.updated'] });
    const voided = await register({ event_types: ['transaction.voided'] });
    const started = Date.now();
    const generator = await createGenerator();
    expect(
      (await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generator } }, body: { count: 2 } })))
        .status,
    ).toBe(201);
    expect(
      (
        await send(ctx.api, ctx.account.token, ({ core }) =>
          core.PATCH('/v1.0/codegen/{id}', { params: { path: { id: generator } }, body: { code_generator: { description: 'x' } } }),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await send(ctx.api, ctx.account.token, ({ pos }) =>
          pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 's/1', pos_transaction_id: 'T 1' } } }),
        )
      ).status,
    ).toBe(200);
    const feed = await events();
    expect(feed.map((e) => e.type)).toEqual(['code_generator.created', 'codes.issued', 'code_generator.updated', 'transaction.voided']);

    const toAll = await pipeline.receiver.waitFor(all.path, 4);
    await pipeline.receiver.waitFor(created.path, 1);
    await pipeline.receiver.waitFor(issued.path, 2);
    await pipeline.receiver.waitFor(voided.path, 1);
    await new Promise((r) => setTimeout(r, 500)); // nothing more arrives
    const byId = (list: typeof toAll) => list.map((r) => Number(r.headers['webhook-id'])).sort((a, b) => a - b);
    expect(byId(pipeline.receiver.on(all.path))).toEqual(feed.map((e) => e.id));
    expect(byId(pipeline.receiver.on(created.path))).toEqual([feed[0]!.id]);
    expect(byId(pipeline.receiver.on(issued.path))).toEqual([feed[1]!.id, feed[2]!.id]);
    expect(byId(pipeline.receiver.on(voided.path))).toEqual([feed[3]!.id]);

    for (const delivery of [
      ...pipeline.receiver.on(all.path),
      ...pipeline.receiver.on(created.path),
      ...pipeline.receiver.on(issued.path),
      ...pipeline.receiver.on(voided.path),
    ]) {
      expect(delivery.verifiedWith, delivery.path).toHaveLength(1);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const event = feed.find((e) => String(e.id) === delivery.headers['webhook-id'])!;
      expect(delivery.json).toEqual({ type: event.type, timestamp: event.created_at, data: event });
      expect(Object.keys(delivery.json)).toEqual(['type', 'timestamp', 'data']);
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) * 1000 - delivery.at)).toBeLessThan(2000);
    }
    // The first attempt leaves within 2 seconds of the commit.
    const firstArrival = Math.min(...toAll.map((r) => r.at));
    expect(firstArrival - started).toBeLessThan(4000);

    const list = await deliveries(all.id);
    expect(list.map((d) => d.event_id)).toEqual(feed.map((e) => e.id));
    for (const [i, delivery] of list.entries()) {
      expect(delivery).toEqual({
        event_id: feed[i]!.id,
        event_type: feed[i]!.type,
        status: 'succeeded',
        attempts: 1,
        last_attempt_at: expect.stringMatching(RFC3339_MILLIS_UTC),
        last_response_status: 204,
        next_attempt_at: null,
      });
    }
  });

  it("never delivers another account's events, nor events from before the endpoint existed", async () => {
    await createGenerator();
    const mine = await register();
    const other = await newAccount();
    const theirs = await register({}, other.token);
    await createGenerator(other.token);
    await pipeline.receiver.waitFor(theirs.path, 1);
    await new Promise((r) => setTimeout(r, 700));
    expect(pipeline.receiver.on(mine.path)).toEqual([]);
    expect(await deliveries(mine.id)).toEqual([]);
  });

  it('retries a 500 with the same webhook-id, then succeeds; acknowledging the event changes nothing', async () => {
    const endpoint = await register();
    pipeline.receiver.behave(endpoint.path, { status: 500 });
    await createGenerator();
    const [event] = await events();
    expect((await send(ctx.api, ctx.account.token, ({ core }) => core.DELETE('/v1.0/events/{id}', { params: { path: { id: event!.id } } }))).status).toBe(200);
    await pipeline.receiver.waitFor(endpoint.path, 2);
    const pending = await deliveries(endpoint.id);
    expect(pending[0]).toMatchObject({ status: 'pending', last_response_status: 500 });
    expect(pending[0].next_attempt_at).toMatch(RFC3339_MILLIS_UTC);
    pipeline.receiver.behave(endpoint.path, { status: 200 });
    const attempts = await pipeline.receiver.waitFor(endpoint.path, 3);
    expect(new Set(attempts.map((a) => a.headers['webhook-id']))).toEqual(new Set([String(event!.id)]));
    expect(attempts.every((a) => a.verifiedWith.length === 1)).toBe(true);
    const done = await until(
      () => deliveries(endpoint.id),
      (list) => list[0]?.status === 'succeeded',
    );
    expect(done[0]).toMatchObject({ attempts: 3, last_response_status: 200, next_attempt_at: null });
  });

  it('fails a delivery after the last retry (time-outs and redirects are failures), and the retry route sends it again', async () => {
    const endpoint = await register();
    pipeline.receiver.behave(endpoint.path, 'hang');
    await createGenerator();
    const [event] = await events();
    await pipeline.receiver.waitFor(endpoint.path, 2, 10_000);
    pipeline.receiver.behave(endpoint.path, { status: 302, headers: { Location: `${pipeline.receiver.url}/elsewhere` } });
    const failed = await until(
      () => deliveries(endpoint.id),
      (list) => list[0]?.status === 'failed',
      20_000,
    );
    expect(failed[0]).toMatchObject({ event_id: event!.id, status: 'failed', attempts: 4, next_attempt_at: null });
    expect(pipeline.receiver.on(`/elsewhere`)).toEqual([]);
    expect(pipeline.receiver.on(endpoint.path)).toHaveLength(4);

    pipeline.receiver.behave(endpoint.path, { status: 200 });
    const retry = await retryDelivery(endpoint.id, event!.id);
    expect(retry.status, retry.text).toBe(202);
    expect(retry.json.delivery).toMatchObject({ event_id: event!.id, status: 'pending', attempts: 4 });
    const all = await pipeline.receiver.waitFor(endpoint.path, 5);
    expect(all[4]!.headers['webhook-id']).toBe(String(event!.id));
    expect(all[4]!.verifiedWith).toHaveLength(1);
    expect(Number(all[4]!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(all[0]!.headers['webhook-timestamp']));
    await until(
      () => deliveries(endpoint.id),
      (list) => list[0]?.status === 'succeeded',
    );
    const missing = await retryDelivery(endpoint.id, event!.id + 1000000);
    expect(missing.status).toBe(404);
  });

  it('retries after a refused connection with the same webhook-id', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    const path = '/late';
    const response = await createEndpoint({ url: `http://127.0.0.1:${port}${path}` });
    const id = response.json.webhook_endpoint.id;
    await createGenerator();
    await until(
      () => deliveries(id),
      (list) => list[0]?.attempts >= 1,
    );
    const [first] = await deliveries(id);
    expect(first).toMatchObject({ status: 'pending', last_response_status: null });
  });

  it('410 Gone disables the endpoint at once; a disabled endpoint gets nothing, even after it is enabled again', async () => {
    const endpoint = await register();
    pipeline.receiver.behave(endpoint.path, { status: 410 });
    await createGenerator();
    await pipeline.receiver.waitFor(endpoint.path, 1);
    const read = await until(
      () => readEndpoint(endpoint.id),
      (r) => r.json.webhook_endpoint.status === 'disabled',
    );
    expect(read.json.webhook_endpoint.updated_at > endpoint.body.webhook_endpoint.updated_at).toBe(true);
    const list = await until(
      () => deliveries(endpoint.id),
      (l) => l[0]?.status === 'failed',
    );
    expect(list[0]).toMatchObject({ attempts: 1, last_response_status: 410 });
    const [event] = await events();
    const retry = await retryDelivery(endpoint.id, event!.id);
    expect(retry.status).toBe(409);

    pipeline.receiver.behave(endpoint.path, { status: 200 });
    await createGenerator(); // committed while disabled: never sent
    await new Promise((r) => setTimeout(r, 700));
    const enabled = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.PATCH('/v1.0/webhook_endpoints/{id}', { params: { path: { id: endpoint.id } }, body: { webhook_endpoint: { status: 'enabled' } } }),
    );
    expect(enabled.status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    expect(pipeline.receiver.on(endpoint.path)).toHaveLength(1);
    await createGenerator(); // after: sent
    await pipeline.receiver.waitFor(endpoint.path, 2);
  });

  it('sends nothing to a deleted endpoint, its pending retries included', async () => {
    const endpoint = await register();
    pipeline.receiver.behave(endpoint.path, { status: 503 });
    await createGenerator();
    await pipeline.receiver.waitFor(endpoint.path, 1);
    expect((await deleteEndpoint(endpoint.id)).status).toBe(200);
    await createGenerator();
    await new Promise((r) => setTimeout(r, 2500));
    expect(pipeline.receiver.on(endpoint.path)).toHaveLength(1);
  });

  it('signs with both secrets after a rotation; the new secret is shown once', async () => {
    const endpoint = await register();
    const rotated = await rotateSecret(endpoint.id);
    expect(rotated.status, rotated.text).toBe(200);
    const secret = rotated.json.webhook_endpoint.secret;
    expect(secret).toMatch(WHSEC);
    expect(secret).not.toBe(endpoint.secret);
    const { secret: _s, ...rest } = rotated.json.webhook_endpoint;
    const read = await readEndpoint(endpoint.id);
    expect(read.json.webhook_endpoint).toEqual(rest);
    pipeline.receiver.secrets(endpoint.path, [secret, endpoint.secret]);
    await createGenerator();
    const [delivery] = await pipeline.receiver.waitFor(endpoint.path, 1);
    expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(delivery!.verifiedWith).toEqual([secret, endpoint.secret]);
    expect(
      (
        await send(ctx.api, ctx.account.token, ({ core }) =>
          core.POST('/v1.0/webhook_endpoints/{id}/rotate_secret', { params: { path: { id: endpoint.id } }, body: {} }),
        )
      ).status,
    ).toBe(200);
    expect(
      (await call(ctx.api, 'core', 'POST', `/v1.0/webhook_endpoints/${endpoint.id}/rotate_secret`, { token: ctx.account.token, body: { url: 'x' } })).status,
    ).toBe(422);
  });
});

describe('webhook routes refuse what they must, in the core envelope', () => {
  it('answers 401, 400, 404, 413, 415 and 422 on every webhook route as documented', async () => {
    const created = await register();
    const generator = await createGenerator();
    expect(generator).toBeGreaterThan(0);
    const [event] = await until(
      () => deliveries(created.id),
      (list) => list.length === 1,
    );
    const webhookRoutes = (await import('../../../functions/routes.ts')).routes.filter((r) => r.path.startsWith('/v1.0/webhook_endpoints'));
    expect(webhookRoutes).toHaveLength(8);
    const fill = (path: string, id: number | string, eventId: number | string = event.event_id) =>
      path.replace('{id}', String(id)).replace('{event_id}', String(eventId));
    const bodyOf = (operationId: string) =>
      operationId === 'createWebhookEndpoint'
        ? { webhook_endpoint: { url: 'https://hooks.example.com/' } }
        : operationId === 'updateWebhookEndpoint'
          ? { webhook_endpoint: { description: 'x' } }
          : undefined;
    for (const route of webhookRoutes) {
      const path = fill(route.path, created.id);
      const body = bodyOf(route.operationId);
      const unauthorized = await call(ctx.api, 'core', route.method, path, { body });
      expect(unauthorized.status, route.operationId).toBe(401);
      if (route.path.includes('{id}')) {
        expect((await call(ctx.api, 'core', route.method, fill(route.path, 'abc'), { token: ctx.account.token, body })).status, route.operationId).toBe(400);
        const absent = await call(ctx.api, 'core', route.method, fill(route.path, created.id + 10_000_000), { token: ctx.account.token, body });
        expect(absent.status, route.operationId).toBe(404);
        expect(absent.json.errors[0].message).toMatch(/^Webhook endpoint \d+ not found$/);
      } else if (route.method === 'GET') {
        expect((await call(ctx.api, 'core', 'GET', `${path}?limit=0`, { token: ctx.account.token })).status).toBe(400);
      } else {
        const malformed = await call(ctx.api, 'core', 'POST', path, { token: ctx.account.token, body: '{"webhook_endpoint":' });
        expect(malformed.status).toBe(400);
        expect(malformed.json).toEqual({ errors: [{ message: 'Request body is not valid JSON' }] });
      }
      if (route.method === 'GET' && route.path.endsWith('deliveries')) {
        expect((await call(ctx.api, 'core', 'GET', `${path}?cursor=nope`, { token: ctx.account.token })).status).toBe(400);
      }
      if (route.method === 'POST' || route.method === 'PATCH') {
        const tooLarge = await call(ctx.api, 'core', route.method, path, { token: ctx.account.token, body: `{"x":"${'x'.repeat(16 * 1024)}"}` });
        expect(tooLarge.status, route.operationId).toBe(413);
        const text = await call(ctx.api, 'core', route.method, path, { token: ctx.account.token, body: '{}', headers: { 'Content-Type': 'text/plain' } });
        expect(text.status, route.operationId).toBe(415);
        const unknown = await call(ctx.api, 'core', route.method, path, {
          token: ctx.account.token,
          body: body ? { webhook_endpoint: { ...(body.webhook_endpoint as object), colour: 'red' } } : { colour: 'red' },
        });
        expect(unknown.status, route.operationId).toBe(422);
        expect(JSON.stringify(unknown.json.errors)).toContain('colour');
      }
    }
  });
});
