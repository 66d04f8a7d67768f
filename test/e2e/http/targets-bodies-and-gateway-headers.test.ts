import { describe, expect, it } from 'vitest';
import { call, UUID } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../../support/records.ts';

/**
 * Edges that hostile testing found: request targets routed exactly as sent, request bodies taken
 * as the bytes received, and the headers of answers the gateway gives itself.
 */
const ctx = useLocalApi();

const NO_ROUTE_CORE = { errors: [{ message: 'No route for this method and path' }] };
const noRoutePos = (requestId: string) => ({
  transaction: {
    errors: [{ message: 'No route for this method and path' }],
    display_messages: [{ message: 'No route for this method and path', message_id: 'not_found', message_content: { request_id: requestId }, priority: 1 }],
  },
});

async function oneEvent(): Promise<number> {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 1 } } }),
  );
  expect(created.status).toBe(201);
  const events = await eventsOf(ctx.account.accountId);
  return events.at(-1)!.id;
}

describe('request targets are routed exactly as sent, as API Gateway routes them', () => {
  it('//v1.0/events/{id} is no route: 404 in the core error shape (not a 502)', async () => {
    const id = await oneEvent();
    const response = await call(ctx.api, 'core', 'GET', `//v1.0/events/${id}`, { token: ctx.account.token, rawTarget: true });

    expect(response.status).toBe(404);
    expect(response.json).toEqual(NO_ROUTE_CORE);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('dot segments are not resolved: /v1.0/events/{a}/../{b} does not serve event b', async () => {
    const first = await oneEvent();
    const second = await oneEvent();
    for (const path of [`/v1.0/events/${first}/../${second}`, `/v1.0/events/./${second}`, `/v1.0/./events/${second}`, `/v1.0//events/${second}`]) {
      const response = await call(ctx.api, 'core', 'GET', path, { token: ctx.account.token, rawTarget: true });
      expect(response.status, path).toBe(404);
      expect(response.json, path).toEqual(NO_ROUTE_CORE);
    }
    // The same request to the route itself is served.
    const direct = await call(ctx.api, 'core', 'GET', `/v1.0/events/${second}`, { token: ctx.account.token });
    expect(direct.status).toBe(200);
  });

  it('//x/v2.0/voided_transactions is no route: 404 in the pos error shape, and nothing is voided', async () => {
    const body = { transaction: { site_id: 'S-1', pos_transaction_id: 'T-1' } };
    for (const path of ['//x/v2.0/voided_transactions', '//v2.0/voided_transactions', '/x/../v2.0/voided_transactions']) {
      const response = await call(ctx.api, 'pos', 'POST', path, { token: ctx.account.token, body, rawTarget: true });
      expect(response.status, path).toBe(404);
      const requestId = response.headers.get('x-request-id')!;
      expect(requestId).toMatch(UUID);
      expect(response.json, path).toEqual(noRoutePos(requestId));
    }
    expect(await voidsOf(ctx.account.accountId)).toEqual([]);
    expect(await eventsOf(ctx.account.accountId)).toEqual([]);
  });

  it('the query is split off at the first "?" and does not change the route', async () => {
    const id = await oneEvent();
    const response = await call(ctx.api, 'core', 'GET', `/v1.0/events/${id}?a=/../1`, { token: ctx.account.token, rawTarget: true });
    expect(response.status).toBe(200);
    expect(response.json.event.id).toBe(id);
  });
});

describe('request bodies are the bytes received', () => {
  const latin1 = (text: string) => Buffer.from(text, 'latin1');

  it('core: a body that is not UTF-8 (Latin-1 "Café") answers 400 and creates nothing', async () => {
    const body = latin1('{"code_generator":{"generation_type":"numeric","code_length":6,"store_id":1,"description":"Café"}}');
    const response = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body });

    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errors: [{ message: 'Request body is not valid UTF-8' }] });
    expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
  });

  it('pos: a body that is not UTF-8 answers 400 with a cashier message, and voids nothing', async () => {
    const body = latin1('{"transaction":{"site_id":"Café","pos_transaction_id":"1"}}');
    const response = await call(ctx.api, 'pos', 'POST', '/v2.0/voided_transactions', { token: ctx.account.token, body });

    expect(response.status).toBe(400);
    const requestId = response.headers.get('x-request-id')!;
    expect(response.json).toEqual({
      transaction: {
        errors: [{ message: 'Request body is not valid UTF-8' }],
        display_messages: [
          {
            message: "The till sent a void the service cannot read. Call support: the till's software must be fixed.",
            message_id: 'bad_request',
            message_content: { request_id: requestId },
            priority: 1,
          },
        ],
      },
    });
    expect(await voidsOf(ctx.account.accountId)).toEqual([]);
  });

  it('counts the size on the bytes received: 6 000 invalid bytes are a 400, not a 413 after repair', async () => {
    // Repaired, each 0xFF would become U+FFFD (3 bytes): 18 000 bytes, over the limit.
    const body = Buffer.concat([latin1('{"code_generator":{"description":"'), Buffer.alloc(6000, 0xff), latin1('"}}')]);
    expect(body.length).toBeLessThan(16 * 1024);
    const response = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body });

    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errors: [{ message: 'Request body is not valid UTF-8' }] });
  });

  it('keeps valid UTF-8 as sent, and allows exactly 16 384 bytes but not one more', async () => {
    const resource = { generation_type: 'numeric', code_length: 6, store_id: 1, description: 'Café' };
    const created = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body: { code_generator: resource } });
    expect(created.status).toBe(201);
    expect(created.json.code_generator.description).toBe('Café');

    // Two-byte characters, then spaces up to the size: the three base64 padding cases on the way.
    const text = JSON.stringify({ code_generator: { ...resource, description: 'é'.repeat(8000) } });
    for (const under of [0, 1, 2]) {
      const body = text + ' '.repeat(16 * 1024 - under - Buffer.byteLength(text));
      expect(Buffer.byteLength(body)).toBe(16 * 1024 - under);
      const inside = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body });
      // 8 000 characters is too long a description (422): the size check let the body through.
      expect(inside.status, `${16 * 1024 - under} bytes`).toBe(422);
      expect(inside.json).toEqual({ errors: [{ message: 'code_generator.description must be at most 255 characters', field: 'code_generator.description' }] });
    }
    const over = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', {
      token: ctx.account.token,
      body: text + ' '.repeat(16 * 1024 + 1 - Buffer.byteLength(text)),
    });
    expect(over.status).toBe(413);
    expect(over.json).toEqual({ errors: [{ message: 'Request body exceeds 16384 bytes' }] });
  });
});

describe("answers the gateway gives itself follow the functions' header rules", () => {
  it.each([
    ['no X-Request-Id', {}],
    ['a malformed X-Request-Id', { 'X-Request-Id': '-not/well formed' }],
    ['a well-formed X-Request-Id', { 'X-Request-Id': 'caller-id-1' }],
  ])('with %s: the gateway request id (never an echo), no-store, nosniff', async (_, headers) => {
    const response = await call(ctx.api, 'core', 'GET', '/v1.0/nothing', { headers });

    expect(response.status).toBe(404);
    expect(response.json).toEqual(NO_ROUTE_CORE);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});
